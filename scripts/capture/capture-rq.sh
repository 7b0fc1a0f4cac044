#!/usr/bin/env bash
# Capture a keyspace written by RQ (Debian python3-rq) into testdata/frameworks/rq.*
source "$(dirname "$0")/common.sh"
start_redis
export REDIS_PORT
cd "$CAPTURE_DIR"
VERSION=$($PY -c 'import rq; print(rq.__version__)')
URL=redis://127.0.0.1:$REDIS_PORT/0

# a long-running worker with the scheduler, on queues "default" and "high"
setsid $PY -m rq.cli worker -u "$URL" --with-scheduler -n capture-worker high default \
	>"$CAPTURE_TMP/worker.log" 2>&1 &
WORKER_PID=$!
trap 'kill -9 -- -$WORKER_PID 2>/dev/null || true; stop_redis' EXIT

$PY - <<'PY'
import os, time
from datetime import timedelta
from redis import Redis
from rq import Queue, Retry
from rq.job import Job
import rq_jobs

r = Redis(host="127.0.0.1", port=int(os.environ["REDIS_PORT"]))
q, high, low = Queue("default", connection=r), Queue("high", connection=r), Queue("low", connection=r)

def wait(job, states, n=600):
    for _ in range(n):
        job.refresh()
        if job.get_status() in states:
            return job.get_status()
        time.sleep(0.1)
    raise SystemExit("job %s stuck in %s" % (job.id, job.get_status()))

ok = q.enqueue(rq_jobs.add, 2, 3, result_ttl=3600)
fail = q.enqueue(rq_jobs.boom)
retried = high.enqueue(rq_jobs.flaky, "x", retry=Retry(max=2))
assert wait(ok, ("finished",)) == "finished"
assert wait(fail, ("failed",)) == "failed"
assert wait(retried, ("finished",)) == "finished"
# dependencies: a finished parent and a child; a parent that never runs and a deferred child
child = q.enqueue(rq_jobs.add, 1, 1, depends_on=ok)
parked = low.enqueue(rq_jobs.add, 5, 5)            # "low" has no worker: stays queued
deferred = q.enqueue(rq_jobs.add, 6, 6, depends_on=parked)
# scheduled far in the future: sits in rq:scheduled:default
later = q.enqueue_in(timedelta(hours=1), rq_jobs.add, 7, 7)
# a running job, so rq:wip:high holds it while we dump
running = high.enqueue(rq_jobs.slow, job_timeout=7200)
wait(child, ("finished",))
wait(running, ("started",))
assert deferred.get_status() == "deferred", deferred.get_status()
assert later.get_status() == "scheduled", later.get_status()
PY
dump rq "$VERSION"
