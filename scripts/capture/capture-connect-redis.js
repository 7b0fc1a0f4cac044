// connect-redis + express-session capture: sessions created by real HTTP
// requests to an express app on loopback, with the default store (prefix
// "sess:", TTL from the cookie or 1 day), a session with a cookie maxAge, a
// destroyed session, and a second store with a custom prefix and disableTTL.
const express = require("express");
const session = require("express-session");
const { RedisStore } = require("connect-redis");
const { createClient } = require("redis");
const dump = require("./dump");

const version = `connect-redis ${dump.version("connect-redis")}, express-session ${dump.version("express-session")}`;

async function main() {
  const client = createClient({ url: `redis://127.0.0.1:${process.env.REDIS_PORT}` });
  await client.connect();
  const app = express();
  const def = session({ store: new RedisStore({ client }), secret: "capture-only", resave: false, saveUninitialized: false, name: "sid" });
  const keep = session({ store: new RedisStore({ client, prefix: "myapp:sess:", disableTTL: true }), secret: "capture-only", resave: false, saveUninitialized: false, name: "keep" });
  app.get("/login", def, (req, res) => { req.session.user = "alice"; res.send("ok"); });
  app.get("/remember", def, (req, res) => { req.session.cookie.maxAge = 7 * 24 * 3600 * 1000; req.session.user = "bob"; res.send("ok"); });
  app.get("/logout", def, (req, res) => { req.session.destroy(() => res.send("bye")); });
  app.get("/cart", keep, (req, res) => { req.session.cart = [1, 2]; res.send("ok"); });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const get = (path, cookie) => fetch(base + path, { headers: cookie ? { cookie } : {} });

  await get("/login");
  await get("/remember");
  const r = await get("/login");
  const cookie = r.headers.get("set-cookie").split(";")[0];
  await get("/logout", cookie); // this session is deleted again
  await get("/cart");

  dump("connect-redis", version);
  server.close();
  await client.quit();
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
