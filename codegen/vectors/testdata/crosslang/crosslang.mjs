// Builds or parses keys with compiled generated TypeScript modules, for the
// cross-language round trip (codegen/vectors/crosslang_test.go):
// node crosslang.mjs <out dir> build|parse <jobs.json> <out.json>.
//
// A build job is {mod, fn, ints, args}: fn(...args), an int argument given
// as its decimal text (a number when it is a safe integer, a bigint
// otherwise); a parse job is {mod, fn, key}. Each result is {key} or {args}
// (an int as its decimal text, from a number or a bigint) or {error}.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [dir, mode, jobsPath, outPath] = process.argv.slice(2);
const jobs = JSON.parse(readFileSync(jobsPath, "utf8"));
const mods = new Map();
const out = [];
for (const job of jobs) {
  if (!mods.has(job.mod)) mods.set(job.mod, await import(pathToFileURL(join(dir, job.mod + ".js")).href));
  const fn = mods.get(job.mod)[job.fn];
  if (typeof fn !== "function") throw new Error(`${job.mod}.${job.fn} is not exported`);
  try {
    if (mode === "build") {
      const args = (job.args ?? []).map((a, i) => {
        if (!(job.ints ?? [])[i]) return a;
        const n = Number(a);
        return Number.isSafeInteger(n) ? n : BigInt(a);
      });
      out.push({ key: fn(...args) });
    } else {
      // The key object's fields are in pattern order.
      out.push({ args: Object.values(fn(job.key)).map((v) => String(v)) });
    }
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    out.push({ error: String(e.message) });
  }
}
writeFileSync(outPath, JSON.stringify(out));
