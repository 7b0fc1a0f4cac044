package typescript

import (
	"bytes"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/keyreg/keyreg/registry"
)

var (
	//go:embed runtime/access.ts
	accessRuntime string
	//go:embed runtime/lock.ts
	lockRuntime string
	//go:embed runtime/client-redis.ts
	redisRuntime string
	//go:embed runtime/client-ioredis.ts
	ioredisRuntime string
)

// The scripts whose SHA1 the file holds, by constant; their text is in
// runtime/*.ts and the Go backend's (the same scripts).
var scripts = map[string]string{
	"KEYREG_ACQUIRE_SHA":        "if redis.call(\"SET\", KEYS[1], ARGV[1], \"NX\", \"PX\", ARGV[2]) then\n\treturn 1\nend\nreturn false",
	"KEYREG_ACQUIRE_FENCED_SHA": "if redis.call(\"SET\", KEYS[1], ARGV[1], \"NX\", \"PX\", ARGV[2]) then\n\treturn redis.call(\"INCR\", KEYS[2])\nend\nreturn false",
	"KEYREG_RELEASE_SHA":        "if redis.call(\"GET\", KEYS[1]) == ARGV[1] then\n\treturn redis.call(\"DEL\", KEYS[1])\nend\nreturn 0",
	"KEYREG_EXTEND_SHA":         "if redis.call(\"GET\", KEYS[1]) == ARGV[1] then\n\treturn redis.call(\"PEXPIRE\", KEYS[1], ARGV[2])\nend\nreturn 0",
}

func sha(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// writeClientRuntime writes the client's import and runtime.
func writeClientRuntime(b *bytes.Buffer, client string) {
	switch client {
	case ClientRedis:
		b.WriteString(redisRuntime)
	case ClientIORedis:
		b.WriteString(ioredisRuntime)
	}
	b.WriteString(accessRuntime)
	b.WriteString(schemaRuntime)
	b.WriteString(lockRuntime)
	for _, k := range []string{"KEYREG_ACQUIRE_SHA", "KEYREG_ACQUIRE_FENCED_SHA", "KEYREG_RELEASE_SHA", "KEYREG_EXTEND_SHA"} {
		fmt.Fprintf(b, "const %s = %s;\n", k, str(sha(scripts[k])))
	}
}

// codec is how values of a family are encoded: the TypeScript type of one
// value and the expressions that encode and decode it.
type codec struct {
	Type   string
	Encode string // with %s the value
	Decode string // a function of one string
}

func codecOf(f *famView) codec {
	name := str(f.Name)
	switch f.Encoding {
	case "json":
		return codec{"unknown", "keyregEncodeJSON(" + name + ", %s)", "(s: string): unknown => JSON.parse(s)"}
	case "text":
		return codec{"string", "keyregEncodeText(" + name + ", %s)", "(s: string): string => s"}
	case "int":
		return codec{"number | bigint", "keyregEncodeInt(" + name + ", %s)", "(s: string): number | bigint => keyregDecodeInt(" + name + ", s)"}
	case "float":
		return codec{"number", "keyregEncodeFloat(" + name + ", %s)", "(s: string): number => keyregDecodeFloat(" + name + ", s)"}
	}
	// msgpack, binary and several encodings: the string passes through.
	return codec{"string", "keyregEncodeText(" + name + ", %s)", "(s: string): string => s"}
}

func (f *famView) params() string {
	var b strings.Builder
	for _, p := range f.Params {
		b.WriteString(", " + p.Arg + ": " + p.tsType())
	}
	return b.String()
}

func (f *famView) args() string {
	var b strings.Builder
	for i, p := range f.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Arg)
	}
	return b.String()
}

// ttl returns the TTL parameter of a writer, and the expression of the
// expiry it sets (0: none).
func (f *famView) ttl() (param, expr string) {
	switch f.TTL.Policy {
	case "max":
		return ", ttlMs?: number", fmt.Sprintf("keyregExpiry(%s, %s_MAX_TTL_MS, ttlMs)", str(f.Name), f.Const)
	case "persistent":
		return "", "0"
	}
	return ", ttlMs: number", fmt.Sprintf("keyregOptional(%s, ttlMs)", str(f.Name))
}

func ttlDoc(f *famView) string {
	switch f.TTL.Policy {
	case "max":
		return "The key expires after the family's maximum TTL, or after ttlMs, which must be a positive integer no larger (else a TTLError is thrown and nothing is sent)."
	case "persistent":
		return "The family is persistent: the key is left without an expiry (an existing TTL is removed)."
	}
	return "The family's TTL policy is " + comment(f.TTL.Text) + ": ttlMs 0 leaves the key without an expiry, a positive one sets it."
}

func (v *view) writeAccess(b *bytes.Buffer, f *famView) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	id, name := f.Ident, str(f.Name)
	ps, as := f.params(), f.args()
	if f.Kind == registry.KindLock {
		v.writeLock(b, f)
		return
	}
	if f.Kind == registry.KindFence {
		p("\n/** Reads the fence: the value of the latest acquisition of its lock, null when never taken. Fences have no writer. */\n")
		p("export async function get%s(client: KeyregClient%s): Promise<number | null> {\n", id, ps)
		p("  const key = build%s(%s);\n", id, as)
		p("  const s = await keyregCall(client, key, [\"GET\", key]);\n")
		p("  return s === null || s === undefined ? null : Number(keyregString(s));\n}\n")
		return
	}
	p("\n/** Deletes the %s key; returns how many keys were deleted. */\n", comment(f.Name))
	p("export async function delete%s(client: KeyregClient%s): Promise<number> {\n", id, ps)
	p("  const key = build%s(%s);\n", id, as)
	p("  return Number(await keyregCall(client, key, [\"DEL\", key]));\n}\n")
	tp, te := f.ttl()
	p("\n/** Applies the family's TTL policy to an existing key, for writes made with other commands. %s */\n", ttlDoc(f))
	p("export async function applyTTL%s(client: KeyregClient%s%s): Promise<void> {\n", id, ps, tp)
	p("  const key = build%s(%s);\n", id, as)
	p("  const exp = %s;\n", te)
	p("  await keyregCall(client, key, keyregExpireCmd(key, exp));\n}\n")
	c := codecOf(f)
	enc := func(x string) string { return fmt.Sprintf(c.Encode, x) }
	if check := v.writeSchema(b, f, &c); check != "" {
		plain := enc
		enc = func(x string) string { return fmt.Sprintf("keyregChecked%s(%s, %s)", id, plain(x), check) }
	}
	switch f.Type {
	case "string":
		p("\n/** Reads and decodes the value of the key; null when it is missing. */\n")
		p("export async function get%s(client: KeyregClient%s): Promise<%s | null> {\n", id, ps, c.Type)
		p("  const key = build%s(%s);\n", id, as)
		p("  const s = await keyregCall(client, key, [\"GET\", key]);\n")
		p("  return s === null || s === undefined ? null : (%s)(keyregString(s));\n}\n", c.Decode)
		p("\n/** Encodes value and writes it to the key. %s */\n", ttlDoc(f))
		p("export async function set%s(client: KeyregClient%s, value: %s%s): Promise<void> {\n", id, ps, c.Type, tp)
		p("  const key = build%s(%s);\n", id, as)
		p("  const exp = %s;\n", te)
		p("  const data = %s;\n", enc("value"))
		p("  await keyregCall(client, key, exp > 0 ? [\"SET\", key, data, \"PX\", String(exp)] : [\"SET\", key, data]);\n}\n")
	case "hash":
		p("\n/** Reads and decodes every field of the hash (empty when the key is missing). */\n")
		p("export async function hGetAll%s(client: KeyregClient%s): Promise<Record<string, %s>> {\n", id, ps, c.Type)
		p("  const key = build%s(%s);\n", id, as)
		p("  return keyregPairs(await keyregCall(client, key, [\"HGETALL\", key]), %s);\n}\n", c.Decode)
		p("\n/** Encodes and writes the fields, then applies the TTL policy, in one MULTI/EXEC. %s */\n", ttlDoc(f))
		p("export async function hSet%s(client: KeyregClient%s, fields: Record<string, %s>%s): Promise<void> {\n", id, ps, c.Type, tp)
		p("  const key = build%s(%s);\n", id, as)
		p("  const names = keyregSortedFields(%s, \"hSet\", fields);\n", name)
		p("  const exp = %s;\n", te)
		p("  const cmd = [\"HSET\", key];\n")
		p("  for (const field of names) cmd.push(field, %s);\n", enc("fields[field]!"))
		p("  await keyregTx(client, key, [cmd, keyregExpireCmd(key, exp)]);\n}\n")
	case "list", "set", "zset":
		type w struct{ fn, cmd, doc string }
		ws := []w{{"rPush", "RPUSH", "Appends the items to the tail of the list"}, {"lPush", "LPUSH", "Prepends the items to the head of the list (the last ends up first)"}}
		elem, what := c.Type, "items"
		if f.Type == "set" {
			ws, what = []w{{"sAdd", "SADD", "Adds the members to the set"}}, "members"
		}
		if f.Type == "zset" {
			ws, what, elem = []w{{"zAdd", "ZADD", "Adds the members with their scores to the sorted set"}}, "members", "ZMember<"+c.Type+">"
		}
		for _, x := range ws {
			p("\n/** %s, encoded, then applies the TTL policy, in one MULTI/EXEC. %s */\n", x.doc, ttlDoc(f))
			p("export async function %s%s(client: KeyregClient%s, %s: readonly %s[]%s): Promise<void> {\n", x.fn, id, ps, what, parenType(elem), tp)
			p("  const key = build%s(%s);\n", id, as)
			p("  if (%s.length === 0) throw new InvalidValueError(%s);\n", what, str(f.Name+": "+x.fn+" needs at least one "+strings.TrimSuffix(what, "s")))
			p("  const exp = %s;\n", te)
			p("  const cmd = [%s, key];\n", str(x.cmd))
			if f.Type == "zset" {
				p("  for (const m of members) {\n")
				p("    if (typeof m.score !== \"number\" || Number.isNaN(m.score)) throw new InvalidValueError(%s);\n", str(f.Name+": a score is not a number"))
				p("    cmd.push(String(m.score), %s);\n  }\n", enc("m.member"))
			} else {
				p("  for (const v of %s) cmd.push(%s);\n", what, enc("v"))
			}
			p("  await keyregTx(client, key, [cmd, keyregExpireCmd(key, exp)]);\n}\n")
		}
	case "stream":
		v.writeStream(b, f, c, enc, tp, te)
	}
	if f.Type == "string" && f.Encoding == "int" {
		v.writeIncr(b, f, tp, te)
	}
}

// writeSchema writes a family's schema, its value type and check, and
// returns the kind of stored value the check reads ("" for no check).
func (v *view) writeSchema(b *bytes.Buffer, f *famView, c *codec) string {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	root, one := valueSchema(f)
	kind := map[string]string{"json": "json", "text": "text", "int": "number", "float": "number"}[f.Encoding]
	if root == nil || kind == "" {
		return ""
	}
	id, name := f.Ident, str(f.Name)
	if f.Encoding == "json" {
		t := "unknown"
		if one != nil {
			t = schemaType(root, one, 0, nil)
		}
		p("\n/** A value of %s, from its JSON Schema. */\nexport type %sValue = %s;\n", comment(f.Name), id, t)
		c.Type = id + "Value"
		c.Decode = "(s: string): " + id + "Value => JSON.parse(s)"
	}
	p("\nconst keyregSchema%s: KeyregSchema = JSON.parse(%s);\n", id, str(string(f.Schema)))
	p("\n/** Checks a value as %s stores it (for json, decoded) against the family's JSON Schema: a SchemaError names the JSON pointer, never the value. */\n", comment(f.Name))
	p("export function check%s(value: unknown): void {\n  keyregCheck(%s, keyregSchema%s, value, \"\");\n}\n", id, name, id)
	what := map[string]string{"hash": "field", "stream": "entry"}[f.Type]
	switch f.Type {
	case "hash":
		// One field, against the hash's schema for that field.
		p("\nfunction keyregChecked%s(data: string, field: string): string {\n", id)
		p("  keyregCheckField(%s, keyregSchema%s, field, keyregStored(data, %s), %s);\n  return data;\n}\n", name, id, str(kind), str(what+" "))
		return "field"
	case "stream":
		// Checked as a whole entry, in xAdd.
		p("\nfunction keyregChecked%s(data: string, entry: Record<string, unknown>, field: string): string {\n", id)
		p("  entry[field] = keyregStored(data, %s);\n  return data;\n}\n", str(kind))
		return "entry, field"
	}
	p("\nfunction keyregChecked%s(data: string, _: string): string {\n", id)
	p("  keyregCheck(%s, keyregSchema%s, keyregStored(data, %s), \"\");\n  return data;\n}\n", name, id, str(kind))
	return `""`
}

func parenType(t string) string {
	if strings.Contains(t, "|") {
		return "(" + t + ")"
	}
	return t
}

const incrScript = `redis.call("INCRBY", KEYS[1], ARGV[1])
local ms = tonumber(ARGV[2])
if ms > 0 then
	local t = redis.call("PTTL", KEYS[1])
	if t < 0 or t > ms then
		redis.call("PEXPIRE", KEYS[1], ms)
	end
elseif ms < 0 then
	redis.call("PERSIST", KEYS[1])
end
return redis.call("GET", KEYS[1])`

func (v *view) writeIncr(b *bytes.Buffer, f *famView, tp, te string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	id, ps, as := f.Ident, f.params(), f.args()
	exp := "exp"
	if f.TTL.Policy == "persistent" {
		exp = "-1"
	}
	p("\n/**\n * Adds n to the counter (INCRBY) and returns its new value, applying the TTL\n")
	p(" * policy in the same script: a key without an expiry, or with a later one, gets\n")
	p(" * the expiry; an earlier one is kept. %s\n */\n", ttlDoc(f))
	p("export async function incrBy%s(client: KeyregClient%s, n: number | bigint%s): Promise<number | bigint> {\n", id, ps, tp)
	p("  const key = build%s(%s);\n", id, as)
	p("  const exp = %s;\n", te)
	p("  const by = keyregEncodeInt(%s, n);\n", str(f.Name))
	p("  const res = await keyregEval(client, %s, %s, [key], [by, String(%s)]);\n", str(incrScript), str(sha(incrScript)), exp)
	p("  return keyregDecodeInt(%s, keyregString(res));\n}\n", str(f.Name))
	ttlArg := ""
	if tp != "" {
		ttlArg = ", ttlMs"
	}
	comma := ""
	if as != "" {
		comma = ", "
	}
	p("\n/** Adds 1 to the counter: incrBy%s with n 1. */\n", id)
	p("export async function incr%s(client: KeyregClient%s%s): Promise<number | bigint> {\n", id, ps, tp)
	p("  return incrBy%s(client%s%s, 1%s);\n}\n", id, comma, as, ttlArg)
}

func (v *view) writeStream(b *bytes.Buffer, f *famView, c codec, enc func(string) string, tp, te string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	id, name, ps, as := f.Ident, str(f.Name), f.params(), f.args()
	trim := "The family declares no max_len, so the stream is not trimmed."
	if f.MaxLen > 0 {
		trim = fmt.Sprintf("It always trims the stream to about %s_MAX_LEN entries (XADD MAXLEN ~).", f.Const)
	}
	p("\n/** Encodes the fields and appends them as one entry, returning its ID. %s The append and the TTL policy are one MULTI/EXEC. %s */\n", trim, ttlDoc(f))
	p("export async function xAdd%s(client: KeyregClient%s, fields: Record<string, %s>%s): Promise<string> {\n", id, ps, c.Type, tp)
	p("  const key = build%s(%s);\n", id, as)
	p("  const names = keyregSortedFields(%s, \"xAdd\", fields);\n", name)
	p("  const exp = %s;\n", te)
	if f.MaxLen > 0 {
		p("  const cmd = [\"XADD\", key, \"MAXLEN\", \"~\", String(%s_MAX_LEN), \"*\"];\n", f.Const)
	} else {
		p("  const cmd = [\"XADD\", key, \"*\"];\n")
	}
	if strings.Contains(enc("x"), "keyregChecked") {
		p("  const entry: Record<string, unknown> = Object.create(null);\n")
		p("  for (const field of names) cmd.push(field, %s);\n", enc("fields[field]!"))
		p("  keyregCheck(%s, keyregSchema%s, entry, \"entry \");\n", name, id)
	} else {
		p("  for (const field of names) cmd.push(field, %s);\n", enc("fields[field]!"))
	}
	p("  const res = await keyregTx(client, key, [cmd, keyregExpireCmd(key, exp)]);\n")
	p("  return keyregString(res[0]);\n}\n")
	if len(f.Groups) == 0 {
		return
	}
	// groups: name → max idle ms (-1: none)
	p("\nconst keyregGroups%s = new Map<string, number>([", id)
	for i, g := range f.Groups {
		if i > 0 {
			p(", ")
		}
		p("[%s, %d]", str(g.Name), g.MaxConsumerIdleMS)
	}
	p("]);\n\n")
	p("function keyregGroup%s(group: string): number {\n", id)
	p("  const idle = keyregGroups%s.get(group);\n", id)
	p("  if (idle === undefined) throw new InvalidValueError(%s);\n", str(f.Name+": the group is not a consumer group declared in keys.yaml"))
	p("  return idle;\n}\n")
	p("\n/** Reads up to count entries never delivered to the group (XREADGROUP … STREAMS key >) for consumer, waiting up to blockMs (0 waits until one arrives; a negative blockMs does not wait). The group must be declared in keys.yaml. */\n")
	p("export async function readGroup%s(client: KeyregClient%s, group: string, consumer: string, count: number, blockMs: number): Promise<StreamEntry<%s>[]> {\n", id, ps, c.Type)
	p("  const key = build%s(%s);\n", id, as)
	p("  keyregGroup%s(group);\n", id)
	p("  const cmd = [\"XREADGROUP\", \"GROUP\", group, consumer, \"COUNT\", String(count)];\n")
	p("  if (blockMs >= 0) cmd.push(\"BLOCK\", String(blockMs));\n")
	p("  cmd.push(\"STREAMS\", key, \">\");\n")
	p("  const res = await keyregCall(client, key, cmd);\n")
	p("  return keyregStreams(res).flatMap((entries) => keyregEntries(entries, %s));\n}\n", c.Decode)
	p("\n/** Acknowledges entries of the group (XACK); returns how many were pending. */\n")
	p("export async function ack%s(client: KeyregClient%s, group: string, ids: readonly string[]): Promise<number> {\n", id, ps)
	p("  const key = build%s(%s);\n", id, as)
	p("  keyregGroup%s(group);\n", id)
	p("  if (ids.length === 0) return 0;\n")
	p("  return Number(await keyregCall(client, key, [\"XACK\", key, group, ...ids]));\n}\n")
	p("\n/** Moves to consumer up to count pending entries idle longer than the group's max_consumer_idle (XAUTOCLAIM … 0-0 COUNT count), those of consumers that stopped, and returns them. A group without max_consumer_idle is refused. */\n")
	p("export async function claim%s(client: KeyregClient%s, group: string, consumer: string, count: number): Promise<StreamEntry<%s>[]> {\n", id, ps, c.Type)
	p("  const key = build%s(%s);\n", id, as)
	p("  const idle = keyregGroup%s(group);\n", id)
	p("  if (idle < 0) throw new InvalidValueError(%s);\n", str(f.Name+": the group declares no max_consumer_idle to claim after"))
	p("  const res = await keyregCall(client, key, [\"XAUTOCLAIM\", key, group, consumer, String(idle), \"0-0\", \"COUNT\", String(count)]);\n")
	p("  return Array.isArray(res) ? keyregEntries(res[1], %s) : [];\n}\n", c.Decode)
}

func (v *view) writeLock(b *bytes.Buffer, f *famView) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	if f.TTL.Policy != "max" {
		return // no lease: lint reports lock-lease-missing
	}
	id, ps, as := f.Ident, f.params(), f.args()
	l := lockType(id)
	fence := `""`
	var fv *famView
	if f.Fencing != "" {
		for _, x := range v.all {
			if x.Name == f.Fencing {
				fv = x
			}
		}
	}
	p("\n/** A held %s lock", comment(f.Name))
	if fv != nil {
		p(", with the fence value its acquisition drew from %s", comment(fv.Name))
	}
	p(". */\nexport class %s extends KeyregLock {\n", l)
	p("  /** The fence value (fencing token) of this acquisition: greater than every earlier holder's, taken in the same script as the lock. Pass it to the resource the lock protects. */\n")
	p("  fence(): number {\n    return this.fenceValue;\n  }\n}\n")
	p("\n/** One attempt to acquire the %s lock: throws a LockHeldError when another holder has it, a TTLError for a lease longer than the family's maximum TTL.", comment(f.Name))
	if fv != nil {
		p(" The lock and its fence are taken in one script, so on a Cluster both keys share a {hash tag}.")
	}
	p(" */\n")
	p("export async function tryAcquire%s(client: KeyregClient%s, opts?: LockOptions): Promise<%s> {\n", l, ps, l)
	p("  const key = build%s(%s);\n", id, as)
	if fv != nil {
		var fargs []string
		for _, fp := range fv.Params {
			for _, lp := range f.Params {
				if lp.Name == fp.Name {
					fargs = append(fargs, lp.Arg)
				}
			}
		}
		if len(fargs) == len(fv.Params) {
			fence = "build" + fv.Ident + "(" + strings.Join(fargs, ", ") + ")"
		}
	}
	p("  const fenceKey = %s;\n", fence)
	p("  const l = await keyregTryLock(client, %s, key, fenceKey, %s_MAX_TTL_MS, opts);\n", str(f.Name), f.Const)
	p("  return new %s(%s, key, l.token, l.leaseMs, l.fence);\n}\n", l, str(f.Name))
	p("\n/** Acquires the %s lock, retrying with jittered backoff while another holder has it, until opts.signal aborts (then a LockHeldError). */\n", comment(f.Name))
	comma := ""
	if as != "" {
		comma = ", "
	}
	p("export async function acquire%s(client: KeyregClient%s, opts?: LockOptions): Promise<%s> {\n", l, ps, l)
	p("  return keyregLockWait(opts, () => tryAcquire%s(client%s%s, opts));\n}\n", l, comma, as)
}
