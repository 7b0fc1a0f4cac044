package python

// runtimeChannels follows runtimeHead in a module with channels in scope:
// the cluster client type, the message error and the subscriptions the
// generated subscribers return. It holds no registry text, and nothing in
// it publishes: each channel's publisher writes its command itself.
//
// redis-py 4.3 has no ssubscribe, and its PubSub.get_message drops
// "smessage" replies as if they were subscription notices; so every
// subscription sends its command with PubSub.execute_command and reads
// the raw replies with PubSub.parse_response, the same on redis-py 4.3 and
// 5, and re-sends it itself when redis-py reconnects.
const runtimeChannels = `
import time as _kr_time

import redis.cluster as _kr_cluster

ClusterClient = _kr_cluster.RedisCluster
"""The cluster client the publishers and subscribers also take (redis.cluster.RedisCluster)."""


class InvalidMessageError(ValueError):
    """A Pub/Sub message that does not decode with its channel's encoding.
    The message names the channel, never the payload."""


_KrD = _kr_t.TypeVar("_KrD")
_KR_REDIRECTS = 5
_KR_CONFIRM = {"SUBSCRIBE": "subscribe", "SSUBSCRIBE": "ssubscribe", "PSUBSCRIBE": "psubscribe"}


def _kr_pubsub(client: _kr_t.Any, command: str, target: str) -> _kr_t.Any:
    """A PubSub for one subscription: on a cluster, SSUBSCRIBE goes to the
    primary of the channel's slot, and the others to the node redis-py picks."""
    if isinstance(client, _kr_cluster.RedisCluster):
        if command == "SSUBSCRIBE":
            node = client.get_node_from_key(target, replica=False)
            if node is None:
                raise _kr_exc.RedisClusterException(f"no primary serves the slot of {target!r}")
            return client.pubsub(node=node)
        return client.pubsub()
    return client.pubsub()


def _kr_spublish(client: Client[_kr_t.Any] | ClusterClient[_kr_t.Any], name: str, data: bytes) -> int:
    """SPUBLISH, and nothing else: on a cluster, to the primary of the
    channel's slot, following MOVED (redis-py 4.3's cluster client cannot
    route SPUBLISH itself)."""
    c: _kr_t.Any = client
    if not isinstance(client, _kr_cluster.RedisCluster):
        return int(c.execute_command("SPUBLISH", name, data))
    for _ in range(_KR_REDIRECTS):
        node = client.get_node_from_key(name, replica=False)
        if node is not None:
            r: _kr_t.Any = client.get_redis_connection(node)
            try:
                return int(r.execute_command("SPUBLISH", name, data))
            except _kr_exc.MovedError:
                pass
        client.nodes_manager.initialize()
    raise _kr_exc.RedisClusterException(f"SPUBLISH {name!r}: the slot moved {_KR_REDIRECTS} times")


def _kr_reply(resp: object) -> tuple[str, bytes, bytes] | None:
    """A pub/sub reply as (kind, channel, data): a message (of any of the
    three kinds) or a subscription confirmation; None for anything else."""
    if not isinstance(resp, list) or not resp:
        return None
    kind = _kr_dec_text(resp[0]).lower()
    if kind in ("message", "smessage") and len(resp) == 3:
        return kind, _kr_bytes(resp[1]), _kr_bytes(resp[2])
    if kind == "pmessage" and len(resp) == 4:
        return kind, _kr_bytes(resp[2]), _kr_bytes(resp[3])
    if kind in ("subscribe", "ssubscribe", "psubscribe") and len(resp) >= 2:
        return kind, _kr_bytes(resp[1]), b""
    return None


def _kr_forget(ps: _kr_t.Any, callback: _kr_t.Any) -> None:
    """Takes the subscription's connect callback off its connection before
    the connection goes back to the pool: redis-py 5's reset removes only its
    own (4.3's removes all), and a pooled connection must not send SSUBSCRIBE
    when it reconnects for another caller."""
    conn = ps.connection
    forget = getattr(conn, "deregister_connect_callback", None)
    if forget is not None:
        forget(callback)


def _kr_left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - _kr_time.monotonic())


class _KrSubscription(_kr_t.Generic[_KrD]):
    """One SUBSCRIBE, SSUBSCRIBE or PSUBSCRIBE on a connection of its own."""

    def __init__(self, deliver: _kr_t.Callable[[bytes, bytes], _KrD]) -> None:
        self._kr_deliver = deliver
        self._kr_ps: _kr_t.Any = None
        self._kr_cmd = ""
        self._kr_target = ""

    def _kr_open(self, client: Client[_kr_t.Any] | ClusterClient[_kr_t.Any], command: str, target: str) -> None:
        self._kr_cmd, self._kr_target = command, target
        for attempt in range(_KR_REDIRECTS):
            self._kr_ps = _kr_pubsub(client, command, target)
            try:
                self._kr_ps.execute_command(command, target)
                self._kr_ps.connection.register_connect_callback(self._kr_resubscribe)
                while True:
                    r = _kr_reply(self._kr_ps.parse_response(block=True))
                    if r is not None and r[0] == _KR_CONFIRM[command]:
                        return
            except _kr_exc.MovedError:
                # The slot moved since the cluster client read the slot map.
                self.close()
                if not isinstance(client, _kr_cluster.RedisCluster) or attempt + 1 == _KR_REDIRECTS:
                    raise
                client.nodes_manager.initialize()
            except BaseException:
                self.close()
                raise

    def _kr_resubscribe(self, connection: _kr_t.Any) -> None:
        connection.send_command(self._kr_cmd, self._kr_target)

    def get_message(self, timeout: float | None = None) -> _KrD | None:
        """The next message, decoded and checked; None when none came within
        timeout seconds (None: wait for one). A message that does not decode,
        breaks the schema or arrives on a channel name that does not parse
        raises InvalidMessageError, SchemaError or InvalidKeyError, and the
        subscription goes on."""
        if self._kr_ps is None:
            raise RuntimeError("the subscription is closed")
        deadline = None if timeout is None else _kr_time.monotonic() + timeout
        while True:
            left = _kr_left(deadline)
            if left is None:
                resp = self._kr_ps.parse_response(block=True)
            else:
                resp = self._kr_ps.parse_response(block=False, timeout=left)
            r = _kr_reply(resp)
            if r is not None and r[0] in ("message", "smessage", "pmessage"):
                return self._kr_deliver(r[1], r[2])
            if left is not None and _kr_left(deadline) == 0.0:
                return None

    def __iter__(self) -> _KrSubscription[_KrD]:
        return self

    def __next__(self) -> _KrD:
        if self._kr_ps is None:
            raise StopIteration
        while True:
            d = self.get_message(None)
            if d is not None:
                return d

    def close(self) -> None:
        """Ends the subscription and closes its connection."""
        ps, self._kr_ps = self._kr_ps, None
        if ps is not None:
            _kr_forget(ps, self._kr_resubscribe)
            ps.close()

    def __enter__(self) -> _KrSubscription[_KrD]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _KrAsyncSubscription(_kr_t.Generic[_KrD]):
    """One SUBSCRIBE, SSUBSCRIBE or PSUBSCRIBE on a redis.asyncio connection of its own."""

    def __init__(self, deliver: _kr_t.Callable[[bytes, bytes], _KrD]) -> None:
        self._kr_deliver = deliver
        self._kr_ps: _kr_t.Any = None
        self._kr_cmd = ""
        self._kr_target = ""

    async def _kr_open(self, client: AsyncClient[_kr_t.Any], command: str, target: str) -> None:
        self._kr_cmd, self._kr_target = command, target
        self._kr_ps = client.pubsub()
        try:
            await self._kr_ps.execute_command(command, target)
            self._kr_ps.connection.register_connect_callback(self._kr_resubscribe)
            while True:
                r = _kr_reply(await self._kr_ps.parse_response(block=True))
                if r is not None and r[0] == _KR_CONFIRM[command]:
                    return
        except BaseException:
            await self.close()
            raise

    async def _kr_resubscribe(self, connection: _kr_t.Any) -> None:
        await connection.send_command(self._kr_cmd, self._kr_target)

    async def get_message(self, timeout: float | None = None) -> _KrD | None:
        """As the synchronous get_message."""
        if self._kr_ps is None:
            raise RuntimeError("the subscription is closed")
        deadline = None if timeout is None else _kr_time.monotonic() + timeout
        while True:
            left = _kr_left(deadline)
            if left is None:
                resp = await self._kr_ps.parse_response(block=True)
            else:
                resp = await self._kr_ps.parse_response(block=False, timeout=left)
            r = _kr_reply(resp)
            if r is not None and r[0] in ("message", "smessage", "pmessage"):
                return self._kr_deliver(r[1], r[2])
            if left is not None and _kr_left(deadline) == 0.0:
                return None

    def __aiter__(self) -> _KrAsyncSubscription[_KrD]:
        return self

    async def __anext__(self) -> _KrD:
        if self._kr_ps is None:
            raise StopAsyncIteration
        while True:
            d = await self.get_message(None)
            if d is not None:
                return d

    async def close(self) -> None:
        """Ends the subscription and closes its connection."""
        ps, self._kr_ps = self._kr_ps, None
        if ps is not None:
            _kr_forget(ps, self._kr_resubscribe)
            await ps.reset()

    async def __aenter__(self) -> _KrAsyncSubscription[_KrD]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
`
