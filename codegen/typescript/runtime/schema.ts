
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

/**
 * The first problem of v against schema, as [pointer, what], or null. The
 * keywords are those the Go backend checks; others are left to keyreg
 * audit. root resolves local $refs; depth is bounded.
 */
function keyregProblem(root: KeyregSchema, schema: KeyregSchema, v: unknown, at: string, depth: number): [string, string] | null {
  if (schema === true) return null;
  if (schema === false) return [at, "is not allowed"];
  if (depth > 128) return null;
  const s = schema as Record<string, unknown>;
  const sub = (x: unknown, val: unknown, p: string) => keyregProblem(root, x as KeyregSchema, val, p, depth + 1);
  if (typeof s.$ref === "string" && s.$ref.startsWith("#")) {
    let target: unknown = root;
    for (const part of s.$ref.slice(1).split("/").slice(1)) {
      const k = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
      target = target !== null && typeof target === "object" && Object.prototype.hasOwnProperty.call(target, k) ? (target as Record<string, unknown>)[k] : undefined;
    }
    if (target !== undefined) {
      const p = sub(target, v, at);
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
    if (typeof s.multipleOf === "number" && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf)) return [at, `is not a multiple of ${s.multipleOf}`];
  }
  if (typeof v === "string") {
    const n = [...v].length;
    if (typeof s.minLength === "number" && n < s.minLength) return [at, `is shorter than ${s.minLength} characters`];
    if (typeof s.maxLength === "number" && n > s.maxLength) return [at, `is longer than ${s.maxLength} characters`];
    if (typeof s.pattern === "string") {
      let re = keyregPatterns.get(s.pattern);
      if (re === undefined) {
        try {
          re = new RegExp(s.pattern, "u");
        } catch {
          re = null; // not a JavaScript expression: left to keyreg audit
        }
        keyregPatterns.set(s.pattern, re);
      }
      if (re && !re.test(v)) return [at, "does not match the pattern"];
    }
  }
  if (Array.isArray(v)) {
    if (typeof s.minItems === "number" && v.length < s.minItems) return [at, `has fewer than ${s.minItems} items`];
    if (typeof s.maxItems === "number" && v.length > s.maxItems) return [at, `has more than ${s.maxItems} items`];
    if (s.uniqueItems === true) {
      for (let i = 0; i < v.length; i++) for (let j = 0; j < i; j++) if (keyregEqual(v[i], v[j])) return [`${at}/${i}`, "repeats an earlier item"];
    }
    if (s.items !== undefined && !Array.isArray(s.items)) {
      for (let i = 0; i < v.length; i++) {
        const p = sub(s.items, v[i], `${at}/${i}`);
        if (p) return p;
      }
    }
  }
  if (t === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (typeof s.minProperties === "number" && keys.length < s.minProperties) return [at, `has fewer than ${s.minProperties} properties`];
    if (typeof s.maxProperties === "number" && keys.length > s.maxProperties) return [at, `has more than ${s.maxProperties} properties`];
    if (Array.isArray(s.required)) {
      for (const r of s.required) if (typeof r === "string" && !Object.prototype.hasOwnProperty.call(o, r)) return [`${at}/${keyregEsc(r)}`, "is required"];
    }
    const props = (s.properties ?? {}) as Record<string, unknown>;
    for (const k of keys) {
      const p = `${at}/${keyregEsc(k)}`;
      if (s.propertyNames !== undefined) {
        const q = sub(s.propertyNames, k, p);
        if (q) return [p, "is not an allowed property name"];
      }
      const ps = Object.prototype.hasOwnProperty.call(props, k) ? props[k] : s.additionalProperties;
      if (ps !== undefined) {
        const q = sub(ps, o[k], p);
        if (q) return q;
      }
    }
  }
  if (Array.isArray(s.allOf)) for (const x of s.allOf) {
    const p = sub(x, v, at);
    if (p) return p;
  }
  if (Array.isArray(s.anyOf) && !s.anyOf.some((x) => sub(x, v, at) === null)) return [at, "matches none of anyOf"];
  if (Array.isArray(s.oneOf) && s.oneOf.filter((x) => sub(x, v, at) === null).length !== 1) return [at, "does not match exactly one of oneOf"];
  if (s.not !== undefined && sub(s.not, v, at) === null) return [at, "matches not"];
  return null;
}

/** Throws a SchemaError when v breaks schema: the family, the key and the JSON pointer, never the value. */
function keyregCheck(family: string, schema: KeyregSchema, v: unknown, what: string): void {
  const p = keyregProblem(schema, schema, v, "#", 0);
  if (p) throw new SchemaError(`${family}: ${what}at "${p[0]}": ${p[1]}`, p[0]);
}

/** The schema of one field of a hash: properties[field], else additionalProperties. */
function keyregFieldSchema(schema: KeyregSchema, field: string): KeyregSchema {
  if (typeof schema !== "object") return schema;
  const props = (schema.properties ?? {}) as Record<string, unknown>;
  if (Object.prototype.hasOwnProperty.call(props, field)) return props[field] as KeyregSchema;
  return (schema.additionalProperties ?? true) as KeyregSchema;
}

/** What a value is stored as, read back as JSON, for the check. */
function keyregStored(encoded: string, codec: "json" | "text" | "number"): unknown {
  return codec === "json" ? JSON.parse(encoded) : codec === "number" ? Number(encoded) : encoded;
}
