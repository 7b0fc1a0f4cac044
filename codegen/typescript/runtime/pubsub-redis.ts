
// ---- Pub/Sub: node-redis ----

/** A node-redis Pub/Sub listener. */
export type KeyregListener = (message: string | Buffer, channel: string | Buffer) => unknown;

/**
 * What subscribers need of node-redis: a client used for nothing but
 * subscriptions (client.duplicate(), connected), since a subscribed client
 * runs no other command, or a cluster client (createCluster), which keeps
 * its own subscriber connections and sends SSUBSCRIBE to the slot's master.
 */
export interface KeyregNodeRedisSubscriber {
  subscribe(channels: string, listener: KeyregListener, bufferMode?: boolean): Promise<void>;
  unsubscribe(channels: string, listener: KeyregListener, bufferMode?: boolean): Promise<void>;
  sSubscribe(channels: string, listener: KeyregListener, bufferMode?: boolean): Promise<void>;
  sUnsubscribe(channels: string, listener: KeyregListener, bufferMode?: boolean): Promise<void>;
  pSubscribe(patterns: string, listener: KeyregListener, bufferMode?: boolean): Promise<void>;
  pUnsubscribe(patterns: string, listener: KeyregListener, bufferMode?: boolean): Promise<void>;
}

/** The connection subscribers take. */
export type KeyregSubscriber = KeyregNodeRedisSubscriber;

/** Sends one Pub/Sub command whose channel is channel (on a cluster, routed by it). */
async function keyregSend(c: KeyregClient, channel: string, args: Array<string | Buffer>): Promise<unknown> {
  // node-redis sends Buffers as they are; its declared type says string.
  return keyregIsCluster(c) ? c.sendCommand(channel, false, args as string[]) : c.sendCommand(args as string[]);
}

/**
 * Subscribes with mode to target (a channel, or a glob for psubscribe) and
 * resolves once the server confirmed it, to the unsubscribe function; on
 * gets the channel name and the message of each delivery.
 */
async function keyregSubscribe(
  c: KeyregSubscriber, mode: "subscribe" | "ssubscribe" | "psubscribe", target: string, bytes: boolean,
  on: (channel: string, raw: string | Buffer) => void,
): Promise<() => Promise<void>> {
  const listener: KeyregListener = (message, channel) => on(keyregString(channel), message);
  switch (mode) {
    case "subscribe":
      await c.subscribe(target, listener, bytes);
      return async () => c.unsubscribe(target, listener, bytes);
    case "ssubscribe":
      await c.sSubscribe(target, listener, bytes);
      return async () => c.sUnsubscribe(target, listener, bytes);
    case "psubscribe":
      await c.pSubscribe(target, listener, bytes);
      return async () => c.pUnsubscribe(target, listener, bytes);
  }
}
