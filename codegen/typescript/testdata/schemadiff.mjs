// The TypeScript half of TestSchemaCheckDiff: node schemadiff.mjs
// <module.js> <cases.json>. cases.json is [{ check, values: [json text…] }];
// each value is decoded with JSON.parse and given to the module's check
// function. It prints one JSON array per case: for each value null when
// the check accepts it, else the SchemaError's pointer. Anything else
// thrown is a failure of the script.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modPath, casesPath] = process.argv.slice(2);
const mod = await import(pathToFileURL(modPath).href);
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
const out = [];
for (const c of cases) {
  const check = mod[c.check];
  if (typeof check !== "function") throw new Error(`the module has no ${c.check}`);
  out.push(c.values.map((text) => {
    const v = JSON.parse(text);
    try {
      check(v);
      return null;
    } catch (e) {
      if (!(e instanceof mod.SchemaError)) throw e;
      if (typeof e.pointer !== "string") throw new Error(`${c.check}: a SchemaError without a pointer`);
      return e.pointer;
    }
  }));
}
console.log(JSON.stringify(out));
