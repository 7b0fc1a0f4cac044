// The Pub/Sub round trips of the generated module for testdata/pubsub,
// run under node against a real server: for each channel (classic,
// sharded, pattern, bytes, deprecated) a generated subscriber receives
// exactly what the generated publisher sent; an invalid message is refused
// and sends nothing (the commandstats of every node move by exactly one
// PUBLISH or SPUBLISH for the pair); a message that fails the schema or
// whose channel does not parse, published raw, goes to onError and the
// next valid one is still delivered.
// Environment: KEYREG_CLIENT (redis or ioredis), KEYREG_MODE (standalone or
// cluster), KEYREG_NODES (host:port of every node, the first one the
// clients connect to), KEYREG_ROOM (the room of the sharded channel),
// KEYREG_OWNER (host:port of the master of that room's slot).
import * as redisMod from "./pubsub_redis.js";
import * as ioredisMod from "./pubsub_ioredis.js";
import { createClient, createCluster } from "redis";
import { Cluster, Redis } from "ioredis";

const clientName = process.env.KEYREG_CLIENT!;
const cluster = process.env.KEYREG_MODE === "cluster";
const nodes = process.env.KEYREG_NODES!.split(",");
const room = Number(process.env.KEYREG_ROOM!);
const owner = process.env.KEYREG_OWNER!;
const [host, port] = nodes[0]!.split(":") as [string, string];

function fail(msg: string): never {
  throw new Error(msg);
}

type Mod = typeof redisMod;
const mod: Mod = (clientName === "redis" ? redisMod : ioredisMod) as unknown as Mod;

interface Conn {
  pub: redisMod.KeyregClient & ioredisMod.KeyregClient;
  sub: redisMod.KeyregSubscriber & ioredisMod.KeyregSubscriber;
  raw: (cmd: string, channel: string, data: string) => Promise<unknown>;
  close: () => Promise<void>;
}

async function connect(): Promise<Conn> {
  if (clientName === "redis") {
    if (cluster) {
      const pub = createCluster({ rootNodes: [{ url: `redis://${host}:${port}` }] });
      const sub = createCluster({ rootNodes: [{ url: `redis://${host}:${port}` }] });
      await pub.connect();
      await sub.connect();
      const p: redisMod.KeyregClient = pub, s: redisMod.KeyregSubscriber = sub;
      return {
        pub: p as never, sub: s as never,
        raw: (cmd, channel, data) => pub.sendCommand(channel, false, [cmd, channel, data]),
        close: async () => void (await Promise.all([pub.quit(), sub.quit()])),
      };
    }
    const pub = createClient({ url: `redis://${host}:${port}` });
    await pub.connect();
    const sub = pub.duplicate();
    await sub.connect();
    const p: redisMod.KeyregClient = pub, s: redisMod.KeyregSubscriber = sub;
    return {
      pub: p as never, sub: s as never,
      raw: (cmd, channel, data) => pub.sendCommand([cmd, channel, data]),
      close: async () => void (await Promise.all([pub.quit(), sub.quit()])),
    };
  }
  if (cluster) {
    const pub = new Cluster([{ host, port: Number(port) }]);
    const sub = new Cluster([{ host, port: Number(port) }], { shardedSubscribers: true });
    // The sharded subscribers connect after the slots are known.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for the sharded subscribers")), 10_000);
      sub.once("subscribersReady", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const p: ioredisMod.KeyregClient = pub, s: ioredisMod.KeyregSubscriber = sub;
    return {
      pub: p as never, sub: s as never,
      raw: (cmd, channel, data) => pub.call(cmd, [channel, data]),
      close: async () => void (await Promise.all([pub.quit(), sub.quit()])),
    };
  }
  const pub = new Redis({ host, port: Number(port) });
  const sub = new Redis({ host, port: Number(port) });
  const p: ioredisMod.KeyregClient = pub, s: ioredisMod.KeyregSubscriber = sub;
  return {
    pub: p as never, sub: s as never,
    raw: (cmd, channel, data) => pub.call(cmd, [channel, data]),
    close: async () => void (await Promise.all([pub.quit(), sub.quit()])),
  };
}

async function until(what: string, cond: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await cond())) {
    if (Date.now() > deadline) fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// The PUBLISH and SPUBLISH calls of every node, summed.
async function stats(): Promise<{ publish: number; spublish: number }> {
  const out = { publish: 0, spublish: 0 };
  for (const n of nodes) {
    const [h, p] = n.split(":") as [string, string];
    const c = new Redis({ host: h, port: Number(p) });
    const info = await c.info("commandstats");
    await c.quit();
    for (const k of ["publish", "spublish"] as const) {
      const m = new RegExp(`^cmdstat_${k}:calls=([0-9]+)`, "m").exec(info);
      if (m) out[k] += Number(m[1]);
    }
  }
  return out;
}

function norm(v: unknown): unknown {
  if (v instanceof Uint8Array) return { bytes: Array.from(v) };
  if (typeof v === "bigint") return String(v);
  if (Array.isArray(v)) return v.map(norm);
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x)]));
  return v;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}

interface Case<M> {
  name: string;
  sharded: boolean;
  channel: string; // the concrete channel name
  parsed: unknown;
  subscribe: (c: Conn, on: (d: { channel: unknown; message: unknown }) => void, err: (e: Error) => void) => Promise<() => Promise<void>>;
  publish: (c: Conn, m: M) => Promise<number>;
  valid: [M, M];
  invalid: M;
  invalidError: new (...a: never[]) => Error;
  // Published raw: a message the subscriber must refuse, with its error.
  rawBad: [string, string, new (...a: never[]) => Error][];
}

const blob1 = new Uint8Array([0xff, 0x00, 0x80, 0xc3, 0x28, 0x7b]);
const blob2 = new Uint8Array([0x93, 0x01, 0x02, 0x03]);
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each case has its own message type
const cases: Case<any>[] = [
  {
    name: "room-events", sharded: true, channel: mod.buildRoomEventsChannel(room), parsed: { roomId: room },
    subscribe: (c, on, err) => mod.subscribeRoomEvents(c.sub, room, on, err),
    publish: (c, m) => mod.publishRoomEvents(c.pub, room, m),
    valid: [{ kind: "said", at: 1, text: "hi ✓" }, { kind: "left", at: 2 }],
    invalid: { kind: "shouted", at: 1 } as never, invalidError: mod.SchemaError,
    rawBad: [["", '{"kind":"said","at":-1}', mod.SchemaError], ["", "{not json", mod.InvalidValueError]],
  } as Case<redisMod.RoomEventsMessage>,
  {
    name: "notices", sharded: false, channel: mod.buildNoticesChannel("acme"), parsed: { tenant: "acme" },
    subscribe: (c, on, err) => mod.subscribeNotices(c.sub, "acme", on, err),
    publish: (c, m) => mod.publishNotices(c.pub, "acme", m),
    valid: [{ level: "info" }, { level: "warn", extra: [1, 2] }],
    invalid: { level: "panic" } as never, invalidError: mod.SchemaError,
    rawBad: [["", '{"level":"debug"}', mod.SchemaError]],
  } as Case<redisMod.NoticesMessage>,
  {
    name: "presence", sharded: false, channel: mod.buildPresenceChannel(42), parsed: { userId: 42 },
    subscribe: (c, on, err) => mod.subscribePresence(c.sub, on, err),
    publish: (c, m) => mod.publishPresence(c.pub, 42, m),
    valid: ["online", "away"],
    invalid: "" as never, invalidError: mod.SchemaError,
    rawBad: [["", "", mod.SchemaError], ["v1:presence:not-an-int", "online", mod.InvalidKeyError]],
  } as Case<string>,
  {
    name: "blobs", sharded: true, channel: mod.buildBlobsChannel(room), parsed: { shard: room },
    subscribe: (c, on, err) => mod.subscribeBlobs(c.sub, room, on, err),
    publish: (c, m) => mod.publishBlobs(c.pub, room, m),
    valid: [blob1, blob2],
    invalid: "not bytes" as never, invalidError: mod.InvalidValueError,
    rawBad: [],
  } as Case<Uint8Array>,
  {
    name: "old-alerts", sharded: false, channel: mod.buildOldAlertsChannel(7), parsed: { id: 7 },
    subscribe: (c, on, err) => mod.subscribeOldAlerts(c.sub, 7, on, err),
    publish: (c, m) => mod.publishOldAlerts(c.pub, 7, m),
    valid: ["a", "b"],
    invalid: 12 as never, invalidError: mod.InvalidValueError,
    rawBad: [],
  } as Case<string>,
];

const main = async () => {
  const c = await connect();
  const report: Record<string, unknown> = {};
  for (const tc of cases) {
    const got: { channel: unknown; message: unknown }[] = [];
    const errs: Error[] = [];
    const unsubscribe = await tc.subscribe(c, (d) => got.push(d), (e) => errs.push(e));
    if (tc.name === "room-events" && cluster) {
      // The SSUBSCRIBE is registered on the slot's owner.
      const [h, p] = owner.split(":") as [string, string];
      const o = new Redis({ host: h, port: Number(p) });
      report["ownerShardChannels"] = await o.call("PUBSUB", ["SHARDCHANNELS"]);
      await o.quit();
    }
    // Invalid, then valid: one PUBLISH or SPUBLISH in all.
    const before = await stats();
    try {
      await tc.publish(c, tc.invalid);
      fail(`${tc.name}: an invalid message was published`);
    } catch (e) {
      if (!(e instanceof tc.invalidError)) throw e;
    }
    const n = await tc.publish(c, tc.valid[0]);
    const after = await stats();
    const dp = after.publish - before.publish, ds = after.spublish - before.spublish;
    if (tc.sharded ? ds !== 1 || dp !== 0 : dp !== 1 || ds !== 0) fail(`${tc.name}: publish +${dp}, spublish +${ds}`);
    // A classic PUBLISH on a cluster counts the receivers of one node only.
    if (n !== 1 && !(cluster && !tc.sharded)) fail(`${tc.name}: ${n} receivers`);
    await until(`${tc.name}: the first delivery`, () => got.length >= 1);
    if (!same(got[0]!.message, tc.valid[0]) || !same(got[0]!.channel, tc.parsed)) fail(`${tc.name}: got ${JSON.stringify(got[0])}`);
    // Raw messages the subscriber refuses; the subscription continues.
    for (const [i, [channel, data, cls]] of tc.rawBad.entries()) {
      await c.raw(tc.sharded ? "SPUBLISH" : "PUBLISH", channel || tc.channel, data);
      await until(`${tc.name}: error ${i}`, () => errs.length >= i + 1);
      if (!(errs[i] instanceof cls) || errs[i]!.message.includes(data || "\u0000")) fail(`${tc.name}: error ${errs[i]}`);
    }
    // Another subscription to the same channel on the same connection,
    // ended (twice): the first one stays subscribed.
    const extra: unknown[] = [];
    const unsubscribeExtra = await tc.subscribe(c, (d) => extra.push(d), (e) => extra.push(e));
    await unsubscribeExtra();
    await unsubscribeExtra();
    await tc.publish(c, tc.valid[1]);
    await until(`${tc.name}: the second delivery`, () => got.length >= 2);
    if (!same(got[1]!.message, tc.valid[1]) || got.length !== 2 || errs.length !== tc.rawBad.length) {
      fail(`${tc.name}: got ${got.length} deliveries, ${errs.length} errors`);
    }
    if (extra.length !== 0) fail(`${tc.name}: an ended subscription got ${extra.length} messages`);
    await unsubscribe();
    report[tc.name] = { deliveries: got.length, errors: errs.length, receivers: n };
  }
  await c.close();
  console.log(JSON.stringify(report));
};
await main();
