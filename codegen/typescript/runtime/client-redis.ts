
// ---- the client: node-redis v4+ (the "redis" package) ----

/** What the accessors need of a node-redis client (createClient). */
export interface KeyregNodeRedisClient {
  sendCommand(args: string[]): Promise<unknown>;
  multi(): { addCommand(args: string[]): unknown; exec(): Promise<unknown[]> };
}

/** What the accessors need of a node-redis cluster client (createCluster). */
export interface KeyregNodeRedisCluster {
  sendCommand(firstKey: string, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  multi(routing?: string): { addCommand(firstKey: string, args: string[]): unknown; exec(): Promise<unknown[]> };
  readonly masters: unknown;
}

/** A client or cluster client of node-redis, as createClient or createCluster returns it. */
export type KeyregClient = KeyregNodeRedisClient | KeyregNodeRedisCluster;

function keyregIsCluster(c: KeyregClient): c is KeyregNodeRedisCluster {
  return "masters" in c;
}

/** Sends one command whose first key is key. */
async function keyregCall(c: KeyregClient, key: string, args: string[]): Promise<unknown> {
  return keyregIsCluster(c) ? c.sendCommand(key, false, args) : c.sendCommand(args);
}

/** Runs the commands, all on key, in one MULTI/EXEC, and returns their replies. */
async function keyregTx(c: KeyregClient, key: string, cmds: string[][]): Promise<unknown[]> {
  let replies: unknown[];
  if (keyregIsCluster(c)) {
    const m = c.multi(key);
    for (const cmd of cmds) m.addCommand(key, cmd);
    replies = await m.exec();
  } else {
    const m = c.multi();
    for (const cmd of cmds) m.addCommand(cmd);
    replies = await m.exec();
  }
  for (const r of replies) if (r instanceof Error) throw r;
  return replies;
}
