/** Thrown for a placeholder value its type refuses, or a key that is not one of the family's. */
export class InvalidKeyError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = "InvalidKeyError";
  }
}

/** Thrown for a TTL (or a lock's lease) that breaks the family's TTL policy; nothing is sent. */
export class TTLError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = "TTLError";
  }
}

/** A family's TTL policy: keys must expire within maxMs ("max"), never expire ("persistent"), either ("optional"), or no policy ("unset"). */
export interface TTLPolicy {
  readonly kind: "max" | "persistent" | "optional" | "unset";
  readonly maxMs?: number;
}

/** Whether a key whose PTTL is pttlMs (negative: no expiry) obeys the policy. */
export function ttlAllows(policy: TTLPolicy, pttlMs: number): boolean {
  switch (policy.kind) {
    case "max":
      return pttlMs > 0 && pttlMs <= (policy.maxMs ?? 0);
    case "persistent":
      return pttlMs < 0;
  }
  return true;
}

declare const keyregUnknownEnum: unique symbol;

/**
 * A value of a string enum that this module does not list, as a newer
 * writer may store it: values read back are passed through as they are
 * (Go's generated code reads them as the enum's …Unknown constant). It is
 * a string, but no literal is assignable to it, so a switch over an enum
 * needs a default branch; writing it back fails the schema check (a
 * SchemaError) and sends nothing, as Go refuses to encode an Unknown.
 */
export type UnknownEnumValue = string & { readonly [keyregUnknownEnum]: true };

const keyregMinInt64 = -(2n ** 63n);
const keyregMaxInt64 = 2n ** 63n - 1n;

function keyregBad(family: string, placeholder: string, type: string): InvalidKeyError {
  // The value itself is not quoted: it may be a secret or a payload.
  return new InvalidKeyError(`${family}: ${placeholder} is not a valid ${type} value`);
}

/** The decimal text of an int placeholder's value: a safe integer number or a bigint within int64. */
function keyregInt(family: string, placeholder: string, v: number | bigint): string {
  if (typeof v === "number") {
    if (Number.isSafeInteger(v)) return String(v);
  } else if (typeof v === "bigint") {
    if (v >= keyregMinInt64 && v <= keyregMaxInt64) return String(v);
  }
  throw keyregBad(family, placeholder, "int");
}

/** A string placeholder's value, checked against its type's expression. */
function keyregStr(family: string, placeholder: string, type: string, re: RegExp, v: string): string {
  if (typeof v !== "string" || !re.test(v)) throw keyregBad(family, placeholder, type);
  return v;
}

/** An int parsed from a key: a number when it is a safe integer, a bigint otherwise (int64 only). */
function keyregParseInt(family: string, placeholder: string, s: string): number | bigint {
  const n = Number(s);
  if (Number.isSafeInteger(n)) return n;
  const b = BigInt(s);
  if (b < keyregMinInt64 || b > keyregMaxInt64) {
    throw new InvalidKeyError(`${family}: ${placeholder} does not fit in an int64`);
  }
  return b;
}

function keyregNoMatch(family: string): InvalidKeyError {
  return new InvalidKeyError(`${family}: the key does not match the family's pattern`);
}

/** A literal or a placeholder of a pattern, for keyregMatch. */
interface KeyregPart {
  readonly lit?: string;
  readonly first?: RegExp; // a placeholder: the character its value may start with
  readonly rest?: RegExp; // and each later one
  readonly valid?: RegExp; // the whole value
  readonly fixed?: number; // its length, for uuid and ulid
}

/**
 * Matches all of key against parts, as keyreg does: earlier placeholders
 * take the longest value that still lets the rest of the pattern match.
 * Failed (part, position) pairs are remembered, so the work is bounded by
 * parts × length² however the key is made.
 */
function keyregMatch(parts: readonly KeyregPart[], key: string): string[] | null {
  const failed = new Set<number>();
  const out: string[] = [];
  const width = key.length + 1;
  const match = (i: number, pos: number): boolean => {
    if (i === parts.length) return pos === key.length;
    const p = parts[i]!;
    if (p.lit !== undefined) return key.startsWith(p.lit, pos) && match(i + 1, pos + p.lit.length);
    const memo = i * width + pos;
    if (failed.has(memo)) return false;
    if (p.fixed !== undefined) {
      const v = key.slice(pos, pos + p.fixed);
      if (v.length === p.fixed && p.valid!.test(v)) {
        out.push(v);
        if (match(i + 1, pos + p.fixed)) return true;
        out.pop();
      }
      failed.add(memo);
      return false;
    }
    let end = pos;
    while (end < key.length && (end === pos ? p.first! : p.rest!).test(key[end]!)) end++;
    for (let e = end; e > pos; e--) {
      const v = key.slice(pos, e);
      if (p.valid!.test(v)) {
        out.push(v);
        if (match(i + 1, e)) return true;
        out.pop();
      }
    }
    failed.add(memo);
    return false;
  };
  return match(0, 0) ? out : null;
}

/** Whether parse returns without throwing. */
function keyregFits(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
}

const keyregReIntValue = /^-?[0-9]+$/;

/** A word placeholder's value: not empty, without the separator. */
function keyregWord(family: string, placeholder: string, sep: string, v: string): string {
  if (typeof v !== "string" || v.length === 0 || v.indexOf(sep) >= 0) throw keyregBad(family, placeholder, "word");
  return v;
}

/** An any placeholder's value: not empty. */
function keyregAny(family: string, placeholder: string, v: string): string {
  if (typeof v !== "string" || v.length === 0) throw keyregBad(family, placeholder, "any");
  return v;
}
