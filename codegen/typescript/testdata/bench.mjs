// Build and parse per key: the generated module against hand-written
// template-literal builders and regular-expression parsers; and the
// schema check of a user-session value against a hand-written check of
// the same keywords; in one node run: node bench.mjs <compiled module of
// keys.yaml, --client none> <the same with --client redis>. It prints one
// JSON line per case with ns/op of each and the ratio.
import { pathToFileURL } from "node:url";

const m = await import(pathToFileURL(process.argv[2]).href);
const checked = await import(pathToFileURL(process.argv[3]).href);

// schemas/user-session.v2.json by hand: the keywords it uses, first problem thrown.
const sessionKeys = new Set(["user_id", "created_at", "expires_at", "csrf_token", "auth_method", "ip", "mfa", "roles", "user_agent"]);
const methods = new Set(["password", "sso", "passkey", "magic_link"]);
const csrf = /^[0-9a-f]{64}$/u;
const handCheckSession = (v) => {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new TypeError("not an object");
  for (const k of ["user_id", "created_at", "expires_at", "csrf_token", "auth_method"]) if (!Object.hasOwn(v, k)) throw new TypeError("required");
  for (const k of Object.keys(v)) if (!sessionKeys.has(k)) throw new TypeError("additional property");
  if (!Number.isInteger(v.user_id) || v.user_id < 1) throw new TypeError("user_id");
  if (typeof v.created_at !== "string" || typeof v.expires_at !== "string") throw new TypeError("dates");
  if (typeof v.csrf_token !== "string" || !csrf.test(v.csrf_token)) throw new TypeError("csrf_token");
  if (typeof v.auth_method !== "string" || !methods.has(v.auth_method)) throw new TypeError("auth_method");
  if (v.ip !== undefined && (typeof v.ip !== "string" || [...v.ip].length > 45)) throw new TypeError("ip");
  if (v.mfa !== undefined && typeof v.mfa !== "boolean") throw new TypeError("mfa");
  if (v.user_agent !== undefined && (typeof v.user_agent !== "string" || [...v.user_agent].length > 512)) throw new TypeError("user_agent");
  if (v.roles !== undefined) {
    if (!Array.isArray(v.roles) || v.roles.length > 64 || new Set(v.roles).size !== v.roles.length) throw new TypeError("roles");
    for (const r of v.roles) if (typeof r !== "string" || r.length < 1) throw new TypeError("role");
  }
  return 1;
};
const session = {
  user_id: 42, created_at: "2026-03-01T12:00:00Z", expires_at: "2026-03-02T12:00:00Z", auth_method: "passkey",
  csrf_token: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", roles: ["admin", "support"],
  ip: "192.0.2.1", mfa: true, user_agent: "Mozilla/5.0 (X11; Linux x86_64)",
};

const handCart = (userId) => `v1:cart:{${userId}}:items`;
const handCartRe = /^v1:cart:\{(-?[0-9]+)\}:items$/;
const handParseCart = (key) => {
  const r = handCartRe.exec(key);
  if (r === null) throw new RangeError("not a cart key");
  return { userId: Number(r[1]) };
};
const handFragment = (template, locale) => `v1:cache:fragment:${template}:${locale}`;
const handFragmentRe = /^v1:cache:fragment:([^:]+):([^:]+)$/;
const handParseFragment = (key) => {
  const r = handFragmentRe.exec(key);
  if (r === null) throw new RangeError("not a fragment key");
  return { template: r[1], locale: r[2] };
};

const N = 500_000;
let sink = 0;
// The best of 7 rounds each, the two sides alternating round by round.
function time(gen, hand) {
  const best = [Infinity, Infinity];
  for (let i = 0; i < 100_000; i++) sink += gen(i) + hand(i); // warm up
  for (let round = 0; round < 7; round++) {
    [gen, hand].forEach((f, side) => {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < N; i++) sink += f(i);
      best[side] = Math.min(best[side], Number(process.hrtime.bigint() - t0) / N);
    });
  }
  return best;
}
const templates = ["home", "cart", "checkout", "account"];
const cases = {
  "build cart-items (int)": [(i) => m.buildCartItems(i).length, (i) => handCart(i).length],
  "parse cart-items (int)": [(i) => Number(m.parseCartItems(handCart(i & 1023)).userId), (i) => handParseCart(handCart(i & 1023)).userId],
  "build html-fragment-cache (2 words)": [(i) => m.buildHtmlFragmentCache(templates[i & 3], "en-GB").length, (i) => handFragment(templates[i & 3], "en-GB").length],
  "check user-session (9 properties)": [() => (checked.checkUserSession(session), 1), () => handCheckSession(session)],
  "parse html-fragment-cache (2 words)": [(i) => m.parseHtmlFragmentCache(handFragment(templates[i & 3], "en-GB")).locale.length, (i) => handParseFragment(handFragment(templates[i & 3], "en-GB")).locale.length],
};
for (const [name, [gen, hand]] of Object.entries(cases)) {
  const [g, h] = time(gen, hand);
  console.log(JSON.stringify({ case: name, generated_ns: +g.toFixed(1), hand_written_ns: +h.toFixed(1), ratio: +(g / h).toFixed(2) }));
}
if (sink === 42) console.log("");
