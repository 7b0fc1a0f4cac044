package python

import (
	"fmt"
	"strings"
)

// codec is how values of an encoding are typed, encoded and decoded.
type codec struct {
	typ, enc, dec string
}

func (v *view) codec(fv *famView, elem string) codec {
	switch enc := fv.f.Encoding; enc {
	case "json":
		if elem == "" {
			elem = "_kr_t.Any"
		}
		return codec{elem, "_kr_enc_json", "_kr_dec_json"}
	case "text":
		return codec{"str", "_kr_enc_text", "_kr_dec_text"}
	case "int":
		return codec{"int", "_kr_enc_int", "_kr_dec_int"}
	case "float":
		return codec{"float", "_kr_enc_float", "_kr_dec_float"}
	}
	return codec{"bytes", "_kr_enc_raw", "_kr_dec_raw"}
}

// flavour is the sync or the asyncio variant of an accessor.
type flavour struct {
	prefix, def, await, client, with string
}

var flavours = []flavour{
	{"", "def", "", "Client[_kr_t.Any]", "with"},
	{"a", "async def", "await ", "AsyncClient[_kr_t.Any]", "async with"},
}

// ttlParam is the accessor's ttl parameter and the line computing ms, the
// PX (0: no expiry), by the family's policy.
func (fv *famView) ttlParam() (param, line string) {
	fam := pyStr(fv.f.Name)
	switch fv.f.TTL.Policy {
	case "max":
		return ", ttl: _kr_datetime.timedelta | None = None", fmt.Sprintf("ms = _kr_expiry(%s, %d, ttl)", fam, fv.maxMS())
	case "persistent":
		return "", "ms = 0"
	}
	return ", ttl: _kr_datetime.timedelta", fmt.Sprintf("ms = _kr_optional(%s, ttl)", fam)
}

// check is the statement that checks an encoded value against the
// schema before anything is sent: the JSON as Redis stores it, decoded
// again, or the Python value of int, float and text; where names the
// member for a collection.
func (fv *famView) check(data, val, where string) string {
	if fv.doc == nil {
		return ""
	}
	var subject string
	switch fv.f.Encoding {
	case "json":
		subject = "_kr_json.loads(" + data + ")"
	case "int", "float", "text":
		subject = val
	default:
		return ""
	}
	return fmt.Sprintf("p = _kr_check(_KR_SCHEMA_%s, _KR_SCHEMA_%s, %s, \"#\", 0)\nif p:\n    raise _kr_schema_error(%s, %s, p)\n",
		fv.upper, fv.upper, subject, pyStr(fv.f.Name), where)
}

func indent(s, by string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return by + strings.Join(lines, "\n"+by) + "\n"
}

func (v *view) accessors(b *strings.Builder, fv *famView) {
	f := fv.f
	s, k := fv.snake, fv.key
	fam := pyStr(f.Name)
	if f.Kind == "lock" {
		v.lockCode(b, fv)
		return
	}
	c := v.codec(fv, fv.value)
	if f.Kind == "fence" {
		c = codec{"int", "_kr_enc_int", "_kr_dec_int"}
	}
	for _, fl := range flavours {
		p := fl.prefix
		if f.Type == "string" || f.Kind == "fence" {
			fmt.Fprintf(b, "\n\n%s %sget_%s(client: %s, key: %s) -> %s | None:\n", fl.def, p, s, fl.client, k, c.typ)
			b.WriteString("    \"\"\"The value of the key, decoded; None when the key does not exist.\"\"\"\n")
			fmt.Fprintf(b, "    raw = %sclient.get(key.build())\n    return None if raw is None else %s(raw)\n", fl.await, c.dec)
		}
		if f.Kind == "fence" {
			continue
		}
		tp, tl := fv.ttlParam()
		switch f.Type {
		case "string":
			fmt.Fprintf(b, "\n\n%s %sset_%s(client: %s, key: %s, value: %s%s) -> None:\n", fl.def, p, s, fl.client, k, c.typ, tp)
			b.WriteString("    \"\"\"Writes value with the TTL the family's policy allows: TTLError, and\n    nothing sent, for a TTL it refuses; SchemaError for a value the schema refuses.\"\"\"\n")
			fmt.Fprintf(b, "    %s\n    data = %s(value)\n", tl, c.enc)
			b.WriteString(indent(fv.check("data", "value", `""`), "    "))
			fmt.Fprintf(b, "    if ms > 0:\n        %sclient.set(key.build(), data, px=ms)\n    else:\n        %sclient.set(key.build(), data)\n", fl.await, fl.await)
		case "hash":
			fc := v.codec(fv, fv.field)
			fmt.Fprintf(b, "\n\n%s %shgetall_%s(client: %s, key: %s) -> dict[str, %s]:\n", fl.def, p, s, fl.client, k, fc.typ)
			b.WriteString("    \"\"\"Every field of the hash, decoded.\"\"\"\n")
			fmt.Fprintf(b, "    raw = %sclient.hgetall(key.build())\n    return {_kr_dec_text(f): %s(x) for f, x in raw.items()}\n", fl.await, fc.dec)
			fmt.Fprintf(b, "\n\n%s %shset_%s(client: %s, key: %s, fields: _kr_t.Mapping[str, %s]%s) -> None:\n", fl.def, p, s, fl.client, k, fc.typ, tp)
			b.WriteString("    \"\"\"Writes the fields and the TTL in one MULTI/EXEC, each field checked first.\"\"\"\n")
			fmt.Fprintf(b, "    %s\n    _kr_fields(%s, fields, \"hset\")\n    enc: dict[str | bytes, bytes | float | int | str] = {}\n    for name, x in fields.items():\n        enc[name] = data = %s(x)\n", tl, fam, fc.enc)
			if fv.doc != nil && (f.Encoding == "json" || f.Encoding == "int" || f.Encoding == "float" || f.Encoding == "text") {
				subject := "x"
				if f.Encoding == "json" {
					subject = "_kr_json.loads(data)"
				}
				fmt.Fprintf(b, "        _kr_check_field(%s, _KR_SCHEMA_%s, name, %s)\n", fam, fv.upper, subject)
			}
			v.multi(b, fl, "pipe.hset(k, mapping=enc)")
		case "list", "set", "zset":
			type w struct{ fn, cmd string }
			var ws []w
			switch f.Type {
			case "list":
				ws = []w{{"rpush", "pipe.rpush(k, *enc)"}, {"lpush", "pipe.lpush(k, *enc)"}}
			case "set":
				ws = []w{{"sadd", "pipe.sadd(k, *enc)"}}
			case "zset":
				ws = []w{{"zadd", "pipe.zadd(k, dict(zip(enc, scores)))"}}
			}
			for _, x := range ws {
				if f.Type == "zset" {
					fmt.Fprintf(b, "\n\n%s %s%s_%s(client: %s, key: %s, members: _kr_t.Sequence[tuple[float, %s]]%s) -> None:\n", fl.def, p, x.fn, s, fl.client, k, c.typ, tp)
				} else {
					fmt.Fprintf(b, "\n\n%s %s%s_%s(client: %s, key: %s, items: _kr_t.Sequence[%s]%s) -> None:\n", fl.def, p, x.fn, s, fl.client, k, c.typ, tp)
				}
				b.WriteString("    \"\"\"Writes and applies the TTL in one MULTI/EXEC, each member checked first.\"\"\"\n")
				fmt.Fprintf(b, "    %s\n", tl)
				if f.Type == "zset" {
					fmt.Fprintf(b, "    if not members:\n        raise ValueError(%s + \": %s: nothing to write\")\n", fam, x.fn)
					b.WriteString("    scores = [float(sc) for sc, _ in members]\n    values = [m for _, m in members]\n")
				} else {
					fmt.Fprintf(b, "    if not items:\n        raise ValueError(%s + \": %s: nothing to write\")\n    values = list(items)\n", fam, x.fn)
				}
				fmt.Fprintf(b, "    enc: list[bytes] = []\n    for i, value in enumerate(values):\n        enc.append(data := %s(value))\n", c.enc)
				b.WriteString(indent(fv.check("data", "value", `f"member {i}: "`), "        "))
				v.multi(b, fl, x.cmd)
			}
		case "stream":
			fc := v.codec(fv, fv.field)
			fmt.Fprintf(b, "\n\n%s %sxadd_%s(client: %s, key: %s, fields: _kr_t.Mapping[str, %s]%s) -> str:\n", fl.def, p, s, fl.client, k, fc.typ, tp)
			b.WriteString("    \"\"\"Appends an entry, trimmed with MAXLEN ~ max_len, and applies the TTL, in\n    one MULTI/EXEC; returns the entry's ID.\"\"\"\n")
			fmt.Fprintf(b, "    %s\n    _kr_fields(%s, fields, \"xadd\")\n", tl, fam)
			fmt.Fprintf(b, "    enc: dict[str, bytes] = {name: %s(x) for name, x in fields.items()}\n", fc.enc)
			// The entry is checked as a whole object: the JSON as stored, or
			// the text, int or float values themselves.
			entry := ""
			switch f.Encoding {
			case "json":
				entry = "{n: _kr_json.loads(d) for n, d in enc.items()}"
			case "text", "int", "float":
				entry = "dict(fields)"
			}
			if fv.doc != nil && entry != "" {
				fmt.Fprintf(b, "    p = _kr_check(_KR_SCHEMA_%s, _KR_SCHEMA_%s, %s, \"#\", 0)\n    if p:\n        raise _kr_schema_error(%s, \"entry: \", p)\n", fv.upper, fv.upper, entry, fam)
			}
			cmd := "pipe.xadd(k, enc)"
			if f.MaxLen > 0 {
				cmd = fmt.Sprintf("pipe.xadd(k, enc, maxlen=%d, approximate=True)", f.MaxLen)
			}
			v.multiResult(b, fl, cmd)
			if len(f.Groups) > 0 {
				v.groupHelpers(b, fv, fl, fc)
			}
		}
		fmt.Fprintf(b, "\n\n%s %sdelete_%s(client: %s, key: %s) -> int:\n", fl.def, p, s, fl.client, k)
		b.WriteString("    \"\"\"Deletes the key; 1 when it existed.\"\"\"\n")
		fmt.Fprintf(b, "    return int(%sclient.delete(key.build()))\n", fl.await)
		fmt.Fprintf(b, "\n\n%s %sapply_ttl_%s(client: %s, key: %s%s) -> None:\n", fl.def, p, s, fl.client, k, tp)
		b.WriteString("    \"\"\"Applies the family's TTL policy to a key written by other means.\"\"\"\n")
		fmt.Fprintf(b, "    %s\n    if ms > 0:\n        %sclient.pexpire(key.build(), ms)\n    else:\n        %sclient.persist(key.build())\n", tl, fl.await, fl.await)
	}
}

func (v *view) multi(b *strings.Builder, fl flavour, cmd string) {
	fmt.Fprintf(b, "    k = key.build()\n    %s client.pipeline(transaction=True) as pipe:\n        %s\n        _kr_ttl_cmds(pipe, k, ms)\n        %spipe.execute()\n", fl.with, cmd, fl.await)
}

func (v *view) multiResult(b *strings.Builder, fl flavour, cmd string) {
	fmt.Fprintf(b, "    k = key.build()\n    %s client.pipeline(transaction=True) as pipe:\n        %s\n        _kr_ttl_cmds(pipe, k, ms)\n        res = %spipe.execute()\n    return _kr_dec_text(res[0])\n", fl.with, cmd, fl.await)
}

func (v *view) groupHelpers(b *strings.Builder, fv *famView, fl flavour, fc codec) {
	f := fv.f
	s, k, p := fv.snake, fv.key, fl.prefix
	fam := pyStr(f.Name)
	fmt.Fprintf(b, "\n\n%s %sread_group_%s(client: %s, key: %s, group: str, consumer: str, count: int, block: int | None = None) -> list[StreamEntry]:\n", fl.def, p, s, fl.client, k)
	b.WriteString("    \"\"\"New entries for consumer (XREADGROUP ... >), their fields decoded; block in ms.\"\"\"\n")
	fmt.Fprintf(b, "    _kr_group(%s, %s_GROUPS, group)\n", fam, fv.upper)
	fmt.Fprintf(b, "    resp = %sclient.xreadgroup(group, consumer, {key.build(): \">\"}, count=count, block=block)\n", fl.await)
	fmt.Fprintf(b, "    return [e for _, entries in (resp or []) for e in _kr_entries(entries, %s)]\n", fc.dec)
	fmt.Fprintf(b, "\n\n%s %sack_%s(client: %s, key: %s, group: str, *ids: str) -> int:\n", fl.def, p, s, fl.client, k)
	b.WriteString("    \"\"\"XACK: how many of ids were pending.\"\"\"\n")
	fmt.Fprintf(b, "    _kr_group(%s, %s_GROUPS, group)\n    if not ids:\n        return 0\n", fam, fv.upper)
	b.WriteString("    c: _kr_t.Any = client  # the stubs leave xack untyped\n")
	fmt.Fprintf(b, "    return int(%sc.xack(key.build(), group, *ids))\n", fl.await)
	idle := map[string]int64{}
	for _, g := range f.Groups {
		idle[g.Name] = g.MaxConsumerIdleMS
	}
	var pairs []string
	for _, g := range f.Groups {
		pairs = append(pairs, fmt.Sprintf("%s: %d", pyStr(g.Name), g.MaxConsumerIdleMS))
	}
	fmt.Fprintf(b, "\n\n%s %sclaim_%s(client: %s, key: %s, group: str, consumer: str, count: int) -> list[StreamEntry]:\n", fl.def, p, s, fl.client, k)
	b.WriteString("    \"\"\"XAUTOCLAIM at the group's max_consumer_idle: moves to consumer the entries\n    idle longer than that and returns them.\"\"\"\n")
	fmt.Fprintf(b, "    _kr_group(%s, %s_GROUPS, group)\n", fam, fv.upper)
	fmt.Fprintf(b, "    idle = {%s}[group]\n", strings.Join(pairs, ", "))
	fmt.Fprintf(b, "    if idle < 0:\n        raise ValueError(%s + \": group \" + repr(group) + \" declares no max_consumer_idle\")\n", fam)
	fmt.Fprintf(b, "    resp = %sclient.xautoclaim(key.build(), group, consumer, idle, start_id=0, count=count)\n", fl.await)
	fmt.Fprintf(b, "    return _kr_entries(resp[1], %s)\n", fc.dec)
}

func (v *view) lockCode(b *strings.Builder, fv *famView) {
	f := fv.f
	if f.TTL.Policy != "max" {
		fmt.Fprintf(b, "\n# No lock code: the family has no ttl max, its lease (lint: lock-lease-missing).\n")
		return
	}
	fmt.Fprintf(b, "\n\nclass %s(_KrLock):\n", fv.lock)
	b.WriteString("    \"\"\"A redis.lock.Lock on a key of this family, its lease at most the registry's\n    ttl max; with fencing, a successful acquire sets fence.\"\"\"\n\n")
	fmt.Fprintf(b, "    _kr_family = %s\n    _kr_max_ms = %d\n", pyStr(f.Name), fv.maxMS())
	var args, names []string
	for _, p := range fv.params {
		args = append(args, p.arg+": "+p.pyType())
		names = append(names, p.arg)
	}
	fmt.Fprintf(b, "\n\ndef %s(\n    client: Client[_kr_t.Any],\n", fv.lockFn)
	for _, a := range args {
		fmt.Fprintf(b, "    %s,\n", a)
	}
	b.WriteString("    timeout: float | None = None,\n    blocking: bool = True,\n    blocking_timeout: float | None = None,\n")
	fmt.Fprintf(b, ") -> %s:\n", fv.lock)
	b.WriteString("    \"\"\"The lock of these values; timeout (seconds) may only shorten the registry's lease.\"\"\"\n")
	fence := "None"
	if fe, ok := v.byName[f.Fencing]; ok && f.Fencing != "" && fe.f.InScope {
		var fa []string
		for _, fp := range fe.params {
			for _, p := range fv.params {
				if p.name == fp.name {
					fa = append(fa, p.arg)
				}
			}
		}
		if len(fa) == len(fe.params) {
			fence = "build_" + fe.snake + "(" + strings.Join(fa, ", ") + ")"
		}
	}
	fmt.Fprintf(b, "    return %s(\n        client,\n        build_%s(%s),\n        %s,\n        timeout=timeout,\n        blocking=blocking,\n        blocking_timeout=blocking_timeout,\n    )\n",
		fv.lock, fv.snake, strings.Join(names, ", "), fence)
}
