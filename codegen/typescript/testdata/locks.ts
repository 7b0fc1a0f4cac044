// The lock and stream test of the generated module for examples/locks,
// run under node against a real server: 8 workers (each its own
// connection) × 100 acquisitions of one fenced lock; an expired holder's
// release and extend; a lease refusal; the stream consumer helpers.
// Environment: KEYREG_CLIENT (redis or ioredis), KEYREG_MODE (standalone or
// cluster), KEYREG_ADDR (host:port of the server or of one cluster node),
// KEYREG_RUN (a name for this run's stream; runs share the servers).
import * as redisMod from "./locks_redis.js";
import * as ioredisMod from "./locks_ioredis.js";
import { createClient, createCluster } from "redis";
import { Cluster, Redis } from "ioredis";

const clientName = process.env.KEYREG_CLIENT!;
const runName = process.env.KEYREG_RUN ?? clientName;
const cluster = process.env.KEYREG_MODE === "cluster";
const [host, port] = process.env.KEYREG_ADDR!.split(":") as [string, string];

function fail(msg: string): never {
  throw new Error(msg);
}

// Both modules have the same functions; the client type differs.
type Mod = typeof redisMod;
const mod: Mod = (clientName === "redis" ? redisMod : ioredisMod) as unknown as Mod;

async function connect(): Promise<{ c: redisMod.KeyregClient & ioredisMod.KeyregClient; close: () => Promise<void> }> {
  if (clientName === "redis") {
    if (cluster) {
      const c = createCluster({ rootNodes: [{ url: `redis://${host}:${port}` }] });
      await c.connect();
      const typed: redisMod.KeyregClient = c;
      return { c: typed as never, close: async () => void (await c.quit()) };
    }
    const c = createClient({ url: `redis://${host}:${port}` });
    await c.connect();
    const typed: redisMod.KeyregClient = c;
    return { c: typed as never, close: async () => void (await c.quit()) };
  }
  if (cluster) {
    const c = new Cluster([{ host, port: Number(port) }]);
    const typed: ioredisMod.KeyregClient = c;
    return { c: typed as never, close: async () => void (await c.quit()) };
  }
  const c = new Redis({ host, port: Number(port) });
  const typed: ioredisMod.KeyregClient = c;
  return { c: typed as never, close: async () => void (await c.quit()) };
}

async function until(what: string, cond: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await cond())) {
    if (Date.now() > deadline) fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const main = async () => {
  const conns = await Promise.all(Array.from({ length: 8 }, () => connect()));
  const c0 = conns[0]!.c;
  const invoice = 7;
  let holders = 0, maxHolders = 0;
  const fences: number[] = [];
  await Promise.all(conns.map(async ({ c }) => {
    for (let i = 0; i < 100; i++) {
      const l = await mod.acquireInvoiceLock(c, invoice, { retryMinMs: 1, retryMaxMs: 8 });
      holders++;
      maxHolders = Math.max(maxHolders, holders);
      fences.push(l.fence());
      await mod.getInvoiceFence(c, invoice); // yield to the other workers while holding
      holders--;
      await l.release(c);
    }
  }));
  if (maxHolders !== 1) fail(`${maxHolders} holders at once`);
  if (fences.length !== 800) fail(`${fences.length} acquisitions`);
  for (let i = 1; i < fences.length; i++) {
    if (fences[i] !== fences[0]! + i) fail(`fence ${i} is ${fences[i]} after ${fences[i - 1]}`);
  }
  const last = await mod.getInvoiceFence(c0, invoice);
  if (last !== fences[fences.length - 1]) fail(`fence key holds ${last}`);

  // An expired holder's release and extend leave the new holder's key alone.
  const a = await mod.tryAcquireInvoiceLock(c0, 8, { leaseMs: 30 });
  await until("the lease to expire", async () => (await mod.tryAcquireInvoiceLock(c0, 8).then(
    async (b) => {
      for (const [what, op] of [["release", () => a.release(c0)], ["extend", () => a.extend(c0)]] as const) {
        try {
          await op();
          fail(`the expired holder's ${what} succeeded`);
        } catch (e) {
          if (!(e instanceof mod.LockLostError)) throw e;
        }
      }
      try {
        await mod.tryAcquireInvoiceLock(c0, 8);
        fail("a second holder took the new holder's lock");
      } catch (e) {
        if (!(e instanceof mod.LockHeldError)) throw e;
      }
      if (b.fence() !== a.fence() + 1) fail(`fences ${a.fence()} then ${b.fence()}`);
      await b.release(c0);
      return true;
    },
    (e) => {
      if (e instanceof mod.LockHeldError) return false;
      throw e;
    })));

  // A lease longer than the registry's is refused before anything is sent.
  try {
    await mod.tryAcquireReportLock(c0, "r", { leaseMs: mod.REPORT_LOCK_MAX_TTL_MS + 1 });
    fail("a longer lease was accepted");
  } catch (e) {
    if (!(e instanceof mod.TTLError) || !(e instanceof RangeError)) throw e;
  }
  const r = await mod.tryAcquireReportLock(c0, "x\") redis.call(\"FLUSHALL\") --", {});
  await r.extend(c0);
  await r.release(c0);

  // Streams: MAXLEN ~, groups, read, ack, claim.
  const q = "q" + runName + (cluster ? "c" : "s");
  const id = await mod.xAddBillingJobs(c0, q, { task: "charge", invoice_id: "1" });
  if (!/^[0-9]+-[0-9]+$/.test(id)) fail(`xAdd returned ${id}`);
  const key = mod.buildBillingJobs(q);
  if (clientName === "redis") {
    const raw = c0 as unknown as { sendCommand: (...a: unknown[]) => Promise<unknown> };
    for (const g of ["workers", "archive"]) {
      await (cluster ? raw.sendCommand(key, false, ["XGROUP", "CREATE", key, g, "0"]) : raw.sendCommand(["XGROUP", "CREATE", key, g, "0"]));
    }
  } else {
    for (const g of ["workers", "archive"]) await (c0 as unknown as Redis).call("XGROUP", ["CREATE", key, g, "0"]);
  }
  // The schema is checked before anything is sent: the error names the
  // JSON pointer, never the value.
  for (const [fields, pointer] of [[{ task: "s3cr3t-value" }, "#/task"], [{ task: "charge", extra: "s3cr3t-value" }, "#"], [{ invoice_id: "1" }, "#"]] as const) {
    try {
      await mod.xAddBillingJobs(c0, q, fields as Record<string, string>);
      fail(`xAdd accepted ${JSON.stringify(fields)}`);
    } catch (e) {
      if (!(e instanceof mod.SchemaError) || e.pointer !== pointer || e.message.includes("s3cr3t")) throw e;
    }
  }
  mod.checkBillingJobs({ task: "refund" });
  const got = await mod.readGroupBillingJobs(c0, q, mod.BILLING_JOBS_GROUP_WORKERS, "w1", 10, -1);
  if (got.length !== 1 || got[0]!.id !== id || got[0]!.fields["task"] !== "charge") fail(`readGroup: ${JSON.stringify(got)}`);
  await new Promise((r) => setTimeout(r, 5)); // max_consumer_idle is 1ms
  const claimed = await mod.claimBillingJobs(c0, q, mod.BILLING_JOBS_GROUP_WORKERS, "w2", 10);
  if (claimed.length !== 1 || claimed[0]!.id !== id) fail(`claim: ${JSON.stringify(claimed)}`);
  if ((await mod.ackBillingJobs(c0, q, mod.BILLING_JOBS_GROUP_WORKERS, [id])) !== 1) fail("ack");
  for (const bad of [() => mod.readGroupBillingJobs(c0, q, "nope", "w", 1, -1), () => mod.claimBillingJobs(c0, q, mod.BILLING_JOBS_GROUP_ARCHIVE, "w", 1)]) {
    try {
      await bad();
      fail("an undeclared group or one without max_consumer_idle was accepted");
    } catch (e) {
      if (!(e instanceof mod.InvalidValueError)) throw e;
    }
  }
  // Trimming, on the cluster only: MAXLEN ~ leaves a few entries over
  // max_len, which the audit of the standalone server would report.
  if (cluster) for (let i = 0; i < 1500; i++) await mod.xAddBillingJobs(c0, q, { task: "refund" });
  await Promise.all(conns.map((x) => x.close()));
  console.log(JSON.stringify({ acquisitions: fences.length, first: fences[0], last: fences[fences.length - 1], stream: key }));
};
await main();
