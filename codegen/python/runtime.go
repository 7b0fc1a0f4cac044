package python

// runtimeHead is the part of every module before the families: imports,
// the errors, the TTL policy and the helpers the generated functions call.
// It holds no registry text.
const runtimeHead = `
from __future__ import annotations

import dataclasses as _kr_dataclasses
import hashlib as _kr_hashlib
import datetime as _kr_datetime
import json as _kr_json
import math as _kr_math
import re as _kr_re
import secrets as _kr_secrets
import typing as _kr_t

import redis as _kr_redis
import redis.asyncio as _kr_aredis
import redis.client as _kr_client
import redis.exceptions as _kr_exc
import redis.lock as _kr_lock


class InvalidKeyError(ValueError):
    """A key, or a placeholder value, that does not fit its family's pattern."""


class TTLError(ValueError):
    """A TTL that breaks its family's TTL policy; nothing was sent to Redis."""


class SchemaError(ValueError):
    """A value that breaks its family's JSON Schema. The message names the
    family and the JSON pointer, never the value."""


Client = _kr_redis.Redis
"""The synchronous client the accessors take (redis.Redis)."""

AsyncClient = _kr_aredis.Redis
"""The asyncio client the a* accessors take (redis.asyncio.Redis)."""


@_kr_dataclasses.dataclass(frozen=True)
class TTLPolicy:
    """How long keys of a family may live: kind is "max" (within max_ms
    milliseconds), "persistent", "optional" or "unset"."""

    kind: str
    max_ms: int = 0

    def allows(self, pttl_ms: int) -> bool:
        """Whether a key whose PTTL is pttl_ms obeys the policy (negative:
        the key does not expire)."""
        if self.kind == "max":
            return 0 < pttl_ms <= self.max_ms
        if self.kind == "persistent":
            return pttl_ms < 0
        return True


@_kr_dataclasses.dataclass(frozen=True)
class StreamEntry:
    """An entry of a stream, its fields decoded."""

    id: str
    fields: dict[str, _kr_t.Any]


_KR_I64_MIN = -(1 << 63)
_KR_I64_MAX = (1 << 63) - 1
_KR_MS = _kr_datetime.timedelta(milliseconds=1)


def _kr_bad(family: str, name: str, typ: str, v: object) -> InvalidKeyError:
    if isinstance(v, str) and len(v) > 200:
        v = v[:200] + "..."
    return InvalidKeyError(f"{family}: {name} {v!r} is not a valid {typ} value")


def _kr_key(family: str, key: str | bytes) -> str:
    if type(key) is str:
        return key
    if isinstance(key, bytes):
        return key.decode("utf-8", "surrogateescape")
    raise InvalidKeyError(f"{family}: a key is str or bytes, not {type(key).__name__}")


def _kr_nomatch(family: str, pattern: str, key: str) -> InvalidKeyError:
    if len(key) > 200:
        key = key[:200] + "..."
    return InvalidKeyError(f"{family}: {key!r} does not match {pattern!r}")


def _kr_int(family: str, name: str, s: str) -> int:
    if len(s) > 20 or not _KR_I64_MIN <= int(s) <= _KR_I64_MAX:
        raise InvalidKeyError(f"{family}: {name} {s[:40]!r} does not fit in an int64")
    return int(s)


_KrPart = tuple[str, "_kr_re.Pattern[str] | None", int, bool]


def _kr_run_ends(run: _kr_re.Pattern[str], fixed: int, key: str) -> list[int]:
    """For every position, where the longest value of a placeholder type
    that starts there ends, or -1. A variable-length type's values are the
    non-empty prefixes of the maximal runs of its regex (its first byte
    aside, which only int restricts), found in one pass."""
    ends = [-1] * (len(key) + 1)
    if fixed:
        for pos in range(len(key) - fixed + 1):
            if run.match(key, pos) is not None:
                ends[pos] = pos + fixed
        return ends
    for mt in run.finditer(key):
        start, stop = mt.span()
        for pos in range(start, stop):
            ends[pos] = stop
    return ends


def _kr_match(parts: tuple[_KrPart, ...], key: str) -> list[str] | None:
    """The placeholder values of key, or None when it does not match. Like
    keyreg's matcher, earlier placeholders take the longest value that still
    lets the rest match. It works from the end of the pattern: for each part
    and position, whether the rest of the key matches the rest of the
    pattern, so the work is linear in the parts times the key (plus the
    runs of the placeholder types), where a backtracking regular expression
    could take polynomial time of high degree on a hostile key. parts are
    (literal, None, 0, False) or ("", run, fixed length, is int)."""
    n = len(key)
    nxt = [False] * (n + 1)
    nxt[n] = True
    lasts: list[list[int]] = [[] for _ in parts]
    runs: list[list[int]] = [[] for _ in parts]
    for i in range(len(parts) - 1, -1, -1):
        lit, run, fixed, is_int = parts[i]
        cur = [False] * (n + 1)
        if run is None:
            size = len(lit)
            pos = key.find(lit)
            while 0 <= pos and pos + size <= n:
                cur[pos] = nxt[pos + size]
                pos = key.find(lit, pos + 1)
        else:
            last = [-1] * (n + 1)
            prev = -1
            for e in range(n + 1):
                if nxt[e]:
                    prev = e
                last[e] = prev
            lasts[i] = last
            ends = _kr_run_ends(run, fixed, key)
            runs[i] = ends
            for pos in range(n):
                end = ends[pos]
                if end < 0:
                    continue
                lo = end if fixed else pos + 1 + (1 if is_int and key.startswith("-", pos) else 0)
                cur[pos] = last[end] >= lo
        nxt = cur
    if not nxt[0]:
        return None
    out: list[str] = []
    pos = 0
    for i, (lit, run, fixed, is_int) in enumerate(parts):
        if run is None:
            pos += len(lit)
            continue
        e = lasts[i][runs[i][pos]]
        out.append(key[pos:e])
        pos = e
    return out


def _kr_ms(family: str, ttl: _kr_datetime.timedelta) -> int:
    if not isinstance(ttl, _kr_datetime.timedelta):
        raise TTLError(f"{family}: ttl must be a datetime.timedelta, not {type(ttl).__name__}")
    ms, rest = divmod(ttl, _KR_MS)
    if rest:
        raise TTLError(f"{family}: ttl {ttl} is not a whole number of milliseconds")
    return int(ms)


def _kr_expiry(family: str, max_ms: int, ttl: _kr_datetime.timedelta | None) -> int:
    """The PX of a write to a family with a maximum TTL: the maximum, or ttl,
    which must be positive and at most the maximum."""
    if ttl is None:
        return max_ms
    ms = _kr_ms(family, ttl)
    if ms <= 0:
        raise TTLError(f"{family}: ttl {ttl} must be positive (the family's keys must expire)")
    if ms > max_ms:
        raise TTLError(f"{family}: ttl {ttl} exceeds the maximum {_kr_datetime.timedelta(milliseconds=max_ms)}")
    return ms


def _kr_optional(family: str, ttl: _kr_datetime.timedelta) -> int:
    """The PX of a write to a family whose keys may or may not expire: 0 is no expiry."""
    ms = _kr_ms(family, ttl)
    if ms < 0:
        raise TTLError(f"{family}: ttl {ttl} is negative (pass timedelta(0) for no expiry)")
    return ms


def _kr_bytes(v: object) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8", "surrogateescape")
    raise TypeError(f"unexpected reply of type {type(v).__name__}")


def _kr_enc_json(v: object) -> bytes:
    return _kr_json.dumps(v, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def _kr_dec_json(b: object) -> _kr_t.Any:
    return _kr_json.loads(_kr_bytes(b))


def _kr_enc_text(v: str) -> bytes:
    if not isinstance(v, str):
        raise TypeError(f"a text value is a str, not {type(v).__name__}")
    return v.encode("utf-8", "surrogateescape")


def _kr_dec_text(b: object) -> str:
    return _kr_bytes(b).decode("utf-8", "surrogateescape")


def _kr_enc_int(v: int) -> bytes:
    if type(v) is not int:
        raise TypeError(f"an int value is an int, not {type(v).__name__}")
    return str(v).encode()


def _kr_dec_int(b: object) -> int:
    return int(_kr_bytes(b))


def _kr_enc_float(v: float) -> bytes:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not _kr_math.isfinite(v):
        raise TypeError("a float value is a finite int or float")
    return repr(float(v)).encode()


def _kr_dec_float(b: object) -> float:
    return float(_kr_bytes(b))


def _kr_enc_raw(v: bytes) -> bytes:
    if not isinstance(v, bytes):
        raise TypeError(f"a binary value is bytes, not {type(v).__name__}")
    return v


def _kr_dec_raw(b: object) -> bytes:
    return _kr_bytes(b)


def _kr_ttl_cmds(pipe: _kr_t.Any, key: str, ms: int) -> None:
    if ms > 0:
        pipe.pexpire(key, ms)
    else:
        pipe.persist(key)


def _kr_fields(family: str, fields: _kr_t.Mapping[str, _kr_t.Any], what: str) -> None:
    if not fields:
        raise ValueError(f"{family}: {what}: nothing to write")


def _kr_group(family: str, groups: frozenset[str], group: str) -> None:
    if group not in groups:
        raise ValueError(f"{family}: {group!r} is not a declared consumer group")


def _kr_entries(entries: _kr_t.Any, dec: _kr_t.Callable[[object], _kr_t.Any]) -> list[StreamEntry]:
    out: list[StreamEntry] = []
    for eid, fields in entries or []:
        if fields is None:
            continue  # deleted while pending
        out.append(StreamEntry(_kr_dec_text(eid), {_kr_dec_text(f): dec(x) for f, x in fields.items()}))
    return out


_KR_MAX_DEPTH = 128


def _kr_type_ok(t: str, v: object) -> bool:
    if t == "null":
        return v is None
    if t == "boolean":
        return isinstance(v, bool)
    if t == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "string":
        return isinstance(v, str)
    if t == "array":
        return isinstance(v, list)
    if t == "object":
        return isinstance(v, dict)
    return False


def _kr_ptr(ptr: str, tok: object) -> str:
    return ptr + "/" + str(tok).replace("~", "~0").replace("/", "~1")


def _kr_json_eq(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_kr_json_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_kr_json_eq(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _kr_resolve(root: _kr_t.Any, ref: str) -> _kr_t.Any:
    if not ref.startswith("#"):
        return None
    node = root
    for tok in ref[1:].split("/")[1:]:
        tok = tok.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and tok in node:
            node = node[tok]
        elif isinstance(node, list) and tok.isdigit() and int(tok) < len(node):
            node = node[int(tok)]
        else:
            return None
    return node


def _kr_check(root: _kr_t.Any, s: _kr_t.Any, v: object, ptr: str, depth: int) -> str | None:
    """The first problem of v against schema s, as "at <pointer>: <what>", or
    None. It never quotes v."""
    if depth > _KR_MAX_DEPTH:
        return f"at {ptr!r}: the schema is nested too deeply"
    if s is True or s is None:
        return None
    if s is False:
        return f"at {ptr!r}: no value is allowed"
    if not isinstance(s, dict):
        return None
    ref = s.get("$ref")
    if isinstance(ref, str):
        target = _kr_resolve(root, ref)
        if target is not None:
            p = _kr_check(root, target, v, ptr, depth + 1)
            if p:
                return p
    t = s.get("type")
    if isinstance(t, str) and not _kr_type_ok(t, v):
        return f"at {ptr!r}: is not of type {t}"
    if isinstance(t, list) and not any(isinstance(x, str) and _kr_type_ok(x, v) for x in t):
        return f"at {ptr!r}: is not of an allowed type"
    if "enum" in s and isinstance(s["enum"], list) and not any(_kr_json_eq(v, e) for e in s["enum"]):
        return f"at {ptr!r}: is not one of the enum values"
    if "const" in s and not _kr_json_eq(v, s["const"]):
        return f"at {ptr!r}: is not the const value"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        for kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            m = s.get(kw)
            if not isinstance(m, (int, float)) or isinstance(m, bool):
                continue
            if kw == "minimum" and v < m:
                return f"at {ptr!r}: is less than the minimum {m}"
            if kw == "maximum" and v > m:
                return f"at {ptr!r}: is more than the maximum {m}"
            if kw == "exclusiveMinimum" and v <= m:
                return f"at {ptr!r}: is not more than the exclusive minimum {m}"
            if kw == "exclusiveMaximum" and v >= m:
                return f"at {ptr!r}: is not less than the exclusive maximum {m}"
        m = s.get("multipleOf")
        if isinstance(m, (int, float)) and not isinstance(m, bool) and m > 0:
            q = v / m
            if not (_kr_math.isfinite(q) and abs(q - round(q)) < 1e-9):
                return f"at {ptr!r}: is not a multiple of {m}"
    if isinstance(v, str):
        n = len(v)
        m = s.get("minLength")
        if isinstance(m, int) and n < m:
            return f"at {ptr!r}: is shorter than {m} characters"
        m = s.get("maxLength")
        if isinstance(m, int) and n > m:
            return f"at {ptr!r}: is longer than {m} characters"
        pat = s.get("pattern")
        if isinstance(pat, str):
            try:
                rx = _kr_re.compile(pat)
            except (_kr_re.error, RecursionError, OverflowError):
                rx = None
            if rx is not None and rx.search(v) is None:
                return f"at {ptr!r}: does not match the schema's pattern"
    if isinstance(v, dict):
        req = s.get("required")
        if isinstance(req, list):
            for r in req:
                if isinstance(r, str) and r not in v:
                    return f"at {ptr!r}: misses the required property {r!r}"
        props = s.get("properties")
        props = props if isinstance(props, dict) else {}
        addl = s.get("additionalProperties", True)
        names = s.get("propertyNames")
        for k, x in v.items():
            kp = _kr_ptr(ptr, k)
            if names is not None:
                p = _kr_check(root, names, k, kp, depth + 1)
                if p:
                    return f"at {kp!r}: the property name breaks propertyNames"
            if k in props:
                p = _kr_check(root, props[k], x, kp, depth + 1)
            elif "additionalProperties" in s:
                p = _kr_check(root, addl, x, kp, depth + 1)
            else:
                p = None
            if p:
                return p
        m = s.get("minProperties")
        if isinstance(m, int) and len(v) < m:
            return f"at {ptr!r}: has fewer than {m} properties"
        m = s.get("maxProperties")
        if isinstance(m, int) and len(v) > m:
            return f"at {ptr!r}: has more than {m} properties"
    if isinstance(v, list):
        items = s.get("items")
        if items is not None:
            for i, x in enumerate(v):
                p = _kr_check(root, items, x, _kr_ptr(ptr, i), depth + 1)
                if p:
                    return p
        m = s.get("minItems")
        if isinstance(m, int) and len(v) < m:
            return f"at {ptr!r}: has fewer than {m} items"
        m = s.get("maxItems")
        if isinstance(m, int) and len(v) > m:
            return f"at {ptr!r}: has more than {m} items"
        if s.get("uniqueItems") is True:
            for i in range(len(v)):
                for j in range(i):
                    if _kr_json_eq(v[i], v[j]):
                        return f"at {ptr!r}: has duplicate items"
    for sub in s.get("allOf") or []:
        p = _kr_check(root, sub, v, ptr, depth + 1)
        if p:
            return p
    any_of = s.get("anyOf")
    if isinstance(any_of, list) and any_of and all(_kr_check(root, sub, v, ptr, depth + 1) for sub in any_of):
        return f"at {ptr!r}: matches none of anyOf"
    one_of = s.get("oneOf")
    if isinstance(one_of, list) and one_of:
        n = sum(1 for sub in one_of if _kr_check(root, sub, v, ptr, depth + 1) is None)
        if n != 1:
            return f"at {ptr!r}: matches {n} of oneOf, not exactly one"
    if "not" in s and _kr_check(root, s["not"], v, ptr, depth + 1) is None:
        return f"at {ptr!r}: matches the schema of not"
    return None


def _kr_schema_error(family: str, where: str, problem: str) -> SchemaError:
    return SchemaError(f"{family}: {where}{problem}")


def _kr_check_field(family: str, root: _kr_t.Any, name: str, v: object) -> None:
    """Checks one hash field against the schema of the whole object."""
    s = root if isinstance(root, dict) else {}
    names = s.get("propertyNames")
    ptr = _kr_ptr("#", name)
    if names is not None and _kr_check(root, names, name, ptr, 0):
        raise _kr_schema_error(family, "", f"at {ptr!r}: the field name breaks propertyNames")
    props = s.get("properties")
    if isinstance(props, dict) and name in props:
        p = _kr_check(root, props[name], v, ptr, 0)
    elif "additionalProperties" in s:
        p = _kr_check(root, s["additionalProperties"], v, ptr, 0)
    else:
        p = None
    if p:
        raise _kr_schema_error(family, "", p)


_KR_ACQUIRE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false
"""

_KR_ACQUIRE_PLAIN = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return false
"""


class _KrLock(_kr_lock.Lock):
    """A redis-py Lock whose lease is bounded by the registry and whose
    acquire script sets the fence (KEYS: lock, fence; ARGV: token, lease)."""

    _kr_family: _kr_t.ClassVar[str] = ""
    _kr_max_ms: _kr_t.ClassVar[int] = 0
    fence: int | None

    def __init__(
        self,
        client: _kr_redis.Redis[_kr_t.Any],
        name: str,
        fence_key: str | None,
        timeout: float | None = None,
        blocking: bool = True,
        blocking_timeout: float | None = None,
    ) -> None:
        if timeout is None:
            ms = self._kr_max_ms
        else:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not _kr_math.isfinite(timeout):
                raise TTLError(f"{self._kr_family}: the lease is a number of seconds")
            ms = int(round(timeout * 1000))
            if ms < 1:
                raise TTLError(f"{self._kr_family}: lease {timeout}s is under 1ms")
            if ms > self._kr_max_ms:
                raise TTLError(f"{self._kr_family}: lease {timeout}s exceeds the maximum {self._kr_max_ms / 1000}s")
        super().__init__(client, name, timeout=ms / 1000, blocking=blocking, blocking_timeout=blocking_timeout)
        self._kr_name = name
        self._kr_client: _kr_t.Any = client  # redis-py's Script is untyped
        self._kr_lease_ms = ms
        self._kr_fence_key = fence_key
        self.fence = None

    def _kr_run(self, script: str, keys: list[str], args: list[_kr_t.Any]) -> _kr_t.Any:
        """EVALSHA of a constant script, and EVAL when the server does not
        have it (after a restart or SCRIPT FLUSH, or on another cluster node)."""
        sha = _kr_hashlib.sha1(script.encode()).hexdigest()
        try:
            return self._kr_client.evalsha(sha, len(keys), *keys, *args)
        except _kr_exc.ResponseError as e:
            if "NOSCRIPT" not in str(e) and "No matching script" not in str(e):
                raise
        return self._kr_client.eval(script, len(keys), *keys, *args)

    def do_acquire(self, token: str | bytes) -> bool:
        keys = [self._kr_name] if self._kr_fence_key is None else [self._kr_name, self._kr_fence_key]
        script = _KR_ACQUIRE if self._kr_fence_key is not None else _KR_ACQUIRE_PLAIN
        got = self._kr_run(script, keys, [token, self._kr_lease_ms])
        if got is None:
            return False
        if self._kr_fence_key is not None:
            self.fence = int(got)
        return True

    def acquire(
        self,
        sleep: float | None = None,
        blocking: bool | None = None,
        blocking_timeout: float | None = None,
        token: str | bytes | None = None,
    ) -> bool:
        if token is None:
            token = _kr_secrets.token_hex(16)
        return super().acquire(sleep=sleep, blocking=blocking, blocking_timeout=blocking_timeout, token=token)

    def do_release(self, expected_token: str | bytes) -> None:
        if not self._kr_run(self.LUA_RELEASE_SCRIPT, [self._kr_name], [expected_token]):
            raise _kr_exc.LockNotOwnedError("Cannot release a lock that's no longer owned")

    def do_extend(self, additional_time: float, replace_ttl: bool) -> bool:
        ms = int(round(additional_time * 1000))
        if not self._kr_run(self.LUA_EXTEND_SCRIPT, [self._kr_name], [self.local.token, ms, "1" if replace_ttl else "0"]):
            raise _kr_exc.LockNotOwnedError("Cannot extend a lock that's no longer owned")
        return True

    def extend(self, additional_time: float, replace_ttl: bool = False) -> bool:
        """Re-arms the lease (at most the registry's maximum) while the token matches."""
        ms = int(round(additional_time * 1000))
        if not replace_ttl or ms < 1 or ms > self._kr_max_ms:
            raise TTLError(f"{self._kr_family}: extend re-arms the lease: pass replace_ttl=True and at most {self._kr_max_ms / 1000}s")
        return super().extend(additional_time, replace_ttl=True)
`
