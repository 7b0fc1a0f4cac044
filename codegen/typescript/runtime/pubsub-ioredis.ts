
// ---- Pub/Sub: ioredis ----

/**
 * The connection subscribers take: an ioredis Redis used for nothing but
 * subscriptions (a subscribed connection runs no other command), or a
 * Cluster, which keeps its own subscriber connection; for sharded
 * channels a Cluster created with shardedSubscribers: true.
 */
export type KeyregSubscriber = Redis | Cluster;

/** Sends one Pub/Sub command whose channel is channel (on a Cluster, routed by its key). */
async function keyregSend(c: KeyregClient, _channel: string, args: Array<string | Buffer>): Promise<unknown> {
  return c.call(args[0] as string, args.slice(1));
}

/** How many subscriptions of this module each connection holds, by command and target. */
const keyregSubscriptions = new WeakMap<object, Map<string, number>>();

/**
 * Subscribes with mode to target (a channel, or a glob for psubscribe) and
 * resolves once the server confirmed it, to the unsubscribe function; on
 * gets the channel name and the message of each delivery. The events of a
 * connection are its own: the listener takes only target's. The server
 * holds one subscription per target and connection, so the last of this
 * module's subscriptions to a target unsubscribes it.
 */
async function keyregSubscribe(
  c: KeyregSubscriber, mode: "subscribe" | "ssubscribe" | "psubscribe", target: string, bytes: boolean,
  on: (channel: string, raw: string | Buffer) => void,
): Promise<() => Promise<void>> {
  const s = c as Redis; // Redis and Cluster share these commands and events
  const pattern = mode === "psubscribe";
  const event = (mode === "subscribe" ? "message" : mode === "ssubscribe" ? "smessage" : "pmessage") + (bytes ? "Buffer" : "");
  const listener = pattern
    ? (glob: string | Buffer, channel: string | Buffer, message: string | Buffer) => {
      if (keyregString(glob) === target) on(keyregString(channel), message);
    }
    : (channel: string | Buffer, message: string | Buffer) => {
      const name = keyregString(channel);
      if (name === target) on(name, message);
    };
  let held = keyregSubscriptions.get(c);
  if (held === undefined) keyregSubscriptions.set(c, (held = new Map()));
  const id = mode + " " + target;
  held.set(id, (held.get(id) ?? 0) + 1);
  const release = (): boolean => {
    const n = (held.get(id) ?? 1) - 1;
    if (n > 0) held.set(id, n);
    else held.delete(id);
    return n <= 0;
  };
  s.on(event, listener);
  try {
    await (mode === "subscribe" ? s.subscribe(target) : mode === "ssubscribe" ? s.ssubscribe(target) : s.psubscribe(target));
  } catch (e) {
    s.off(event, listener);
    release();
    throw e;
  }
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    s.off(event, listener);
    if (!release()) return;
    await (mode === "subscribe" ? s.unsubscribe(target) : mode === "ssubscribe" ? s.sunsubscribe(target) : s.punsubscribe(target));
  };
}
