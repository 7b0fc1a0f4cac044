// Lists what a TypeScript file declares and holds, with the TypeScript
// compiler's own parser: node inspect.mjs <file.ts>... It prints a JSON object by file:
// decls, every top-level statement as "kind name" (names of exported and
// local declarations, in order); strings, the value of every string
// literal and template-literal-type text; calls, every called expression
// at the top level (none is allowed outside declarations).
import { readFileSync } from "node:fs";
import ts from "typescript";

const result = {};
for (const file of process.argv.slice(2)) {
const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
const decls = [];
const strings = [];
const topCalls = [];
for (const st of sf.statements) {
  const kind = ts.SyntaxKind[st.kind];
  if (ts.isVariableStatement(st)) {
    for (const d of st.declarationList.declarations) decls.push(`${kind} ${d.name.getText(sf)}`);
  } else if (st.name) {
    decls.push(`${kind} ${st.name.getText(sf)}`);
  } else {
    decls.push(kind);
    if (ts.isExpressionStatement(st)) topCalls.push(st.getText(sf));
  }
}
const visit = (n) => {
  if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) strings.push(n.text);
  if (ts.isTemplateLiteralTypeNode(n)) {
    strings.push(n.head.text);
    for (const s of n.templateSpans) strings.push(s.literal.text);
  }
  ts.forEachChild(n, visit);
};
visit(sf);
const diags = sf.parseDiagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
result[file] = { decls, strings, topCalls, diags };
}
console.log(JSON.stringify(result));
