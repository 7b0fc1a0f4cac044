// The hash half of TestSchemaCheckDiff: node schemadiffhash.mjs
// <module.js> <cases.json>. cases.json is [{ hset, values: [json text…] }];
// each value is an object whose fields hSetX writes (json encoding) to a
// client that only records what it is sent. It prints one JSON array per
// case: for each value null when the write was sent, else the
// SchemaError's pointer (nothing may have been sent then).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modPath, casesPath] = process.argv.slice(2);
const mod = await import(pathToFileURL(modPath).href);
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
let sent = 0;
const client = {
  sendCommand: async () => {
    sent++;
    return 1;
  },
  multi: () => ({
    addCommand: () => {
      sent++;
    },
    exec: async () => [1, 1],
  }),
};
const out = [];
for (const c of cases) {
  const hset = mod[c.hset];
  if (typeof hset !== "function") throw new Error(`the module has no ${c.hset}`);
  const row = [];
  for (const text of c.values) {
    sent = 0;
    try {
      await hset(client, "k", JSON.parse(text));
      if (sent === 0) throw new Error(`${c.hset}: an accepted write sent nothing`);
      row.push(null);
    } catch (e) {
      if (!(e instanceof mod.SchemaError)) throw e;
      if (sent !== 0) throw new Error(`${c.hset}: a refused write sent ${sent} commands`);
      row.push(e.pointer);
    }
  }
  out.push(row);
}
console.log(JSON.stringify(out));
