// rate-limiter-flexible capture: RateLimiterRedis counters with the default
// prefix, a custom prefix, a limiter with no expiry (duration 0), a blocked
// key (blockDuration), penalty/reward, and a rejected consume.
const Redis = require("ioredis");
const { RateLimiterRedis } = require("rate-limiter-flexible");
const dump = require("./dump");

async function main() {
  const storeClient = new Redis({ host: "127.0.0.1", port: Number(process.env.REDIS_PORT) });
  const api = new RateLimiterRedis({ storeClient, points: 10, duration: 60 });                 // rlflx:…
  const login = new RateLimiterRedis({ storeClient, keyPrefix: "login", points: 3, duration: 900, blockDuration: 3600 });
  const quota = new RateLimiterRedis({ storeClient, keyPrefix: "quota", points: 1000, duration: 0 }); // never expires

  await api.consume("192.0.2.1");
  await api.consume("192.0.2.1", 2);
  await api.consume("user:42");
  await api.penalty("user:42", 3);
  await api.reward("user:42", 1);
  for (let i = 0; i < 4; i++) {
    try { await login.consume("alice@example.com"); } catch (rejected) { /* over the limit: blocked */ }
  }
  await login.consume("bob@example.com");
  await quota.consume("tenant-7", 5);
  await api.block("198.51.100.9", 120);
  dump("rate-limiter-flexible", dump.version("rate-limiter-flexible"));
  storeClient.disconnect();
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
