
// ---- accessors ----

/** Thrown for a payload value the accessors refuse (an undeclared consumer group, an empty write). */
export class InvalidValueError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = "InvalidValueError";
  }
}

/** A member of a sorted set with its score. */
export interface ZMember<T> {
  readonly score: number;
  readonly member: T;
}

/** An entry of a stream with its fields decoded. */
export interface StreamEntry<T> {
  readonly id: string;
  readonly fields: Record<string, T>;
}

/**
 * The expiry, in milliseconds, a write to a key of a family with a maximum
 * TTL sets: the maximum when ttlMs is undefined, else ttlMs, which must be
 * a positive integer no larger than the maximum. It throws a TTLError, so
 * nothing is sent.
 */
function keyregExpiry(family: string, maxMs: number, ttlMs: number | undefined): number {
  if (ttlMs === undefined) return Math.max(1, Math.ceil(maxMs));
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new TTLError(`${family}: ttl ${ttlMs}ms must be a positive integer (the family's keys must expire)`);
  }
  if (ttlMs > maxMs) throw new TTLError(`${family}: ttl ${ttlMs}ms exceeds the maximum ${maxMs}ms`);
  return ttlMs;
}

/** The explicit ttl of a family whose keys may or may not expire: 0 means no expiry. */
function keyregOptional(family: string, ttlMs: number): number {
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 0) {
    throw new TTLError(`${family}: ttl ${ttlMs}ms must be 0 (no expiry) or a positive integer`);
  }
  return ttlMs;
}

/** The command that applies an expiry after a write: PEXPIRE, or PERSIST for none. */
function keyregExpireCmd(key: string, expMs: number): string[] {
  return expMs > 0 ? ["PEXPIRE", key, String(expMs)] : ["PERSIST", key];
}

function keyregEncodeJSON(family: string, v: unknown): string {
  const s = JSON.stringify(v);
  if (s === undefined) throw new InvalidValueError(`${family}: the value has no JSON encoding`);
  return s;
}

function keyregEncodeText(family: string, v: string): string {
  if (typeof v !== "string") throw new InvalidValueError(`${family}: the value is not a string`);
  return v;
}

function keyregEncodeInt(family: string, v: number | bigint): string {
  if ((typeof v === "number" && Number.isSafeInteger(v)) || (typeof v === "bigint" && v >= keyregMinInt64 && v <= keyregMaxInt64)) {
    return String(v);
  }
  throw new InvalidValueError(`${family}: the value is not an int64`);
}

function keyregEncodeFloat(family: string, v: number): string {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new InvalidValueError(`${family}: the value is not a finite number`);
  return String(v);
}

function keyregDecodeInt(family: string, s: string): number | bigint {
  if (!keyregReIntValue.test(s)) throw new InvalidValueError(`${family}: the stored value is not an int`);
  return keyregParseInt(family, "value", s);
}

function keyregDecodeFloat(family: string, s: string): number {
  const n = Number(s);
  if (s.trim() === "" || Number.isNaN(n)) throw new InvalidValueError(`${family}: the stored value is not a number`);
  return n;
}

function keyregString(x: unknown): string {
  if (typeof x === "string") return x;
  if (x instanceof Uint8Array) return new TextDecoder().decode(x);
  return String(x);
}

/** A flat [field, value, …] reply (RESP2) or a map (RESP3, node-redis 6's default) as a map without a prototype. */
function keyregPairs<T>(flat: unknown, decode: (s: string) => T): Record<string, T> {
  const out: Record<string, T> = Object.create(null);
  if (Array.isArray(flat)) {
    for (let i = 0; i + 1 < flat.length; i += 2) out[keyregString(flat[i])] = decode(keyregString(flat[i + 1]));
  } else if (flat instanceof Map) {
    for (const [f, v] of flat) out[keyregString(f)] = decode(keyregString(v));
  } else if (flat !== null && typeof flat === "object") {
    for (const [f, v] of Object.entries(flat)) out[f] = decode(keyregString(v));
  }
  return out;
}

/**
 * The entries of each stream of an XREAD/XREADGROUP reply: [[key, entries],
 * …] in RESP2, a map from key to entries in RESP3 (node-redis 6's default).
 */
function keyregStreams(res: unknown): unknown[] {
  if (Array.isArray(res)) return res.map((st: unknown) => (Array.isArray(st) ? st[1] : undefined));
  if (res instanceof Map) return [...res.values()];
  if (res !== null && typeof res === "object") return Object.values(res);
  return [];
}

/** Stream entries ([id, [field, value, …]] each, deleted ones null) decoded. */
function keyregEntries<T>(raw: unknown, decode: (s: string) => T): StreamEntry<T>[] {
  const out: StreamEntry<T>[] = [];
  if (!Array.isArray(raw)) return out;
  for (const e of raw) {
    if (!Array.isArray(e) || e[1] === null || e[1] === undefined) continue;
    out.push({ id: keyregString(e[0]), fields: keyregPairs(e[1], decode) });
  }
  return out;
}

/** Fields in name order, as the Go backend writes them. */
function keyregSortedFields<T>(family: string, what: string, fields: Record<string, T>): string[] {
  const names = Object.keys(fields).sort();
  if (names.length === 0) throw new InvalidValueError(`${family}: ${what} needs at least one field`);
  return names;
}

/** Runs a script by its SHA1, and by its text when the server does not have it (NOSCRIPT). */
async function keyregEval(c: KeyregClient, script: string, sha: string, keys: string[], args: string[]): Promise<unknown> {
  const rest = [String(keys.length), ...keys, ...args];
  try {
    return await keyregCall(c, keys[0]!, ["EVALSHA", sha, ...rest]);
  } catch (e) {
    if (!(e instanceof Error) || !e.message.startsWith("NOSCRIPT")) throw e;
    return keyregCall(c, keys[0]!, ["EVAL", script, ...rest]);
  }
}
