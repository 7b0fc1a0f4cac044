"""Celery app for capture-celery.sh: redis broker (kombu) and redis result backend."""
import os
import time

from celery import Celery

url = "redis://127.0.0.1:%s/0" % os.environ["REDIS_PORT"]
app = Celery("capture", broker=url, backend=url)
transport = {"priority_steps": [0, 3, 6, 9], "queue_order_strategy": "priority"}
prefix = os.environ.get("CELERY_GLOBAL_KEYPREFIX", "")
if prefix:
    transport["global_keyprefix"] = prefix
app.conf.update(
    broker_transport_options=transport,
    result_backend_transport_options={"global_keyprefix": prefix} if prefix else {},
    task_track_started=True,
    task_default_priority=0,
    worker_send_task_events=True,
    task_send_sent_event=True,
)


@app.task
def add(x, y):
    return x + y


@app.task
def tsum(xs):
    return sum(xs)


@app.task
def boom():
    raise ValueError("capture: deliberate failure")


@app.task(bind=True, max_retries=3, default_retry_delay=0)
def flaky(self):
    if self.request.retries < 1:
        raise self.retry(exc=RuntimeError("capture: first attempt fails"))
    return "ok after %d retries" % self.request.retries


@app.task
def slow():
    # held running while the keyspace is dumped, so unacked* keys exist
    time.sleep(3600)
