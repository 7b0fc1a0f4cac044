// @socket.io/redis-adapter (classic Pub/Sub) capture: the channels two
// socket.io servers use on namespaces "/" and "/chat": broadcasts, room
// broadcasts, serverSideEmit with an ack and fetchSockets (requests and
// responses), then publishOnSpecificResponseChannel. A monitor client
// PSUBSCRIBEs "*" to record every channel published to; at the end the
// script records PUBSUB CHANNELS (SUBSCRIBE) and the servers' PSUBSCRIBE
// globs (which Redis does not list: the script reads them off each adapter). Output: testdata/frameworks/socket.io.channels.txt,
// one "published|subscribed|psubscribed <name>" a line, sorted.
const { createServer } = require("http");
const fs = require("fs");
const path = require("path");
const { Server } = require("socket.io");
const { io: connect } = require("socket.io-client");
const { createClient } = require("redis");
const { createAdapter } = require("@socket.io/redis-adapter");

const url = `redis://127.0.0.1:${process.env.REDIS_PORT}`;
const clients = [];
const published = new Set();

async function redis() {
  const c = createClient({ url });
  await c.connect();
  clients.push(c);
  return c;
}

async function server(opts) {
  const pub = await redis();
  const sub = pub.duplicate();
  await sub.connect();
  clients.push(sub);
  const http = createServer();
  const io = new Server(http, { adapter: createAdapter(pub, sub, opts) });
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  return { io, http, port: http.address().port };
}

const once = (emitter, ev) => new Promise((r) => emitter.once(ev, r));
const version = (p) => require(path.join(process.env.NODE_PATH, p, "package.json")).version;

async function main() {
  const mon = await redis();
  await mon.pSubscribe("*", (_msg, channel) => published.add(channel), true);
  const a = await server({});
  const b = await server({ publishOnSpecificResponseChannel: true });
  for (const s of [a, b]) {
    for (const nsp of ["/", "/chat"]) {
      s.io.of(nsp).on("connection", (socket) => { socket.join("room-1"); socket.emit("hello", nsp); });
      s.io.of(nsp).on("ping", (n, ack) => ack && ack(n));
    }
  }
  for (const nsp of ["/", "/chat"]) {
    const sock = connect(`http://127.0.0.1:${a.port}${nsp}`, { transports: ["websocket"] });
    await once(sock, "hello");
    const got = once(sock, "news");
    b.io.of(nsp).to("room-1").emit("news", 1); // room broadcast from the other server
    await got;
    const all = once(sock, "all");
    b.io.of(nsp).emit("all", 2); // namespace broadcast
    await all;
    await b.io.of(nsp).fetchSockets(); // b asks, a answers on the shared response channel
    await a.io.of(nsp).fetchSockets(); // a asks, b answers on a's specific response channel
    await new Promise((r) => a.io.of(nsp).serverSideEmit("ping", 3, () => r()));
    sock.close();
  }
  const pubsub = clients[1];
  const channels = await pubsub.sendCommand(["PUBSUB", "CHANNELS"]);
  const lines = [];
  for (const c of published) lines.push(`published ${c}`);
  for (const c of channels) lines.push(`subscribed ${c}`);
  // The servers' PSUBSCRIBE globs are not listed by Redis: record what each
  // adapter's constructor subscribed (the adapter keeps it as .channel + "*").
  for (const s of [a, b]) for (const nsp of ["/", "/chat"]) lines.push(`psubscribed ${s.io.of(nsp).adapter.channel}*`);
  const out = [...new Set(lines)].sort();
  const header = `# @socket.io/redis-adapter ${version("@socket.io/redis-adapter")}, socket.io ${version("socket.io")}, redis ${version("redis")}: scripts/capture/capture-socket.io.sh`;
  fs.writeFileSync(path.join(process.env.OUT_DIR, "socket.io.channels.txt"), header + "\n" + out.join("\n") + "\n");
  for (const s of [a, b]) s.io.close();
  await Promise.all(clients.map((x) => x.quit().catch(() => {})));
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
