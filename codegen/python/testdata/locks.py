"""Lock tests of the generated module of examples/locks/keys.yaml:
python3 locks.py <module dir> <redis URL> <standalone|cluster> worker <n>
    acquires invoice 7's lock n times, checks that it is the only holder
    inside, and prints "fence F" for each acquisition;
python3 locks.py <module dir> <redis URL> <standalone|cluster> expired
    checks that an expired holder's release leaves the new holder's key
    alone, and the lease bounds; prints "ok"."""

from __future__ import annotations

import sys
import time
import typing

import redis
import redis.cluster
import redis.exceptions

sys.path.insert(0, sys.argv[1])
import keys_gen as k  # noqa: E402

url, mode, what = sys.argv[2], sys.argv[3], sys.argv[4]
c: typing.Any
if mode == "cluster":
    c = redis.cluster.RedisCluster.from_url(url)
else:
    c = redis.Redis.from_url(url)

INSIDE = "test:{7}:inside"  # not a registry key: the test's own witness


def worker(n: int) -> None:
    lock = k.invoice_lock(c, 7, timeout=10, blocking_timeout=60)
    for _ in range(n):
        if not lock.acquire():
            raise SystemExit("acquire timed out")
        if c.incr(INSIDE) != 1:
            raise SystemExit("two holders inside the lock")
        fence = lock.fence
        c.decr(INSIDE)
        lock.release()
        print(f"fence {fence}", flush=True)


if what == "worker":
    worker(int(sys.argv[5]))
elif what == "expired":
    a = k.invoice_lock(c, 8, timeout=0.05, blocking=False)
    assert a.acquire(), "a"
    fa = a.fence
    assert fa is not None
    key = k.build_invoice_lock(8)
    deadline = time.monotonic() + 5
    while c.exists(key):
        if time.monotonic() > deadline:
            raise SystemExit("the lease did not expire")
        time.sleep(0.01)
    b = k.invoice_lock(c, 8, blocking=False)
    assert b.acquire(), "b"
    assert b.fence == fa + 1, (fa, b.fence)
    try:
        a.release()
        raise SystemExit("the expired holder's release succeeded")
    except redis.exceptions.LockNotOwnedError:
        pass
    assert b.owned(), "the new holder lost its key"
    tok = b.local.token
    assert c.get(key) == (tok.encode() if isinstance(tok, str) else tok), "the new holder's token was touched"
    b.release()
    assert not c.exists(key)
    # A longer lease than the registry's, or under 1ms, is refused.
    for bad in (31, 0, 0.0001, -1):
        try:
            k.invoice_lock(c, 9, timeout=bad)
            raise SystemExit(f"lease {bad} accepted")
        except k.TTLError:
            pass
    # An unfenced lock works as a context manager.
    name = 'q1"); redis.call("FLUSHALL") --'
    with k.report_lock(c, name) as r:
        assert r.fence is None
        assert c.exists(k.build_report_lock(name)) == 1
    assert c.exists(k.build_report_lock(name)) == 0
    print("ok")
