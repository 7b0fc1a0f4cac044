"""Pub/Sub round trips of the module generated from testdata/channels.keys.yaml
on a real server (redis_channels_test.go): python3 channels.py DIR URL MODE,
MODE standalone or cluster. It prints "ok N" with N the checks that passed;
any failure raises. Checked with mypy --strict."""

from __future__ import annotations

import asyncio
import sys
import time
import typing

sys.path.insert(0, sys.argv[1])

import redis  # noqa: E402
import redis.asyncio  # noqa: E402
import redis.cluster  # noqa: E402
import redis.exceptions  # noqa: E402

import keys_gen as k  # noqa: E402

URL, MODE = sys.argv[2], sys.argv[3]
WAIT = 10.0  # seconds a delivery may take before the test fails
checks = 0


def ok(cond: bool, what: str) -> None:
    global checks
    if not cond:
        raise SystemExit("FAIL: " + what)
    checks += 1


def raises(exc: type[BaseException], fn: typing.Callable[[], object], what: str) -> BaseException:
    try:
        fn()
    except exc as e:
        ok(True, what)
        return e
    raise SystemExit(f"FAIL: {what}: no {exc.__name__}")


Any = typing.Any
client: k.Client[Any] | k.ClusterClient[Any]
if MODE == "cluster":
    client = redis.cluster.RedisCluster.from_url(URL)
else:
    client = redis.Redis.from_url(URL)


def masters() -> list[redis.Redis[Any]]:
    """A plain client of every master, to read what the cluster client hides."""
    if MODE != "cluster":
        return [redis.Redis.from_url(URL)]
    seed = redis.Redis.from_url(URL)
    out = []
    for r in seed.execute_command("CLUSTER", "SLOTS"):
        out.append(redis.Redis(host=r[2][0].decode(), port=int(r[2][1])))
    seed.close()
    return out


MASTERS = masters()


def calls(cmd: str) -> int:
    """cmdstat_<cmd> calls, summed over the masters."""
    n = 0
    for m in MASTERS:
        st = m.info("commandstats").get("cmdstat_" + cmd)
        n += int(st["calls"]) if st else 0
    return n


def delivery(sub: Any) -> Any:
    d = sub.get_message(timeout=WAIT)
    ok(d is not None, "a delivery within the deadline")
    return d


# Classic: a typed round trip; a refused payload sends nothing.
with k.subscribe_headlines(client, "world") as hs:
    ok(hs.get_message(timeout=0.05) is None, "no message yet: get_message times out with None")
    pub0, spub0 = calls("publish"), calls("spublish")
    raises(k.SchemaError, lambda: k.publish_headlines(client, "world", {"title": ""}), "an invalid headline is refused")
    raises(k.InvalidKeyError, lambda: k.publish_headlines(client, "a:b", {"title": "x"}), "a topic that breaks word is refused")
    n = k.publish_headlines(client, "world", {"title": "Rain", "rank": 2})
    ok(n == 1 or MODE == "cluster", f"PUBLISH reports 1 receiver, not {n}")
    hd: k.HeadlinesDelivery = delivery(hs)
    ok(hd.channel == k.HeadlinesChannel("world"), "the channel name parsed")
    ok(hd.message == {"title": "Rain", "rank": 2}, "the headline as sent")
    ok(calls("publish") - pub0 == 1 and calls("spublish") == spub0, "the refused headline sent nothing: publish +1, spublish +0")

# Sharded: on the cluster, a tag whose slot, by CLUSTER KEYSLOT against
# CLUSTER SLOTS, is served by a master other than the seed the client
# first connected to.
SEED_PORT = int(URL.rsplit(":", 1)[1])
tag, owner = "r0", MASTERS[0]
if MODE == "cluster":
    slots = MASTERS[0].execute_command("CLUSTER", "SLOTS")
    found = False
    for i in range(1000):
        tag = f"r{i}"
        slot = int(MASTERS[0].execute_command("CLUSTER", "KEYSLOT", k.build_room_channel(tag)))
        port = next(int(r[2][1]) for r in slots if int(r[0]) <= slot <= int(r[1]))
        if port != SEED_PORT:
            owner = next(m for m in MASTERS if m.connection_pool.connection_kwargs["port"] == port)
            found = True
            break
    ok(found, "a tag on another master")
with k.subscribe_room(client, tag) as rs:
    name = k.build_room_channel(tag)
    if MODE == "cluster":
        chans = owner.execute_command("PUBSUB", "SHARDCHANNELS")
        ok(name.encode() in chans, f"SSUBSCRIBE registered on the slot's owner: {chans!r}")
        for m in MASTERS:
            if m is not owner:
                ok(name.encode() not in m.execute_command("PUBSUB", "SHARDCHANNELS"), "and on no other master")
    pub0, spub0 = calls("publish"), calls("spublish")
    raises(k.SchemaError, lambda: k.publish_room(client, tag, typing.cast(k.RoomMessage, {"kind": "shout", "text": "x"})), "an invalid room event is refused")
    n = k.publish_room(client, tag, {"kind": "say", "text": "hello"})
    ok(n == 1, f"SPUBLISH reports 1 receiver, not {n}")
    rd: k.RoomDelivery = delivery(rs)
    ok(rd.channel == k.RoomChannel(tag) and rd.message == {"kind": "say", "text": "hello"}, "the room event as sent, first")
    ok(calls("spublish") - spub0 == 1 and calls("publish") == pub0, "the refused event sent nothing: spublish +1, publish +0")
    # Raw messages the schema or the encoding refuses raise; the next valid one still arrives.
    raw = owner if MODE == "cluster" else MASTERS[0]
    raw.execute_command("SPUBLISH", name, b'{"kind":"say"}')
    raw.execute_command("SPUBLISH", name, b'{"kind":')
    raw.execute_command("SPUBLISH", name, b"[" * 100000)
    se = raises(k.SchemaError, lambda: rs.get_message(timeout=WAIT), "a message without text fails the schema")
    ok("say" not in str(se) and "text" in str(se), f"the schema error names the property, not the payload: {se}")
    me = raises(k.InvalidMessageError, lambda: rs.get_message(timeout=WAIT), "a message that is not JSON does not decode")
    ok("kind" not in str(me) and me.__cause__ is None and me.__suppress_context__, f"the decode error quotes nothing of the payload: {me}")
    raises(k.InvalidMessageError, lambda: rs.get_message(timeout=WAIT), "a message nested too deeply does not decode")
    k.publish_room(client, tag, {"kind": "leave", "text": ""})
    for d in rs:  # iteration
        ok(d.message == {"kind": "leave", "text": ""}, "the next valid event after the bad ones")
        break

# A slot that moved after the cluster client read the slot map: the
# publisher and the subscriber follow MOVED to the new owner.
if MODE == "cluster":
    cc = typing.cast("redis.cluster.RedisCluster[Any]", client)
    name = k.build_room_channel(tag)
    slot = int(owner.execute_command("CLUSTER", "KEYSLOT", name))
    target = next(m for m in MASTERS if m is not owner)
    tid = target.execute_command("CLUSTER", "MYID")
    for m in [target, owner] + [m for m in MASTERS if m is not target and m is not owner]:
        m.execute_command("CLUSTER", "SETSLOT", slot, "NODE", tid)
    tport = target.connection_pool.connection_kwargs["port"]
    cached = cc.get_node_from_key(name)
    ok(cached is not None and cached.port != tport, "the client's slot map is stale")
    with k.subscribe_room(cc, tag) as ms:
        ok(name.encode() in target.execute_command("PUBSUB", "SHARDCHANNELS"), "after MOVED, SSUBSCRIBE is on the new owner")
        n = k.publish_room(cc, tag, {"kind": "say", "text": "moved"})
        ok(n == 1, f"SPUBLISH after the move reaches 1 receiver, not {n}")
        md = delivery(ms)
        ok(md.message == {"kind": "say", "text": "moved"}, "the event arrives on the new owner")
    stale: redis.cluster.RedisCluster[Any] = redis.cluster.RedisCluster.from_url(URL)
    for m in [owner] + [m for m in MASTERS if m is not owner]:
        m.execute_command("CLUSTER", "SETSLOT", slot, "NODE", owner.execute_command("CLUSTER", "MYID"))
    c2 = stale.get_node_from_key(name)
    ok(c2 is not None and c2.port == tport, "a second client's slot map is stale")
    with k.subscribe_room(client, tag) as ms2:
        n = k.publish_room(stale, tag, {"kind": "say", "text": "back"})
        ok(n == 1, f"SPUBLISH through a stale map follows MOVED: {n} receivers")
        md = delivery(ms2)
        ok(md.message == {"kind": "say", "text": "back"}, "the event arrives after the slot moved back")
    stale.close()

# Pattern: PSUBSCRIBE of the glob; a channel the glob matches but the pattern does not raises.
with k.subscribe_relay(client) as ps:
    raises(k.SchemaError, lambda: k.publish_relay(client, "t", 1, ""), "an empty line is refused")
    k.publish_relay(client, "t", 7, "line one")
    pd = delivery(ps)
    ok(pd.channel == k.RelayChannel("t", 7) and pd.message == "line one", "the relayed line and its channel parsed")
    client.execute_command("PUBLISH", "v1:relay:stray", b"x")
    raises(k.InvalidKeyError, lambda: ps.get_message(timeout=WAIT), "a channel the glob matches but the pattern does not")
    k.publish_relay(client, "u", -3, "line two")
    pd = delivery(ps)
    ok(pd.channel == k.RelayChannel("u", -3) and pd.message == "line two", "the next line after the stray channel")

# A nullable object schema: None and the object both round trip.
with k.subscribe_presence(client, 5) as prs:
    raises(k.SchemaError, lambda: k.publish_presence(client, 5, typing.cast(k.PresenceMessageObject, {"status": "gone"})), "an unknown status is refused")
    k.publish_presence(client, 5, None)
    k.publish_presence(client, 5, {"status": "away"})
    p1, p2 = delivery(prs), delivery(prs)
    ok(p1.message is None and p2.message == {"status": "away"} and p2.channel == k.PresenceChannel(5), "null and an object, in order")

# Binary passes through untouched and unchecked.
with k.subscribe_blobs(client) as bs:
    payload = bytes(range(256))
    k.publish_blobs(client, payload)
    bd = delivery(bs)
    ok(bd.message == payload and bd.channel == k.BlobsChannel(), "binary bytes as sent")
    raises(TypeError, lambda: k.publish_blobs(client, typing.cast(bytes, "text")), "a str is not bytes")
# A closed subscription leaves no connect callback of its own on the
# connection it gives back to the pool (which would send SSUBSCRIBE when
# that connection reconnects for another caller).
if MODE == "standalone":
    pool = typing.cast("redis.Redis[Any]", client).connection_pool
    with k.subscribe_room(client, "pool"):
        pass
    conns = list(getattr(pool, "_available_connections", []))
    ok(len(conns) > 0, "the pool has the subscription's connection back")
    for cn in conns:
        for ref in getattr(cn, "_connect_callbacks", []):
            f = ref() if callable(ref) and not hasattr(ref, "__self__") else ref
            ok(not isinstance(getattr(f, "__self__", None), k.RoomSubscription), "no subscription callback left on a pooled connection")
ok(k.ROOM_CHANNEL_MODE == "sharded" and k.RELAY_CHANNEL_SUBSCRIBE_GLOB == "v1:relay:*" and k.OLD_NEWS_CHANNEL_OWNER == "chat", "constants")
bs2 = k.subscribe_blobs(client)
bs2.close()
raises(RuntimeError, lambda: bs2.get_message(0), "a closed subscription refuses get_message")


def reconnect() -> None:
    """The server closes the subscriber's connection: get_message raises
    redis-py's ConnectionError once, then redis-py reconnects and the
    subscription sends its SSUBSCRIBE again, so messages arrive again."""
    with k.subscribe_room(client, "rc") as s:
        killed = MASTERS[0].execute_command("CLIENT", "KILL", "TYPE", "pubsub")
        ok(int(killed) >= 1, "the subscriber's connection was killed")
        try:
            s.get_message(timeout=WAIT)
            raise SystemExit("FAIL: no error from a closed connection")
        except redis.exceptions.ConnectionError:
            ok(True, "a closed connection raises ConnectionError")
        deadline = time.monotonic() + WAIT
        got = None
        while got is None and time.monotonic() < deadline:
            k.publish_room(client, "rc", {"kind": "say", "text": "again"})
            got = s.get_message(timeout=0.1)
        ok(got is not None and got.message == {"kind": "say", "text": "again"}, "after the reconnect, SSUBSCRIBE was sent again")


def denied() -> None:
    """A user whose ACL allows the headlines channels only: the room's
    subscriber and publisher raise the server's NOPERM, the headlines work."""
    MASTERS[0].execute_command("ACL", "SETUSER", "news", "on", ">pw", "resetchannels", "&v1:headlines:*", "+@all")
    u: k.Client[Any] = redis.Redis.from_url(URL.replace("redis://", "redis://news:pw@"))
    raises(redis.exceptions.NoPermissionError, lambda: k.subscribe_room(u, "x"), "SSUBSCRIBE refused by the ACL raises")
    raises(redis.exceptions.NoPermissionError, lambda: k.publish_room(u, "x", {"kind": "say", "text": "t"}), "SPUBLISH refused by the ACL raises")
    with k.subscribe_headlines(u, "acl") as s:
        k.publish_headlines(u, "acl", {"title": "allowed"})
        d = s.get_message(timeout=WAIT)
        ok(d is not None and d.message == {"title": "allowed"}, "the allowed channel still works for that user")
    u.close()


async def async_round_trip() -> None:
    a: k.AsyncClient[Any] = redis.asyncio.Redis.from_url(URL)
    async with await k.asubscribe_room(a, "as") as s:
        ok(await s.get_message(timeout=0.05) is None, "async: times out with None")
        n = await k.apublish_room(a, "as", {"kind": "say", "text": "async"})
        ok(n == 1, "async SPUBLISH reports 1 receiver")
        d = await s.get_message(timeout=WAIT)
        ok(d is not None and d.message == {"kind": "say", "text": "async"}, "async sharded round trip")
        try:
            await k.apublish_room(a, "as", typing.cast(k.RoomMessage, {}))
            raise SystemExit("FAIL: async invalid publish")
        except k.SchemaError:
            ok(True, "async: an invalid event is refused")
    async with await k.asubscribe_relay(a) as p:
        await a.publish("v1:relay:stray", b"x")
        await k.apublish_relay(a, "t", 1, "async line")
        try:
            await p.get_message(timeout=WAIT)
            raise SystemExit("FAIL: async stray channel")
        except k.InvalidKeyError:
            ok(True, "async: the stray channel raises")
        async for pd in p:
            ok(pd.message == "async line", "async: the next line still arrives")
            break
    # The server closes the asyncio subscriber's connection: one
    # ConnectionError, then redis-py reconnects and SSUBSCRIBE is sent again.
    async with await k.asubscribe_room(a, "arc") as rc:
        MASTERS[0].execute_command("CLIENT", "KILL", "TYPE", "pubsub")
        try:
            await rc.get_message(timeout=WAIT)
            raise SystemExit("FAIL: async: no error from a closed connection")
        except redis.exceptions.ConnectionError:
            ok(True, "async: a closed connection raises ConnectionError")
        deadline = time.monotonic() + WAIT
        got = None
        while got is None and time.monotonic() < deadline:
            await k.apublish_room(a, "arc", {"kind": "say", "text": "again"})
            got = await rc.get_message(timeout=0.1)
        ok(got is not None and got.message == {"kind": "say", "text": "again"}, "async: after the reconnect, SSUBSCRIBE was sent again")
    await a.close()


if MODE == "standalone":
    asyncio.run(async_round_trip())
    reconnect()
    denied()
print(f"ok {checks}")
