"""Writes a key of every live family of the repository's keys.yaml through
the generated accessors, sync and asyncio, on the server at argv[2]; checks
TTLs, refusals and read-backs. Prints "wrote N" for the keys it left."""

from __future__ import annotations

import asyncio
import datetime
import sys

import redis
import redis.asyncio

sys.path.insert(0, sys.argv[1])
import keys_gen as k  # noqa: E402

URL = sys.argv[2]
SESSION = "0e5b2a9c-8f1e-4c3b-9d2a-1b2c3d4e5f60"
TASK = "6f1d3c2b-0a9e-4b8c-8d7e-5f4a3b2c1d0e"
ROOM = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
HEX = "9f86d081884c7d659a2feaa0c55ad015"
SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
WHEN = "2026-03-01T12:00:00Z"
H = datetime.timedelta(hours=1)

c: redis.Redis[bytes] = redis.Redis.from_url(URL)
written: list[str] = []


def expect(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def refused(exc: type[BaseException], fn: object, *args: object, **kw: object) -> str:
    try:
        fn(*args, **kw)  # type: ignore[operator]
    except exc as e:
        return str(e)
    raise AssertionError(f"{fn} did not raise {exc.__name__}")


session = k.UserSessionKey(SESSION)
value: k.UserSessionValue = {
    "user_id": 42, "created_at": WHEN, "expires_at": "2026-03-02T12:00:00Z", "csrf_token": SHA,
    "auth_method": "passkey", "roles": ["admin"], "ip": "192.0.2.1",
}
k.set_user_session(c, session, value)
written.append(session.build())
expect(c.pttl(session.build()) > 86_400_000 - 60_000, "user-session without ttl gets the maximum")
got = k.get_user_session(c, session)
expect(got is not None and got["user_id"] == 42 and got["ip"] == "192.0.2.1", f"read back {got}")
expect(k.get_user_session(c, k.UserSessionKey(TASK)) is None, "a missing key is None")

short = k.UserSessionKey(SESSION.replace("0e5b", "1e5b"))
k.set_user_session(c, short, value, ttl=H)
written.append(short.build())
expect(0 < c.pttl(short.build()) <= 3_600_000, "ttl=1h")

# A longer TTL, a non-positive one or a sub-millisecond one is refused before anything is sent.
long_ = k.UserSessionKey(SESSION.replace("0e5b", "2e5b"))
msg = refused(k.TTLError, k.set_user_session, c, long_, value, ttl=datetime.timedelta(hours=25))
expect("exceeds the maximum" in msg, msg)
refused(k.TTLError, k.set_user_session, c, long_, value, ttl=datetime.timedelta(0))
refused(k.TTLError, k.set_user_session, c, long_, value, ttl=datetime.timedelta(microseconds=1500))
expect(c.exists(long_.build()) == 0, "a refused TTL wrote nothing")

# A value the schema refuses: SchemaError names the pointer, never the value.
secret = "not-a-sha-" + "x" * 20
bad: k.UserSessionValue = dict(value, csrf_token=secret)  # type: ignore[assignment]
msg = refused(k.SchemaError, k.set_user_session, c, long_, bad)
expect("#/csrf_token" in msg and secret not in msg, msg)
expect(c.exists(long_.build()) == 0, "a refused value wrote nothing")

email = k.EmailVerificationKey(HEX)
k.set_email_verification(c, email, {"user_id": 42, "email": "ada@example.com"})
written.append(email.build())

product = k.ProductCacheKey(1001)
k.set_product_cache(c, product, {
    "id": 1001, "sku": "TSHIRT-M", "title": "T-shirt", "price": {"amount": 1999, "currency": "EUR"},
    "in_stock": True, "updated_at": WHEN, "category_ids": [3, 5],
})
written.append(product.build())

fragment = k.HtmlFragmentCacheKey("header", "de-DE")
k.set_html_fragment_cache(c, fragment, "<nav>Start</nav>")
written.append(fragment.build())
expect(k.get_html_fragment_cache(c, fragment) == "<nav>Start</nav>", "text read back")

idem = k.IdempotencyKeyKey(9, SESSION)
k.set_idempotency_key(c, idem, {"state": "in_flight", "request_hash": SHA, "created_at": WHEN})
written.append(idem.build())

rate = k.RateLimitKey("cafe01", 29_500_000)
k.set_rate_limit(c, rate, 3)
written.append(rate.build())
expect(k.get_rate_limit(c, rate) == 3, "int read back")

cart = k.CartItemsKey(42)
k.hset_cart_items(c, cart, {
    "1001": {"qty": 2, "unit_price": 1999, "added_at": WHEN},
    "1002": {"qty": 1, "unit_price": 500, "added_at": WHEN, "variant": "red"},
})
written.append(cart.build())
items = k.hgetall_cart_items(c, cart)
expect(items["1001"]["qty"] == 2 and items["1002"].get("variant") == "red", f"hash read back {items}")
c.persist(cart.build())
k.hset_cart_items(c, cart, {"1003": {"qty": 1, "unit_price": 1, "added_at": WHEN}})
expect(c.pttl(cart.build()) > 0, "a second hset re-arms the TTL")
msg = refused(k.SchemaError, k.hset_cart_items, c, cart, {"1004": {"qty": 100000, "unit_price": 1, "added_at": WHEN}})
expect("#/1004/qty" in msg, msg)
expect(c.hexists(cart.build(), "1004") is False, "a refused field wrote nothing")

flags = k.FeatureFlagsKey("checkout")
c.hset(flags.build(), "old", '{"enabled":false}')
c.expire(flags.build(), 3600)
k.hset_feature_flags(c, flags, {"new_checkout": {"enabled": True, "allow_user_ids": [1, 2]}})
written.append(flags.build())
expect(c.pttl(flags.build()) == -1, "a persistent family's write clears a TTL")

index = k.UserSessionIndexKey(42)
k.sadd_user_session_index(c, index, [SESSION])
written.append(index.build())

board = k.LeaderboardKey(2026)
k.zadd_leaderboard(c, board, [(10.0, 42)])
written.append(board.build())

held = k.lock(c, "invoice-run/2026-03")
expect(held.acquire(blocking=False), "the first acquire")
expect(held.fence == 1, f"first fence {held.fence}")
written += [k.build_lock("invoice-run/2026-03"), k.build_lock_fence("invoice-run/2026-03")]
expect(k.get_lock_fence(c, k.LockFenceKey("invoice-run/2026-03")) == 1, "the fence reads back")
expect(0 < c.pttl(k.build_lock("invoice-run/2026-03")) <= 30_000, "the lease")
refused(k.TTLError, k.lock, c, "x", timeout=31)


async def main() -> None:
    a: redis.asyncio.Redis[bytes] = redis.asyncio.Redis.from_url(URL)
    room = k.ChatMessagesKey(ROOM)
    eid = await k.axadd_chat_messages(a, room, {"user_id": "42", "kind": "text", "body": "hi"}, ttl=datetime.timedelta(0))
    expect("-" in eid, eid)
    for g in ("push", "search"):
        await a.xgroup_create(room.build(), g, "0")
    written.append(room.build())
    expect(await a.pttl(room.build()) == -1, "ttl 0: no expiry")
    entries = await k.aread_group_chat_messages(a, room, "push", "w1", 10)
    expect(len(entries) == 1 and entries[0].fields["body"] == "hi", f"read_group {entries}")
    expect(await k.aack_chat_messages(a, room, "push", entries[0].id) == 1, "ack")
    try:
        await k.axadd_chat_messages(a, room, {"user_id": "42", "kind": "video", "body": "hi"}, ttl=datetime.timedelta(0))
        raise AssertionError("an entry the schema refuses was written")
    except k.SchemaError as e:
        expect("#/kind" in str(e) and "video" not in str(e), str(e))
    expect(await a.xlen(room.build()) == 1, "the refused entry wrote nothing")
    try:
        await k.aread_group_chat_messages(a, room, "nope", "w1", 10)
        raise AssertionError("an undeclared group was accepted")
    except ValueError:
        pass

    presence = k.ChatPresenceKey(ROOM)
    await k.asadd_chat_presence(a, presence, [42], ttl=datetime.timedelta(minutes=2))
    written.append(presence.build())
    expect(0 < await a.pttl(presence.build()) <= 120_000, "presence ttl")

    outbox = k.MailOutboxKey()
    await k.alpush_mail_outbox(a, outbox, [{"id": ROOM, "template": "welcome", "to": "ada@example.com", "enqueued_at": WHEN}])
    written.append(outbox.build())

    got = await k.aget_product_cache(a, k.ProductCacheKey(1001))
    expect(got is not None and got["price"]["currency"] == "EUR", f"async read back {got}")
    try:
        await k.aset_product_cache(a, k.ProductCacheKey(1002), got, ttl=datetime.timedelta(hours=2))  # type: ignore[arg-type]
        raise AssertionError("the async set accepted a TTL over the maximum")
    except k.TTLError:
        pass
    expect(await a.exists(k.build_product_cache(1002)) == 0, "nothing written")
    await a.close()


asyncio.run(main())

# Every key written obeys its family's policy.
for key in written:
    ttl = c.pttl(key)
    expect(ttl != -2, f"{key!r} was not written")
print(f"wrote {len(written)}")
