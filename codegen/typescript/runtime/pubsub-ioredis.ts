
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

/**
 * Subscribes with mode to target (a channel, or a glob for psubscribe) and
 * resolves once the server confirmed it, to the unsubscribe function; on
 * gets the channel name and the message of each delivery. The events of a
 * connection are its own: the listener takes only target's.
 */
async function keyregSubscribe(
  c: KeyregSubscriber, mode: "subscribe" | "ssubscribe" | "psubscribe", target: string, bytes: boolean,
  on: (channel: string, raw: string | Buffer) => void,
): Promise<() => Promise<void>> {
  const s = c as Redis; // Redis and Cluster share these commands and events
  const suffix = bytes ? "Buffer" : "";
  if (mode === "psubscribe") {
    const event = "pmessage" + suffix;
    const listener = (pattern: string | Buffer, channel: string | Buffer, message: string | Buffer) => {
      if (keyregString(pattern) === target) on(keyregString(channel), message);
    };
    s.on(event, listener);
    try {
      await s.psubscribe(target);
    } catch (e) {
      s.off(event, listener);
      throw e;
    }
    return async () => {
      s.off(event, listener);
      await s.punsubscribe(target);
    };
  }
  const event = (mode === "subscribe" ? "message" : "smessage") + suffix;
  const listener = (channel: string | Buffer, message: string | Buffer) => {
    const name = keyregString(channel);
    if (name === target) on(name, message);
  };
  s.on(event, listener);
  try {
    await (mode === "subscribe" ? s.subscribe(target) : s.ssubscribe(target));
  } catch (e) {
    s.off(event, listener);
    throw e;
  }
  return async () => {
    s.off(event, listener);
    await (mode === "subscribe" ? s.unsubscribe(target) : s.sunsubscribe(target));
  };
}
