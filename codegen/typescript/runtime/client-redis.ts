
// ---- the client: node-redis 4, 5 or 6 (the "redis" package) ----

/** What the accessors need of a node-redis client (createClient). */
export interface KeyregNodeRedisClient {
  sendCommand(args: string[]): Promise<unknown>;
  multi(): { addCommand(args: string[]): unknown; exec(): Promise<unknown[]> };
}

/**
 * What the accessors need of a node-redis cluster client (createCluster).
 * A transaction's addCommand takes (firstKey, args) in node-redis 4 and
 * (firstKey, isReadonly, args) from 5 on; the type admits both.
 */
export interface KeyregNodeRedisCluster {
  sendCommand(firstKey: string, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  multi(routing?: string): { addCommand(firstKey: string, argsOrReadonly: unknown, args?: unknown): unknown; exec(): Promise<unknown[]> };
  readonly masters: unknown;
}

/** A client or cluster client of node-redis, as createClient or createCluster returns it. */
export type KeyregClient = KeyregNodeRedisClient | KeyregNodeRedisCluster;

function keyregIsCluster(c: KeyregClient): c is KeyregNodeRedisCluster {
  return "masters" in c;
}

/** Whether c is node-redis 5 or later (withTypeMapping came with 5). */
function keyregNodeRedis5(c: KeyregClient): boolean {
  return "withTypeMapping" in c;
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
    const v5 = keyregNodeRedis5(c);
    for (const cmd of cmds) {
      if (v5) m.addCommand(key, false, cmd);
      else m.addCommand(key, cmd);
    }
    replies = await m.exec();
  } else {
    const m = c.multi();
    for (const cmd of cmds) m.addCommand(cmd);
    replies = await m.exec();
  }
  for (const r of replies) if (r instanceof Error) throw r;
  return replies;
}
