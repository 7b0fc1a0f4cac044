// BullMQ capture: completed, failed (after retries), delayed, prioritized,
// waiting, active (locked), job logs, a flow, deduplication, a job scheduler,
// rate limiter, metrics and the events stream.
const { Queue, Worker, FlowProducer } = require("bullmq");
const dump = require("./dump");

const connection = { host: "127.0.0.1", port: Number(process.env.REDIS_PORT), maxRetriesPerRequest: null };
const version = require("bullmq/package.json").version;

async function main() {
  const mail = new Queue("mail", { connection });
  const reports = new Queue("reports", { connection }); // no worker: jobs stay waiting
  let release;
  const held = new Promise((r) => { release = r; });
  let started;
  const running = new Promise((r) => { started = r; });

  const worker = new Worker("mail", async (job) => {
    await job.log(`processing ${job.name}`);
    await job.updateProgress(50);
    if (job.name === "boom") throw new Error("capture: deliberate failure");
    if (job.name === "hold") { started(); await held; }
    return { sent: job.data.to };
  }, { connection, metrics: { maxDataPoints: 60 }, limiter: { max: 100, duration: 1000 } });

  const done = (n) => new Promise((resolve) => {
    let c = 0;
    const tick = () => { if (++c === n) resolve(); };
    worker.on("completed", tick);
    worker.on("failed", (job) => { if (job.attemptsMade >= job.opts.attempts) tick(); });
  });
  const finished = done(5);

  await mail.add("welcome", { to: "a@example.com" });
  await mail.add("welcome", { to: "b@example.com" }, { removeOnComplete: false });
  await mail.add("boom", { to: "c@example.com" }, { attempts: 2, backoff: { type: "fixed", delay: 10 } });
  await mail.add("dedup", { to: "d@example.com" }, { deduplication: { id: "digest-d" } });
  await mail.add("dedup", { to: "d@example.com" }, { deduplication: { id: "digest-d" } }); // ignored
  await mail.add("dedup-ttl", { to: "e@example.com" }, { deduplication: { id: "digest-e", ttl: 3600000 }, delay: 3600000 });
  await mail.add("later", { to: "f@example.com" }, { delay: 3600000 });
  await mail.upsertJobScheduler("hourly-digest", { every: 3600000 }, { name: "digest", data: { to: "all" } });

  const flow = new FlowProducer({ connection });
  await flow.add({
    name: "bundle", queueName: "mail", data: { to: "parent" },
    children: [
      { name: "welcome", queueName: "mail", data: { to: "child1" } },
      { name: "render", queueName: "reports", data: { page: 1 } }, // never processed: parent waits
    ],
  });
  await reports.add("render", { page: 2 }, { priority: 5 });
  await reports.add("render", { page: 3 });
  await finished;

  await mail.add("hold", { to: "held" });
  await running;
  dump("bullmq", version);
  release();
  await worker.close(true);
  await Promise.all([mail.close(), reports.close(), flow.close()]);
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
