"""Job functions for capture-rq.sh (importable by the rq worker)."""
import os
import time


def add(x, y):
    return x + y


def boom():
    raise ValueError("capture: deliberate failure")


def flaky(marker):
    # fails on the first attempt, succeeds on the retry (state kept in Redis by the caller)
    from rq import get_current_job
    job = get_current_job()
    if job.retries_left is not None and job.retries_left >= 1:
        raise RuntimeError("capture: first attempt fails")
    return "ok " + marker


def slow():
    # held running while the keyspace is dumped; rq runs it in a work horse
    # that calls setsid, so it ends itself once its worker is killed
    parent = os.getppid()
    for _ in range(36000):
        if os.getppid() != parent:
            return
        time.sleep(0.1)
