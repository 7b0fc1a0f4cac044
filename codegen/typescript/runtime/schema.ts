
// ---- schema checks ----

/** Thrown when a value breaks the family's JSON Schema; nothing is written. It names the JSON pointer, never the value. */
export class SchemaError extends TypeError {
  constructor(message: string, readonly pointer: string) {
    super(message);
    this.name = "SchemaError";
  }
}

type KeyregSchema = boolean | { readonly [k: string]: unknown };

function keyregEsc(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

function keyregTypeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function keyregEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && keyregEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

const keyregPatterns = new Map<string, RegExp | null>();
const keyregMaxNest = 512; // Go's validator decodes JSON nested this deep at most
const keyregMaxDepth = 1100; // subschemas followed on one path: 512 levels of items and $ref, well within a JavaScript stack
let keyregPatternMap: Map<string, string> | undefined;

/**
 * The RegExp of a schema's pattern: its translation from RE2 (written by
 * keyreg gen typescript into keyregPatternSources, so that it matches
 * what Go's regexp matches), or null when there is none: the pattern is
 * then left to keyreg audit.
 */
function keyregRegExp(pattern: string): RegExp | null {
  let re = keyregPatterns.get(pattern);
  if (re === undefined) {
    keyregPatternMap ??= new Map(keyregPatternSources);
    const src = keyregPatternMap.get(pattern);
    re = null;
    if (src !== undefined) {
      try {
        re = new RegExp(src, "u");
      } catch {
        re = null;
      }
    }
    keyregPatterns.set(pattern, re);
  }
  return re;
}

/** x as an exact decimal, mantissa × 10^exponent, from its shortest round-trip text. */
function keyregDecimal(x: number): [bigint, number] {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([+-][0-9]+))?$/.exec(String(x));
  if (!m) return [0n, 0];
  const frac = m[3] ?? "";
  return [BigInt(m[1]! + m[2]! + frac), Number(m[4] ?? 0) - frac.length];
}

/**
 * Whether v is a multiple of m, in decimal arithmetic as Go's validator
 * computes it on the JSON text (0.3 is a multiple of 0.1), not in binary
 * floating point. Exponents of doubles are within ±343, so the factors are
 * bounded.
 */
function keyregMultipleOf(v: number, m: number): boolean {
  if (!Number.isFinite(v) || !Number.isFinite(m) || m <= 0) return false;
  if (Number.isSafeInteger(v) && Number.isSafeInteger(m)) return v % m === 0; // exact
  const [a, ea] = keyregDecimal(v), [b, eb] = keyregDecimal(m);
  if (b === 0n) return false;
  const e = Math.min(ea, eb);
  return (a * 10n ** BigInt(ea - e)) % (b * 10n ** BigInt(eb - e)) === 0n;
}

/**
 * The first problem of v against schema, as [pointer, what], or null. The
 * keywords are those of docs/codegen.md, with the pointers keyreg's own
 * validator (payload.Check) reports: a missing required property, a
 * property additionalProperties refuses, a property name and repeated
 * items point at the object or array. root resolves local $refs; a value
 * nested deeper than Go's decoder reads, or one that takes more nested
 * subschemas than keyregMaxDepth, is refused, not followed.
 */
function keyregProblem(root: KeyregSchema, schema: KeyregSchema, v: unknown, at: string, depth: number, nest: number): [string, string] | null {
  if (schema === true) return null;
  if (schema === false) return [at, "is not allowed"];
  if (nest >= keyregMaxNest && v !== null && typeof v === "object") return [at, `is nested deeper than ${keyregMaxNest} levels`];
  if (depth > keyregMaxDepth) return [at, `needs more than ${keyregMaxDepth} nested subschemas to check`];
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === "string" && s.$ref.startsWith("#")) {
    let target: unknown = root;
    for (const part of s.$ref.slice(1).split("/").slice(1)) {
      let k: string;
      try {
        k = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
      } catch {
        target = undefined;
        break;
      }
      target = keyregHas(target, k) ? (target as Record<string, unknown>)[k] : undefined;
    }
    if (target !== undefined) {
      const p = keyregSub(root, target, v, at, at, depth, nest);
      if (p) return p;
    }
  }
  const t = keyregTypeOf(v);
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((x) => x === t || (x === "number" && t === "integer"))) return [at, `is not of type ${types.join(" or ")}`];
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => keyregEqual(e, v))) return [at, "is not one of the enum's values"];
  if ("const" in s && !keyregEqual(s.const, v)) return [at, "is not the const value"];
  if (typeof v === "number") {
    if (typeof s.minimum === "number" && v < s.minimum) return [at, `is less than the minimum ${s.minimum}`];
    if (typeof s.maximum === "number" && v > s.maximum) return [at, `is more than the maximum ${s.maximum}`];
    if (typeof s.exclusiveMinimum === "number" && v <= s.exclusiveMinimum) return [at, `is not more than ${s.exclusiveMinimum}`];
    if (typeof s.exclusiveMaximum === "number" && v >= s.exclusiveMaximum) return [at, `is not less than ${s.exclusiveMaximum}`];
    if (typeof s.multipleOf === "number" && s.multipleOf > 0 && !keyregMultipleOf(v, s.multipleOf)) return [at, `is not a multiple of ${s.multipleOf}`];
  }
  if (typeof v === "string") {
    const n = [...v].length;
    if (typeof s.minLength === "number" && n < s.minLength) return [at, `is shorter than ${s.minLength} characters`];
    if (typeof s.maxLength === "number" && n > s.maxLength) return [at, `is longer than ${s.maxLength} characters`];
    if (typeof s.pattern === "string") {
      const re = keyregRegExp(s.pattern);
      if (re && !re.test(v)) return [at, "does not match the pattern"];
    }
  }
  if (Array.isArray(v)) {
    const p = keyregArrayProblem(root, s, v, at, depth, nest);
    if (p) return p;
  }
  if (t === "object") {
    const p = keyregObjectProblem(root, s, v as Record<string, unknown>, at, depth, nest);
    if (p) return p;
  }
  return keyregApplicatorProblem(root, s, v, at, depth, nest);
}

/** Whether o is an object with an own property k. */
function keyregHas(o: unknown, k: string): boolean {
  return o !== null && typeof o === "object" && Object.prototype.hasOwnProperty.call(o, k);
}

/**
 * v against the subschema x, at pointer p (a pointer other than at is one
 * level down). The checks are split in small functions so that a deep
 * value's recursion takes little stack.
 */
function keyregSub(root: KeyregSchema, x: unknown, v: unknown, at: string, p: string, depth: number, nest: number): [string, string] | null {
  return keyregProblem(root, x as KeyregSchema, v, p, depth + 1, p === at ? nest : nest + 1);
}

/** The array keywords. */
function keyregArrayProblem(root: KeyregSchema, s: Record<string, unknown>, v: unknown[], at: string, depth: number, nest: number): [string, string] | null {
  if (typeof s.minItems === "number" && v.length < s.minItems) return [at, `has fewer than ${s.minItems} items`];
  if (typeof s.maxItems === "number" && v.length > s.maxItems) return [at, `has more than ${s.maxItems} items`];
  if (s.uniqueItems === true) {
    for (let i = 0; i < v.length; i++) for (let j = 0; j < i; j++) if (keyregEqual(v[i], v[j])) return [at, `has equal items ${j} and ${i}`];
  }
  // prefixItems then items (2020-12), or an items array then
  // additionalItems (draft 7 and before, where items may be a list).
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
  const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
  for (let i = 0; i < v.length && i < prefix.length; i++) {
    const p = keyregSub(root, prefix[i], v[i], at, `${at}/${i}`, depth, nest);
    if (p) return p;
  }
  if (rest !== undefined) {
    for (let i = prefix.length; i < v.length; i++) {
      const p = keyregSub(root, rest, v[i], at, `${at}/${i}`, depth, nest);
      if (p) return p;
    }
  }
  if (s.contains !== undefined) {
    let n = 0;
    for (const x of v) if (keyregSub(root, s.contains, x, at, at, depth, nest) === null) n++;
    const min = typeof s.minContains === "number" ? s.minContains : 1;
    if (n < min) return [at, min === 1 ? "has no item that matches contains" : `has fewer than ${min} items that match contains`];
    if (typeof s.maxContains === "number" && n > s.maxContains) return [at, `has more than ${s.maxContains} items that match contains`];
  }
  return null;
}

/** The object keywords. */
function keyregObjectProblem(root: KeyregSchema, s: Record<string, unknown>, o: Record<string, unknown>, at: string, depth: number, nest: number): [string, string] | null {
  const keys = Object.keys(o);
  if (typeof s.minProperties === "number" && keys.length < s.minProperties) return [at, `has fewer than ${s.minProperties} properties`];
  if (typeof s.maxProperties === "number" && keys.length > s.maxProperties) return [at, `has more than ${s.maxProperties} properties`];
  if (Array.isArray(s.required)) {
    for (const r of s.required) if (typeof r === "string" && !keyregHas(o, r)) return [at, `is missing the required property ${JSON.stringify(r)}`];
  }
  // dependentRequired, or dependencies with a list (draft 7's keyword,
  // which keyreg's validator checks in every draft).
  for (const deps of [s.dependentRequired, s.dependencies]) {
    if (deps === null || typeof deps !== "object") continue;
    for (const [k, req] of Object.entries(deps as Record<string, unknown>)) {
      if (!keyregHas(o, k) || !Array.isArray(req)) continue;
      for (const r of req) if (typeof r === "string" && !keyregHas(o, r)) return [at, `is missing the property ${JSON.stringify(r)} that ${JSON.stringify(k)} requires`];
    }
  }
  const props = (s.properties ?? {}) as Record<string, unknown>;
  const pats = s.patternProperties !== null && typeof s.patternProperties === "object" ? Object.entries(s.patternProperties as Record<string, unknown>) : [];
  for (const k of keys) {
    const p = `${at}/${keyregEsc(k)}`;
    if (s.propertyNames !== undefined && keyregSub(root, s.propertyNames, k, at, p, depth, nest) !== null) return [at, "has a property name that fails propertyNames"];
    let matched = keyregHas(props, k);
    if (matched) {
      const q = keyregSub(root, props[k], o[k], at, p, depth, nest);
      if (q) return q;
    }
    for (const [pat, ps] of pats) {
      const re = keyregRegExp(pat);
      if (!re || !re.test(k)) continue;
      matched = true;
      const q = keyregSub(root, ps, o[k], at, p, depth, nest);
      if (q) return q;
    }
    if (!matched && s.additionalProperties !== undefined) {
      if (s.additionalProperties === false) return [at, "has a property the schema does not allow"];
      const q = keyregSub(root, s.additionalProperties, o[k], at, p, depth, nest);
      if (q) return q;
    }
  }
  // dependentSchemas, or dependencies with a schema.
  for (const deps of [s.dependentSchemas, s.dependencies]) {
    if (deps === null || typeof deps !== "object") continue;
    for (const [k, ds] of Object.entries(deps as Record<string, unknown>)) {
      if (!keyregHas(o, k) || Array.isArray(ds)) continue;
      const q = keyregSub(root, ds, o, at, at, depth, nest);
      if (q) return q;
    }
  }
  return null;
}

/** allOf, anyOf, oneOf, not, if/then/else. */
function keyregApplicatorProblem(root: KeyregSchema, s: Record<string, unknown>, v: unknown, at: string, depth: number, nest: number): [string, string] | null {
  if (Array.isArray(s.allOf)) for (const x of s.allOf) {
    const p = keyregSub(root, x, v, at, at, depth, nest);
    if (p) return p;
  }
  if (Array.isArray(s.anyOf) && !s.anyOf.some((x) => keyregSub(root, x, v, at, at, depth, nest) === null)) return [at, "matches none of anyOf"];
  if (Array.isArray(s.oneOf) && s.oneOf.filter((x) => keyregSub(root, x, v, at, at, depth, nest) === null).length !== 1) return [at, "does not match exactly one of oneOf"];
  if (s.not !== undefined && keyregSub(root, s.not, v, at, at, depth, nest) === null) return [at, "matches not"];
  if (s.if !== undefined) {
    const branch = keyregSub(root, s.if, v, at, at, depth, nest) === null ? s.then : s.else;
    if (branch !== undefined) {
      const p = keyregSub(root, branch, v, at, at, depth, nest);
      if (p) return p;
    }
  }
  return null;
}

/** The check's result, or a refusal when it ran out of stack (a value nested too deeply for this runtime): never an unchecked value, never a crash. */
function keyregGuard(check: () => [string, string] | null): [string, string] | null {
  try {
    return check();
  } catch (e) {
    if (e instanceof RangeError) return ["#", "is nested too deeply to check"];
    throw e;
  }
}

/** Throws a SchemaError when v breaks schema: the family, the key and the JSON pointer, never the value. */
function keyregCheck(family: string, schema: KeyregSchema, v: unknown, what: string): void {
  const p = keyregGuard(() => keyregProblem(schema, schema, v, "#", 0, 0));
  if (p) throw new SchemaError(`${family}: ${what}at "${p[0]}": ${p[1]}`, p[0]);
}

/**
 * Throws a SchemaError when the value of one field of a hash breaks the
 * hash's schema: propertyNames, then properties[field] and every
 * patternProperties entry the name matches, else additionalProperties,
 * with $refs resolved in the hash's schema. The pointer starts at the
 * field, as keyreg's validator reports it for the hash as one object.
 */
function keyregCheckField(family: string, schema: KeyregSchema, field: string, v: unknown, what: string): void {
  let p: [string, string] | null = null;
  const at = `#/${keyregEsc(field)}`;
  if (typeof schema !== "object") {
    p = keyregProblem(schema, schema, { [field]: v }, "#", 0, 0);
  } else {
    if (schema.propertyNames !== undefined && keyregProblem(schema, schema.propertyNames as KeyregSchema, field, at, 0, 1) !== null) {
      p = ["#", "has a property name that fails propertyNames"];
    }
    const props = (schema.properties ?? {}) as Record<string, unknown>;
    const subs: unknown[] = [];
    if (Object.prototype.hasOwnProperty.call(props, field)) subs.push(props[field]);
    if (schema.patternProperties !== null && typeof schema.patternProperties === "object") {
      for (const [pat, ps] of Object.entries(schema.patternProperties as Record<string, unknown>)) {
        const re = keyregRegExp(pat);
        if (re && re.test(field)) subs.push(ps);
      }
    }
    if (subs.length === 0 && schema.additionalProperties !== undefined) {
      if (schema.additionalProperties === false) p ??= ["#", "has a property the schema does not allow"];
      else subs.push(schema.additionalProperties);
    }
    for (const x of subs) p ??= keyregGuard(() => keyregProblem(schema, x as KeyregSchema, v, at, 0, 1));
  }
  if (p) throw new SchemaError(`${family}: ${what}at "${p[0]}": ${p[1]}`, p[0]);
}

/** What a value is stored as, read back as JSON, for the check. */
function keyregStored(encoded: string, codec: "json" | "text" | "number"): unknown {
  return codec === "json" ? JSON.parse(encoded) : codec === "number" ? Number(encoded) : encoded;
}
