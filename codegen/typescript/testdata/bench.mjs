// Build and parse per key: the generated module against hand-written
// template-literal builders and regular-expression parsers, in one node
// run: node bench.mjs <compiled module of keys.yaml>. It prints one JSON
// line per case with ns/op of each and the ratio.
import { pathToFileURL } from "node:url";

const m = await import(pathToFileURL(process.argv[2]).href);

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
  "parse html-fragment-cache (2 words)": [(i) => m.parseHtmlFragmentCache(handFragment(templates[i & 3], "en-GB")).locale.length, (i) => handParseFragment(handFragment(templates[i & 3], "en-GB")).locale.length],
};
for (const [name, [gen, hand]] of Object.entries(cases)) {
  const [g, h] = time(gen, hand);
  console.log(JSON.stringify({ case: name, generated_ns: +g.toFixed(1), hand_written_ns: +h.toFixed(1), ratio: +(g / h).toFixed(2) }));
}
if (sink === 42) console.log("");
