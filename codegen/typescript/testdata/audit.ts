// Writes a key of every live family of the repository's keys.yaml through
// the generated accessors, checks each key's TTL against its policy, the
// refusals that send nothing, and a persistent write clearing a TTL; the Go
// test then audits the server. Environment: KEYREG_CLIENT, KEYREG_ADDR.
import * as redisMod from "./root_redis.js";
import * as ioredisMod from "./root_ioredis.js";
import { createClient } from "redis";
import { Redis } from "ioredis";

type Mod = typeof redisMod;
const clientName = process.env.KEYREG_CLIENT!;
const [host, port] = process.env.KEYREG_ADDR!.split(":") as [string, string];
const m: Mod = (clientName === "redis" ? redisMod : ioredisMod) as unknown as Mod;
function fail(msg: string): never {
  throw new Error(msg);
}

// raw runs a command outside the generated code, to look at the server.
let raw: (args: string[]) => Promise<unknown>;
let c: redisMod.KeyregClient;
let close: () => Promise<unknown>;
if (clientName === "redis") {
  const r = createClient({ url: `redis://${host}:${port}` });
  await r.connect();
  c = r;
  raw = (args) => r.sendCommand(args);
  close = () => r.quit();
} else {
  const r = new Redis({ host, port: Number(port) });
  const typed: ioredisMod.KeyregClient = r;
  c = typed as never;
  raw = (args) => r.call(args[0]!, args.slice(1));
  close = () => r.quit();
}

const sessionID = "0e5b2a9c-8f1e-4c3b-9d2a-1b2c3d4e5f60";
const roomID = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
const hexToken = "9f86d081884c7d659a2feaa0c55ad015";
const sha256Hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const when = "2026-03-01T12:00:00Z";
const written: [string, redisMod.TTLPolicy][] = [];
const wrote = (key: string, policy: redisMod.TTLPolicy) => written.push([key, policy]);

await m.setUserSession(c, sessionID, { user_id: 42, created_at: when, expires_at: "2026-03-02T12:00:00Z", csrf_token: sha256Hex, auth_method: "passkey", roles: ["admin"], ip: "192.0.2.1" });
wrote(m.buildUserSession(sessionID), m.USER_SESSION_TTL_POLICY);
const short = sessionID.replace("0e5b", "1e5b");
await m.setUserSession(c, short, { user_id: 7, created_at: when, expires_at: when, csrf_token: sha256Hex, auth_method: "sso" }, 3_600_000);
wrote(m.buildUserSession(short), m.USER_SESSION_TTL_POLICY);
await m.setEmailVerification(c, hexToken, { user_id: 42, email: "ada@example.com" });
wrote(m.buildEmailVerification(hexToken), m.EMAIL_VERIFICATION_TTL_POLICY);
await m.setProductCache(c, 1001, { id: 1001, sku: "TSHIRT-M", title: "T-shirt", price: { amount: 1999, currency: "EUR" }, in_stock: true, updated_at: when, category_ids: [3, 5] });
wrote(m.buildProductCache(1001), m.PRODUCT_CACHE_TTL_POLICY);
await m.setHtmlFragmentCache(c, "header", "de-DE", "<nav>Start</nav>");
wrote(m.buildHtmlFragmentCache("header", "de-DE"), m.HTML_FRAGMENT_CACHE_TTL_POLICY);
await m.setIdempotencyKey(c, 9, sessionID, { state: "in_flight", request_hash: sha256Hex, created_at: when });
wrote(m.buildIdempotencyKey(9, sessionID), m.IDEMPOTENCY_KEY_TTL_POLICY);
await m.setRateLimit(c, "cafe01", 29_500_000, 3);
wrote(m.buildRateLimit("cafe01", 29_500_000), m.RATE_LIMIT_TTL_POLICY);
if (Number(await m.incrRateLimit(c, "cafe02", 29_500_000)) !== 1) fail("incr");
if (Number(await m.incrByRateLimit(c, "cafe02", 29_500_000, 2n ** 60n)) !== Number(2n ** 60n + 1n)) fail("incrBy");
if (BigInt(await m.incrByRateLimit(c, "cafe02", 29_500_000, 0)) !== 2n ** 60n + 1n) fail("incrBy lost digits above 2^53");
wrote(m.buildRateLimit("cafe02", 29_500_000), m.RATE_LIMIT_TTL_POLICY);
const held = await m.tryAcquireLock(c, "invoice-run/2026-03");
if (held.fence() !== 1) fail(`first fence ${held.fence()}`);
wrote(m.buildLock("invoice-run/2026-03"), m.LOCK_TTL_POLICY);
wrote(m.buildLockFence("invoice-run/2026-03"), m.LOCK_FENCE_TTL_POLICY);
await m.hSetCartItems(c, 42, { "1001": { qty: 2, unit_price: 1999, added_at: when }, "1002": { qty: 1, unit_price: 500, added_at: when, variant: "red" } });
wrote(m.buildCartItems(42), m.CART_ITEMS_TTL_POLICY);
const flags = m.buildFeatureFlags("checkout");
await raw(["HSET", flags, "old", `{"enabled":false}`]);
await raw(["PEXPIRE", flags, "3600000"]);
await m.hSetFeatureFlags(c, "checkout", { new_checkout: { enabled: true, allow_user_ids: [1, 2] } });
if (Number(await raw(["PTTL", flags])) !== -1) fail("a persistent hSet left a TTL");
wrote(flags, m.FEATURE_FLAGS_TTL_POLICY);
await m.sAddUserSessionIndex(c, 42, [sessionID]);
wrote(m.buildUserSessionIndex(42), m.USER_SESSION_INDEX_TTL_POLICY);
const room = m.buildChatMessages(roomID);
await m.xAddChatMessages(c, roomID, { user_id: "42", kind: "text", body: "hi" }, 0);
for (const g of ["push", "search"]) await raw(["XGROUP", "CREATE", room, g, "$"]);
wrote(room, m.CHAT_MESSAGES_TTL_POLICY);
await m.sAddChatPresence(c, roomID, [42], 120_000);
wrote(m.buildChatPresence(roomID), m.CHAT_PRESENCE_TTL_POLICY);
await m.zAddLeaderboard(c, 2026, [{ score: 10, member: 42 }]);
wrote(m.buildLeaderboard(2026), m.LEADERBOARD_TTL_POLICY);
await m.lPushMailOutbox(c, [{ id: roomID, template: "welcome", to: "ada@example.com", enqueued_at: when }]);
wrote(m.buildMailOutbox(), m.MAIL_OUTBOX_TTL_POLICY);

for (const [key, policy] of written) {
  const pttl = Number(await raw(["PTTL", key]));
  if (pttl === -2) fail(`${key} was not written`);
  if (!m.ttlAllows(policy, pttl)) fail(`${key} has PTTL ${pttl}, which ${JSON.stringify(policy)} does not allow`);
}
if (Number(await raw(["PTTL", m.buildUserSession(short)])) > 3_600_000) fail("ttlMs was not applied");

// Refusals send nothing: a longer TTL, a value the schema refuses, a bad key value.
const before = Number(await raw(["DBSIZE"]));
const refusals: [string, () => Promise<unknown>, new (...a: never[]) => Error][] = [
  ["a longer TTL", () => m.setHtmlFragmentCache(c, "x", "y", "z", m.HTML_FRAGMENT_CACHE_MAX_TTL_MS + 1), m.TTLError],
  ["a zero TTL", () => m.hSetCartItems(c, 43, { "1": { qty: 1, unit_price: 1, added_at: when } }, 0), m.TTLError],
  ["a schema break", () => m.hSetCartItems(c, 44, { "1": { qty: 1000, unit_price: 1, added_at: when } }), m.SchemaError],
  ["a bad placeholder", () => m.setHtmlFragmentCache(c, "a:b", "y", "z"), m.InvalidKeyError],
  ["an empty write", () => m.sAddUserSessionIndex(c, 45, []), m.InvalidValueError],
];
for (const [what, op, cls] of refusals) {
  try {
    await op();
    fail(`${what} was accepted`);
  } catch (e) {
    if (!(e instanceof cls)) throw e;
  }
}
if (Number(await raw(["DBSIZE"])) !== before) fail("a refused write wrote something");

// A value a newer writer stored, with an auth_method this module does not
// list, is read as it is, typed UnknownEnumValue: no literal it lists is
// assignable, so a switch needs a default branch. Writing it back is
// refused before anything is sent.
const newer = m.buildUserSession(sessionID.replace("0e5b", "2e5b"));
const stored = JSON.stringify({ user_id: 8, created_at: when, expires_at: when, csrf_token: sha256Hex, auth_method: "webauthn" });
await raw(["SET", newer, stored, "PX", "60000"]);
const read = await m.getUserSession(c, sessionID.replace("0e5b", "2e5b"));
if (read === null) fail("the newer session was not read");
let label: string;
const method = read.auth_method;
switch (method) {
  case "password":
  case "sso":
  case "passkey":
  case "magic_link":
    label = method;
    break;
  default: {
    const unknownMethod: redisMod.UnknownEnumValue = method;
    label = `unknown ${unknownMethod}`;
  }
}
if (label !== "unknown webauthn") fail(`read the newer session's auth_method as ${label}`);
const listed = (x: "password" | "sso" | "passkey" | "magic_link"): string => x;
// @ts-expect-error an enum read back may hold a value the module does not list
listed(read.auth_method);
// @ts-expect-error a literal the module does not list is not a value of the enum
const notListed: redisMod.UserSessionValue["auth_method"] = "webauthn";
void notListed;
try {
  await m.setUserSession(c, sessionID.replace("0e5b", "2e5b"), read);
  fail("an unknown enum value was written back");
} catch (e) {
  if (!(e instanceof m.SchemaError) || e.pointer !== "#/auth_method" || e.message.includes("webauthn")) throw e;
}
if (await raw(["GET", newer]) !== stored) fail("a refused write changed the newer session");
await raw(["DEL", newer]);
await close();
console.log(JSON.stringify({ written: written.length }));
