
// ---- Pub/Sub ----

function keyregDecodeJSON(channel: string, s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    throw new InvalidValueError(`${channel}: the message does not decode as JSON`);
  }
}

/** A bytes message as the client sends it. */
function keyregEncodeBytes(channel: string, v: Uint8Array): Buffer {
  if (!(v instanceof Uint8Array)) throw new InvalidValueError(`${channel}: the message is not a Uint8Array`);
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** A received bytes message, undecoded. */
function keyregBytes(raw: string | Buffer): Uint8Array {
  return typeof raw === "string" ? Buffer.from(raw) : raw;
}

function keyregError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
