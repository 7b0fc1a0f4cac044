// A short program using the generated module: REDIS_URL=redis://127.0.0.1:6379 npm start
// (after npm install). keys.gen.ts is generated from the repository's keys.yaml:
//   keyreg gen typescript --registry ../../keys.yaml --out keys.gen.ts
import { createClient } from "redis";
import {
  HTML_FRAGMENT_CACHE_MAX_TTL_MS,
  TTLError,
  buildCartItems,
  buildHtmlFragmentCache,
  getHtmlFragmentCache,
  parseCartItems,
  setHtmlFragmentCache,
} from "./keys.gen.js";

const client = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
await client.connect();

// Keys are built and parsed by the registry's rules, never spelled by hand.
const cart = buildCartItems(42);
console.log(`cart key ${cart} belongs to user ${parseCartItems(cart).userId}`);
try {
  buildHtmlFragmentCache("home", "en:GB"); // a word placeholder cannot hold the separator
} catch (e) {
  console.log(`refused: ${(e as RangeError).message}`);
}

// Writes apply the family's TTL policy; a longer TTL is refused before anything is sent.
await setHtmlFragmentCache(client, "home", "en-GB", "<h1>Hello</h1>");
console.log(`cached fragment: ${await getHtmlFragmentCache(client, "home", "en-GB")}`);
try {
  await setHtmlFragmentCache(client, "home", "en-GB", "<h1>Hi</h1>", HTML_FRAGMENT_CACHE_MAX_TTL_MS + 1);
} catch (e) {
  if (!(e instanceof TTLError)) throw e;
  console.log(`refused: ${e.message}`);
}
await client.quit();
