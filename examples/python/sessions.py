"""Writes a user session through the module keyreg generated from keys.yaml
(examples/python/keys, `keyreg gen python --out examples/python/keys`),
reads it back, prints the key's TTL, then takes the fenced lock.

    REDIS_URL=redis://localhost:6379 python3 examples/python/sessions.py
"""

from __future__ import annotations

import asyncio
import datetime
import os
import secrets
import sys
import uuid

import redis
import redis.asyncio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keys  # noqa: E402


def main() -> None:
    url = os.environ.get("REDIS_URL", "redis://localhost:6379")
    rdb: redis.Redis[bytes] = redis.Redis.from_url(url)
    key = keys.UserSessionKey(str(uuid.uuid4()))
    now = datetime.datetime.now(datetime.timezone.utc)
    session: keys.UserSessionValue = {
        "user_id": 42,
        "created_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "expires_at": (now + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "csrf_token": secrets.token_hex(32),
        "auth_method": "password",
    }
    # The TTL may only be shorter than the registry's 24h: 25h raises TTLError.
    keys.set_user_session(rdb, key, session, ttl=datetime.timedelta(hours=1))
    got = keys.get_user_session(rdb, key)
    assert got is not None
    print(f"{key.build()}: user {got['user_id']}, ttl {rdb.ttl(key.build())}s")
    print("parsed back:", keys.parse_user_session(key.build()))

    # The lock's lease is the registry's 30s at most; its fence rises by one per acquire.
    with keys.lock(rdb, "invoice-run/2026-03", timeout=5) as held:
        print(f"holding {keys.build_lock('invoice-run/2026-03')} with fence {held.fence}")

    async def read_async() -> None:
        a: redis.asyncio.Redis[bytes] = redis.asyncio.Redis.from_url(url)
        again = await keys.aget_user_session(a, key)
        print("asyncio read:", again is not None and again["auth_method"])
        await a.close()

    asyncio.run(read_async())


if __name__ == "__main__":
    main()
