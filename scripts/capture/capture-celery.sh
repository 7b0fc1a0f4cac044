#!/usr/bin/env bash
# Capture a keyspace written by Celery (Debian python3-celery) with the kombu
# redis broker and the redis result backend, into testdata/frameworks/celery.*
# With CELERY_GLOBAL_KEYPREFIX set, the transport options carry that prefix and
# the output is testdata/frameworks/celery-prefixed.*
source "$(dirname "$0")/common.sh"
start_redis
export REDIS_PORT CELERY_GLOBAL_KEYPREFIX=${CELERY_GLOBAL_KEYPREFIX:-}
cd "$CAPTURE_DIR"
VERSION=$($PY -c 'import celery, kombu; print("celery %s, kombu %s" % (celery.__version__, kombu.__version__))')

# a worker on the default queue only: jobs sent to "reports" stay queued
setsid $PY -m celery -A celery_app worker -Q celery -c 1 --pool solo -E -n w1@capture \
	--loglevel WARNING >"$CAPTURE_TMP/worker.log" 2>&1 &
WORKER_PID=$!
trap 'kill -9 -- -$WORKER_PID 2>/dev/null || true; stop_redis' EXIT

$PY - <<'PY'
from celery import chord, group
from celery_app import add, boom, flaky, slow, tsum, app

app.control.ping(timeout=30)  # waits for the worker; creates reply.celery.pidbox
ok = add.delay(2, 3); assert ok.get(timeout=60) == 5
bad = boom.delay()
try:
    bad.get(timeout=60)
except ValueError:
    pass
assert bad.state == "FAILURE"
r = flaky.delay(); assert r.get(timeout=60).startswith("ok")
g = group(add.s(i, i) for i in range(3)).apply_async(); g.get(timeout=60); g.save()
c = chord([add.s(i, 1) for i in range(3)])(tsum.s()); assert c.get(timeout=60) == 6
# a chord whose header cannot finish (one part sits in the unconsumed queue): .j/.s stay
pending = chord([add.s(1, 1), add.s(2, 2).set(queue="reports")])(tsum.s())
# priority steps: lists "reports\x06\x163", "\x06\x166", "\x06\x169" and bare "reports"
for p in (0, 3, 6, 9):
    add.apply_async((p, p), queue="reports", priority=p)
# a task left running so the broker has unacked deliveries
s = slow.delay()
import time
for _ in range(300):
    if s.state == "STARTED":
        break
    time.sleep(0.1)
assert s.state == "STARTED", s.state
# more than the worker prefetches (4 with the solo pool) while it is busy: the
# rest stays in the default queue's lists "celery" and "celery\x06\x166"
for i in range(6):
    add.apply_async((i, i), priority=0)
    add.apply_async((i, i), priority=6)
PY
if [ -n "${CELERY_GLOBAL_KEYPREFIX:-}" ]; then
	dump celery-prefixed "$VERSION, global_keyprefix $CELERY_GLOBAL_KEYPREFIX"
else
	dump celery "$VERSION"
fi
