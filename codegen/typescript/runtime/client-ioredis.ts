
// ---- the client: ioredis ----

/** A Redis or Cluster client of ioredis. */
export type KeyregClient = Redis | Cluster;

/** Sends one command whose first key is key. */
async function keyregCall(c: KeyregClient, _key: string, args: string[]): Promise<unknown> {
  return c.call(args[0]!, args.slice(1));
}

/** Runs the commands, all on key, in one MULTI/EXEC, and returns their replies. */
async function keyregTx(c: KeyregClient, _key: string, cmds: string[][]): Promise<unknown[]> {
  const m = c.multi();
  for (const cmd of cmds) m.call(cmd[0]!, cmd.slice(1));
  const res = await m.exec();
  if (res === null) throw new Error("the transaction was aborted");
  return res.map(([err, reply]) => {
    if (err) throw err;
    return reply;
  });
}
