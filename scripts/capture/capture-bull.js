// Bull (v4) capture: completed, failed after retries, delayed, prioritized,
// waiting, active (locked), job logs, progress, a repeatable job, a rate
// limiter and a paused queue. Queue names differ from the bullmq capture's so
// both files restore into one Redis under the shared prefix "bull".
const Queue = require("bull");
const dump = require("./dump");

const redis = { host: "127.0.0.1", port: Number(process.env.REDIS_PORT) };
const version = require("bull/package.json").version;

async function main() {
  const mail = new Queue("newsletter", { redis, limiter: { max: 100, duration: 1000 } });
  const reports = new Queue("exports", { redis }); // no processor: jobs stay waiting
  const archive = new Queue("archive", { redis });
  let release, started;
  const held = new Promise((r) => { release = r; });
  const running = new Promise((r) => { started = r; });
  let settled = 0, notify;
  const allSettled = new Promise((r) => { notify = r; });
  const tick = () => { if (++settled === 3) notify(); };
  mail.on("completed", tick);
  mail.on("failed", (job) => { if (job.attemptsMade >= job.opts.attempts) tick(); });

  mail.process("*", async (job) => {
    await job.log(`processing ${job.name}`);
    await job.progress(50);
    if (job.name === "boom") throw new Error("capture: deliberate failure");
    if (job.name === "hold") { started(); await held; }
    return { sent: job.data.to };
  });

  await mail.add("welcome", { to: "a@example.com" });
  await mail.add("welcome", { to: "b@example.com" });
  await mail.add("boom", { to: "c@example.com" }, { attempts: 2, backoff: 10 });
  await mail.add("later", { to: "d@example.com" }, { delay: 3600000 });
  await mail.add("digest", { to: "all" }, { repeat: { cron: "0 * * * *" } });
  await mail.add("custom", { to: "e@example.com" }, { jobId: "order-42", delay: 3600000 });
  await reports.add("render", { page: 1 }, { priority: 3 });
  await reports.add("render", { page: 2 });
  await archive.add("zip", { day: 1 });
  await archive.pause();
  await allSettled;

  await mail.add("hold", { to: "held" });
  await running;
  dump("bull", version);
  release();
  await Promise.all([mail.close(), reports.close(), archive.close()]);
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
