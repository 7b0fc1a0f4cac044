// @socket.io/redis-streams-adapter capture: two socket.io servers sharing the
// default stream, room broadcasts and server-side emits through it, a client
// whose transport drops (its session is persisted for connection state
// recovery), and a third server with a custom stream name, two streams and a
// custom session prefix.
const { createServer } = require("http");
const { Server } = require("socket.io");
const { io: connect } = require("socket.io-client");
const { createClient } = require("redis");
const { createAdapter } = require("@socket.io/redis-streams-adapter");
const dump = require("./dump");

const url = `redis://127.0.0.1:${process.env.REDIS_PORT}`;
const version = `@socket.io/redis-streams-adapter ${dump.version("@socket.io/redis-streams-adapter")}, socket.io ${dump.version("socket.io")}`;
const clients = [];

async function server(opts) {
  const redis = createClient({ url });
  await redis.connect();
  clients.push(redis);
  const http = createServer();
  const io = new Server(http, { adapter: createAdapter(redis, opts), connectionStateRecovery: { maxDisconnectionDuration: 120000 } });
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  return { io, http, port: http.address().port };
}

const once = (emitter, ev) => new Promise((r) => emitter.once(ev, r));

async function main() {
  const a = await server({});
  const b = await server({});
  const c = await server({ streamName: "app-events", streamCount: 2, sessionKeyPrefix: "app:sio:" });
  for (const s of [a, c]) {
    s.io.on("connection", (socket) => { socket.join("room-1"); socket.emit("hello", "welcome"); });
  }
  for (const s of [a, c]) {
    const sock = connect(`http://127.0.0.1:${s.port}`, { transports: ["websocket"] });
    await once(sock, "hello");
    s.io.to("room-1").emit("news", { n: 1 });
    b.io.to("room-1").emit("news", { n: 2 });
    b.io.serverSideEmit("ping", 1);
    await once(sock, "news");
    const gone = once(s.io.sockets.sockets.values().next().value, "disconnect");
    sock.io.engine.close(); // transport close: the session is kept for recovery
    await gone;
    sock.io.reconnection(false);
    sock.close();
  }
  const r = clients[0];
  for (let i = 0; i < 200 && (await r.keys("*sio:session:*")).length < 2; i++) {
    await new Promise((res) => setTimeout(res, 10)); // persistSession is fire-and-forget
  }
  dump("socket.io-streams", version);
  for (const s of [a, b, c]) s.io.close();
  await Promise.all(clients.map((x) => x.quit().catch(() => {})));
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
