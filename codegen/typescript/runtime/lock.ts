
// ---- locks (docs/locks.md) ----

/** Thrown by tryAcquire functions when another holder has the lock. */
export class LockHeldError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LockHeldError";
  }
}

/** Thrown by release and extend when the lock is no longer held with this token. */
export class LockLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LockLostError";
  }
}

/** Options of a lock acquisition. */
export interface LockOptions {
  /** The lease in milliseconds: at most the family's maximum TTL, its default. */
  readonly leaseMs?: number;
  /** Bounds of the jittered, doubling wait of a blocking acquire: 10ms and 1000ms by default. */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  /** Ends a blocking acquire (AbortSignal.timeout(ms) for a deadline). */
  readonly signal?: AbortSignal;
}

// The lock scripts. Keys travel only in KEYS and the token and the lease
// only in ARGV, so the text is constant: the server caches it under one
// SHA1, and no key or token can change what it runs.
const keyregAcquireScript = `if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	return 1
end
return false`;
const keyregAcquireFencedScript = `if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	return redis.call("INCR", KEYS[2])
end
return false`;
const keyregReleaseScript = `if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`;
const keyregExtendScript = `if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`;

/** A held lock. */
export class KeyregLock {
  constructor(
    readonly family: string,
    /** The lock's key. */
    readonly key: string,
    /** The random token (128 bits) that marks this holder in the key. */
    readonly token: string,
    /** The lease the lock was acquired with, in milliseconds; extend re-arms it. */
    readonly leaseMs: number,
    protected readonly fenceValue: number,
  ) {}

  /** Deletes the lock if this holder still holds it; otherwise leaves the key alone and throws a LockLostError. */
  async release(client: KeyregClient): Promise<void> {
    const n = await keyregEval(client, keyregReleaseScript, KEYREG_RELEASE_SHA, [this.key], [this.token]);
    if (Number(n) !== 1) throw new LockLostError(`releasing ${this.family}: the lock is no longer held`);
  }

  /** Re-arms the lease from now if this holder still holds the lock; otherwise throws a LockLostError. */
  async extend(client: KeyregClient): Promise<void> {
    const n = await keyregEval(client, keyregExtendScript, KEYREG_EXTEND_SHA, [this.key], [this.token, String(this.leaseMs)]);
    if (Number(n) !== 1) throw new LockLostError(`extending ${this.family}: the lock is no longer held`);
  }
}

function keyregToken(): string {
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** One attempt to take key (and increment fenceKey with it, unless it is ""). */
async function keyregTryLock(
  c: KeyregClient, family: string, key: string, fenceKey: string, maxLeaseMs: number, opts: LockOptions | undefined,
): Promise<{ token: string; leaseMs: number; fence: number }> {
  const leaseMs = opts?.leaseMs ?? Math.floor(maxLeaseMs);
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) throw new TTLError(`${family}: lease ${leaseMs}ms must be a whole number of at least 1ms`);
  if (leaseMs > maxLeaseMs) throw new TTLError(`${family}: lease ${leaseMs}ms exceeds the maximum ${maxLeaseMs}ms`);
  const token = keyregToken();
  const res = fenceKey === ""
    ? await keyregEval(c, keyregAcquireScript, KEYREG_ACQUIRE_SHA, [key], [token, String(leaseMs)])
    : await keyregEval(c, keyregAcquireFencedScript, KEYREG_ACQUIRE_FENCED_SHA, [key, fenceKey], [token, String(leaseMs)]);
  if (res === null || res === undefined) throw new LockHeldError(`acquiring ${family}: the lock is held by another holder`);
  return { token, leaseMs, fence: fenceKey === "" ? 0 : Number(res) };
}

/** Retries try while the lock is held, with a jittered wait doubling from retryMinMs to retryMaxMs, until opts.signal aborts. */
async function keyregLockWait<T>(opts: LockOptions | undefined, attempt: () => Promise<T>): Promise<T> {
  let wait = opts?.retryMinMs ?? 10;
  const most = Math.max(opts?.retryMaxMs ?? 1000, wait);
  for (;;) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof LockHeldError)) throw e;
      if (opts?.signal?.aborted) throw new LockHeldError(`${e.message} (${String(opts.signal.reason)})`);
      const d = wait / 2 + Math.random() * (wait / 2);
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, d);
        function done() {
          clearTimeout(t);
          opts?.signal?.removeEventListener("abort", done);
          resolve();
        }
        opts?.signal?.addEventListener("abort", done);
      });
      wait = Math.min(2 * wait, most);
    }
  }
}
