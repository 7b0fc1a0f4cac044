// Runs the shared codegen vectors (codegen/vectors) against a compiled
// generated module: node vectors.mjs <module.js> <vectors.json> <names.json>.
// names.json maps a family to its build, parse and glob names. It prints
// one JSON line of counts and exits 1 on the first failures (at most 20).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modPath, vecPath, namesPath] = process.argv.slice(2);
const mod = await import(pathToFileURL(modPath).href);
const doc = JSON.parse(readFileSync(vecPath, "utf8"));
const names = JSON.parse(readFileSync(namesPath, "utf8"));
const failures = [];
const fail = (msg) => {
  if (failures.length < 20) failures.push(msg);
};
const counts = { families: 0, cases: 0, ambiguous: 0, invalid: 0, nonKeys: 0 };

if (mod.REGISTRY_DIGEST !== doc.registry_digest) fail(`digest ${mod.REGISTRY_DIGEST} != ${doc.registry_digest}`);
if (mod.SEPARATOR !== doc.separator) fail(`separator ${mod.SEPARATOR} != ${doc.separator}`);

// An int argument is its decimal text: a number when it is a safe
// integer, a bigint otherwise.
const arg = (ph, s) => {
  if (ph.type !== "int") return s;
  if (!/^-?[0-9]+$/.test(s)) return s; // not an int at all: build must refuse it
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : BigInt(s);
};
const same = (parsed, fields, args, phs) =>
  phs.every((ph, i) => {
    const v = parsed[fields[i]];
    if (ph.type === "int") return (typeof v === "number" || typeof v === "bigint") && BigInt(v) === BigInt(args[i]);
    return v === args[i];
  });

for (const fam of doc.families) {
  fam.placeholders ??= [];
  fam.non_keys ??= [];
  fam.cases ??= [];
  const n = names[fam.family];
  if (!n) {
    fail(`${fam.family}: no generated names`);
    continue;
  }
  counts.families++;
  const build = mod[n.build], parse = mod[n.parse], glob = mod[n.glob];
  if (typeof build !== "function" || typeof parse !== "function") {
    fail(`${fam.family}: ${n.build} or ${n.parse} is not exported`);
    continue;
  }
  if (glob !== fam.glob) fail(`${fam.family}: glob ${JSON.stringify(glob)} != ${JSON.stringify(fam.glob)}`);
  if (build.length !== fam.placeholders.length) fail(`${fam.family}: build takes ${build.length} arguments`);
  for (const c of fam.cases) {
    counts.cases++;
    let key;
    try {
      key = build(...c.args.map((a, i) => arg(fam.placeholders[i], a)));
    } catch (e) {
      fail(`${fam.family}: build(${JSON.stringify(c.args)}) threw ${e}`);
      continue;
    }
    if (key !== c.key) fail(`${fam.family}: build(${JSON.stringify(c.args)}) = ${JSON.stringify(key)}, want ${JSON.stringify(c.key)}`);
    try {
      const p = parse(c.key);
      if (!same(p, n.fields, c.args, fam.placeholders)) fail(`${fam.family}: parse(${JSON.stringify(c.key)}) = ${String(Object.values(p))}`);
      const again = build(...n.fields.map((f) => p[f]));
      if (again !== c.key) fail(`${fam.family}: build(parse(${JSON.stringify(c.key)})) = ${JSON.stringify(again)}`);
    } catch (e) {
      fail(`${fam.family}: parse(${JSON.stringify(c.key)}) threw ${e}`);
    }
  }
  for (const c of fam.ambiguous ?? []) {
    counts.ambiguous++;
    try {
      const p = parse(c.key);
      if (!same(p, n.fields, c.args, fam.placeholders)) fail(`${fam.family}: ambiguous parse(${JSON.stringify(c.key)}) = ${String(Object.values(p))}`);
    } catch (e) {
      fail(`${fam.family}: ambiguous parse(${JSON.stringify(c.key)}) threw ${e}`);
    }
  }
  for (const inv of fam.invalid ?? []) {
    counts.invalid++;
    try {
      const key = build(...inv.args.map((a, i) => arg(fam.placeholders[i], a)));
      fail(`${fam.family}: build refused nothing for ${JSON.stringify(inv.args)}: ${JSON.stringify(key)}`);
    } catch (e) {
      if (!(e instanceof RangeError)) fail(`${fam.family}: build(${JSON.stringify(inv.args)}) threw ${e}, not a RangeError`);
    }
  }
  for (const k of fam.non_keys) {
    counts.nonKeys++;
    try {
      const p = parse(k);
      fail(`${fam.family}: parse(${JSON.stringify(k)}) accepted it: ${String(Object.values(p))}`);
    } catch (e) {
      if (!(e instanceof RangeError)) fail(`${fam.family}: parse(${JSON.stringify(k)}) threw ${e}, not a RangeError`);
    }
  }
}
console.log(JSON.stringify(counts));
if (failures.length) {
  console.error(failures.join("\n"));
  process.exit(1);
}
