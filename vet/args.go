package vet

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"golang.org/x/tools/go/analysis"
)

// This file finds the key arguments the parameter names of a method do not
// show: MSet's keys among its values, the keys of Do's command line, and
// the key fields of go-redis's argument structs.

// argsFields are go-redis v9's argument structs that carry keys: the
// field of a key, of all keys (ZStore.Keys) or of streams then IDs
// (XReadArgs.Streams: "stream1 stream2 id1 id2", the first half keys).
var argsFields = map[string]map[string]fieldKeys{
	"XAddArgs":        {"Stream": oneKey},
	"XNackArgs":       {"Stream": oneKey},
	"XPendingExtArgs": {"Stream": oneKey},
	"XAutoClaimArgs":  {"Stream": oneKey},
	"XClaimArgs":      {"Stream": oneKey},
	"XCfgSetArgs":     {"Stream": oneKey},
	"ZRangeArgs":      {"Key": oneKey},
	"JSONSetArgs":     {"Key": oneKey},
	"ZStore":          {"Keys": allKeys},
	"XReadArgs":       {"Streams": halfKeys},
	"XReadGroupArgs":  {"Streams": halfKeys},
}

type fieldKeys int

const (
	oneKey   fieldKeys = iota // a string field that is a key
	allKeys                   // a []string field of keys
	halfKeys                  // a []string field of keys, then as many IDs
)

// maxElts bounds the elements of one literal that are checked as keys.
const maxElts = 1 << 12

// literal returns the composite literal e is, or points to, or the local
// variable e names is assigned once, or nil.
func (v *visitor) literal(e ast.Expr, depth int) *ast.CompositeLit {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	switch e := e.(type) {
	case *ast.CompositeLit:
		return e
	case *ast.Ident:
		obj, ok := v.pass.TypesInfo.Uses[e].(*types.Var)
		if !ok || depth >= maxDepth || obj.Parent() == nil || obj.Parent() == obj.Pkg().Scope() {
			return nil
		}
		if as := v.assigns[obj]; len(as) == 1 && as[0].rhs != nil && as[0].index < 0 {
			return v.literal(as[0].rhs, depth+1)
		}
	}
	return nil
}

// argsStruct checks the key fields of e when it is a literal of one of
// go-redis's argument structs (or a slice of them, as JSONMSetArgs takes).
func (v *visitor) argsStruct(e ast.Expr) {
	lit := v.literal(e, 0)
	if lit == nil {
		if carriesKeys(v.pass.TypesInfo.TypeOf(e)) {
			v.unknownKey(e) // a parameter, a field: its keys are set elsewhere
		}
		return
	}
	t := v.pass.TypesInfo.TypeOf(lit)
	if t == nil {
		return
	}
	if s, ok := t.Underlying().(*types.Slice); ok {
		if _, ok := redisNamed(s.Elem()); ok {
			for i, el := range lit.Elts {
				if i >= maxElts {
					break
				}
				v.argsStruct(el)
			}
		}
		return
	}
	name, ok := redisNamed(t)
	if !ok {
		return
	}
	fields := argsFields[name]
	if fields == nil {
		return
	}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		id, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		kind, ok := fields[id.Name]
		if !ok {
			continue
		}
		if kind == oneKey {
			v.key(kv.Value)
			continue
		}
		l, ok := ast.Unparen(kv.Value).(*ast.CompositeLit)
		if !ok {
			v.unknownKey(kv.Value)
			continue
		}
		elts := l.Elts
		if kind == halfKeys {
			if len(elts)%2 != 0 {
				v.unknownKey(kv.Value)
				continue
			}
			elts = elts[:len(elts)/2]
		}
		v.keys(elts)
	}
}

// carriesKeys reports whether t is one of the argument structs that carry
// keys, a pointer to one or a slice of them.
func carriesKeys(t types.Type) bool {
	if t == nil {
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		t = u.Elem()
	case *types.Slice:
		t = u.Elem()
	}
	name, ok := redisNamed(t)
	return ok && argsFields[name] != nil
}

// redisNamed returns the name of t when it is a named type of go-redis v9.
func redisNamed(t types.Type) (string, bool) {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != redisPkg {
		return "", false
	}
	return n.Obj().Name(), true
}

// keys checks every expression of es as a key.
func (v *visitor) keys(es []ast.Expr) {
	for i, e := range es {
		if i >= maxElts {
			break
		}
		v.key(e)
	}
}

// unknownKey counts a key argument, or several, that the analyzer knows
// is there but cannot read: a map or a slice built elsewhere.
func (v *visitor) unknownKey(e ast.Expr) {
	v.stats.Keys++
	v.stats.Unknown++
	if v.c.Strict {
		v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleUnregistered,
			Message: "keys cannot be read statically; use generated builders in a literal"})
	}
}

// pairs checks the keys of MSet's and MSetNX's values, as go-redis's
// appendArgs reads them: alternating keys and values, or one []string or
// []any of them, a map of keys to values, or a struct whose redis tags
// name the keys.
func (v *visitor) pairs(args []ast.Expr, ellipsis bool) {
	if len(args) == 0 {
		return
	}
	if len(args) > 1 && !ellipsis {
		v.alternate(args)
		return
	}
	e := args[0]
	if lit := v.literal(e, 0); lit != nil {
		t := v.pass.TypesInfo.TypeOf(lit)
		switch u := t.Underlying().(type) {
		case *types.Slice:
			v.alternate(lit.Elts)
			return
		case *types.Map:
			if isString(u.Key()) {
				var ks []ast.Expr
				for _, el := range lit.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						ks = append(ks, kv.Key)
					}
				}
				v.keys(ks)
				return
			}
		case *types.Struct:
			if !ellipsis {
				v.tags(e, u)
				return
			}
		}
	}
	t := v.pass.TypesInfo.TypeOf(e)
	if t == nil {
		return
	}
	if p, ok := t.Underlying().(*types.Pointer); ok && !ellipsis {
		t = p.Elem()
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		if !ellipsis {
			v.tags(e, u)
			return
		}
	case *types.Basic:
		if isString(u) && !ellipsis {
			v.key(e) // MSet(ctx, "k"): one key without its value, which Redis refuses
			return
		}
	}
	v.unknownKey(e)
}

// alternate checks the even elements of es, the keys of key, value pairs.
func (v *visitor) alternate(es []ast.Expr) {
	for i := 0; i < len(es) && i < 2*maxElts; i += 2 {
		v.key(es[i])
	}
}

// tags checks the keys a struct value gives MSet: the names of the redis
// tags of its fields, as go-redis's appendStructField reads them.
func (v *visitor) tags(e ast.Expr, s *types.Struct) {
	for i := 0; i < s.NumFields() && i < maxElts; i++ {
		tag := reflect.StructTag(s.Tag(i)).Get("redis")
		name, _, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		v.keyShape(e, shape{parts: []part{{lit: name}}, viaVar: true})
	}
}

// keySpec is where a command's keys are on its command line, as Redis's
// COMMAND INFO gives them: first and last key (a negative last counts
// from the end: -1 the last argument) and the step between keys; or, for
// a command with a numkeys argument, its index, the keys following it.
type keySpec struct {
	first, last, step int
	numkeys           int
	channels          bool // the "keys" are Pub/Sub channels
	sharded           bool // of sharded Pub/Sub
}

var (
	oneSpec    = keySpec{first: 1, last: 1, step: 1}
	allSpec    = keySpec{first: 1, last: -1, step: 1}
	twoSpec    = keySpec{first: 1, last: 2, step: 1}
	noKeysSpec = keySpec{}
)

// commandKeys maps the common commands to their key positions, from Redis's
// key specs (COMMAND INFO). A command not here is unknown: Do's keys are
// then counted as of unknown shape.
var commandKeys = map[string]keySpec{}

func init() {
	for _, c := range strings.Fields(`GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX INCR INCRBY
		INCRBYFLOAT DECR DECRBY APPEND STRLEN SETRANGE GETRANGE SUBSTR SETBIT GETBIT BITCOUNT BITPOS
		BITFIELD BITFIELD_RO EXPIRE PEXPIRE EXPIREAT PEXPIREAT EXPIRETIME PEXPIRETIME TTL PTTL PERSIST
		TYPE DUMP RESTORE HSET HSETNX HGET HMSET HMGET HDEL HGETALL HINCRBY HINCRBYFLOAT HEXISTS HLEN
		HKEYS HVALS HSTRLEN HSCAN HRANDFIELD HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HTTL HPTTL HPERSIST
		HGETDEL HGETEX HSETEX LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET LINSERT LREM
		LTRIM LPOS SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP SRANDMEMBER SSCAN ZADD ZREM ZRANGE
		ZRANGEBYSCORE ZRANGEBYLEX ZREVRANGE ZREVRANGEBYSCORE ZREVRANGEBYLEX ZSCORE ZMSCORE ZCARD ZCOUNT
		ZLEXCOUNT ZINCRBY ZRANK ZREVRANK ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREMRANGEBYLEX ZPOPMIN ZPOPMAX
		ZRANDMEMBER ZSCAN XADD XLEN XRANGE XREVRANGE XTRIM XDEL XACK XPENDING XCLAIM XAUTOCLAIM XSETID
		PFADD GEOADD GEOPOS GEODIST GEOHASH GEOSEARCH GEORADIUS_RO GEORADIUSBYMEMBER_RO`) {
		commandKeys[c] = oneSpec
	}
	for _, c := range strings.Fields(`DEL UNLINK EXISTS TOUCH MGET WATCH PFCOUNT PFMERGE SINTER SUNION
		SDIFF SINTERSTORE SUNIONSTORE SDIFFSTORE`) {
		commandKeys[c] = allSpec
	}
	for _, c := range strings.Fields(`RENAME RENAMENX COPY LMOVE BLMOVE SMOVE RPOPLPUSH BRPOPLPUSH
		GEOSEARCHSTORE ZRANGESTORE LCS`) {
		commandKeys[c] = twoSpec
	}
	for _, c := range strings.Fields(`BLPOP BRPOP BZPOPMIN BZPOPMAX`) {
		commandKeys[c] = keySpec{first: 1, last: -2, step: 1} // the timeout last
	}
	for _, c := range strings.Fields(`MSET MSETNX`) {
		commandKeys[c] = keySpec{first: 1, last: -1, step: 2}
	}
	commandKeys["BITOP"] = keySpec{first: 2, last: -1, step: 1}
	for _, c := range strings.Fields(`EVAL EVALSHA EVAL_RO EVALSHA_RO FCALL FCALL_RO BLMPOP BZMPOP`) {
		commandKeys[c] = keySpec{numkeys: 2}
	}
	for _, c := range strings.Fields(`ZUNIONSTORE ZINTERSTORE ZDIFFSTORE`) {
		commandKeys[c] = keySpec{first: 1, last: 1, step: 1, numkeys: 2}
	}
	for _, c := range strings.Fields(`ZUNION ZINTER ZDIFF ZINTERCARD SINTERCARD LMPOP ZMPOP`) {
		commandKeys[c] = keySpec{numkeys: 1}
	}
	commandKeys["PUBLISH"] = keySpec{first: 1, last: 1, step: 1, channels: true}
	commandKeys["SPUBLISH"] = keySpec{first: 1, last: 1, step: 1, channels: true, sharded: true}
	commandKeys["SUBSCRIBE"] = keySpec{first: 1, last: -1, step: 1, channels: true}
	commandKeys["SSUBSCRIBE"] = keySpec{first: 1, last: -1, step: 1, channels: true, sharded: true}
	for _, c := range strings.Fields(`PING ECHO INFO TIME DBSIZE SELECT MULTI EXEC DISCARD UNWATCH
		AUTH HELLO CLIENT CONFIG COMMAND CLUSTER SCRIPT FUNCTION ACL SCAN KEYS RANDOMKEY FLUSHDB
		FLUSHALL READONLY READWRITE LASTSAVE ROLE WAIT`) {
		commandKeys[c] = noKeysSpec
	}
}

// do checks the keys of Do's command line when its command is a constant
// that commandKeys knows; args are Do's arguments after ctx.
func (v *visitor) do(call *ast.CallExpr, args []ast.Expr) {
	if call.Ellipsis != token.NoPos {
		lit := v.literal(args[len(args)-1], 0)
		if len(args) != 1 || lit == nil {
			return // Do(ctx, args...) of a slice built elsewhere: not a key argument the analyzer sees
		}
		args = lit.Elts
	}
	if len(args) == 0 {
		return
	}
	name := ""
	if c := v.pass.TypesInfo.Types[args[0]].Value; c != nil && c.Kind() == constant.String {
		name = strings.ToUpper(constant.StringVal(c))
	}
	spec, ok := commandKeys[name]
	if !ok {
		// An unknown or a computed command: it may have keys, which are
		// not read; counted, so the unknown share says so.
		v.stats.Keys++
		v.stats.Unknown++
		if v.c.Strict {
			v.report(analysis.Diagnostic{Pos: args[0].Pos(), End: args[0].End(), Category: RuleUnregistered,
				Message: "the keys of this command cannot be found statically; use its go-redis method"})
		}
		return
	}
	var ks []ast.Expr
	if spec.step > 0 {
		last := spec.last
		if last < 0 {
			last += len(args)
		}
		for i := spec.first; i <= last && i < len(args); i += spec.step {
			ks = append(ks, args[i])
		}
	}
	if spec.numkeys > 0 && spec.numkeys < len(args) {
		nv := v.pass.TypesInfo.Types[args[spec.numkeys]].Value
		n, exact := int64(0), false
		if nv != nil && nv.Kind() == constant.Int {
			n, exact = constant.Int64Val(nv)
		}
		if !exact || n < 0 {
			v.unknownKey(args[spec.numkeys])
		} else {
			from := spec.numkeys + 1
			for i := from; int64(i-from) < n && i < len(args); i++ {
				ks = append(ks, args[i])
			}
		}
	}
	if spec.channels {
		for _, e := range ks {
			v.channel(e, name, spec.sharded)
		}
		return
	}
	for i, e := range ks {
		if i >= maxElts {
			break
		}
		k := v.key(e)
		if i == 0 && k.family != nil && spec == oneSpec {
			v.doTTL(name, k, args)
		}
	}
}

// doTTL checks the constant TTL of Do's EXPIRE, PEXPIRE, SETEX, PSETEX
// and SET (its EX or PX option, or none: no TTL) against the family of
// its key k. args is the command line, the command first.
func (v *visitor) doTTL(name string, k *keyArg, args []ast.Expr) {
	info := v.pass.TypesInfo
	num := func(e ast.Expr) (int64, bool) {
		c := info.Types[e].Value
		if c == nil || c.Kind() != constant.Int {
			if c != nil && c.Kind() == constant.String { // "10": Redis reads it as a number too
				n, err := strconv.ParseInt(constant.StringVal(c), 10, 64)
				return n, err == nil
			}
			return 0, false
		}
		return constant.Int64Val(c)
	}
	unit := func(n int64, u time.Duration) (time.Duration, bool) {
		if n < 0 || n > int64(math.MaxInt64/u) {
			return 0, false
		}
		return time.Duration(n) * u, true
	}
	var at ast.Expr
	var d time.Duration
	ok, expire := false, false
	switch name {
	case "EXPIRE", "PEXPIRE", "SETEX", "PSETEX":
		if len(args) < 3 {
			return
		}
		u := time.Second
		if name[0] == 'P' {
			u = time.Millisecond
		}
		if n, isNum := num(args[2]); isNum {
			d, ok = unit(n, u)
		}
		at, expire = args[2], strings.HasSuffix(name, "EXPIRE")
	case "SET":
		// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT|PXAT|KEEPTTL]: every
		// option a constant, or nothing is known.
		at, ok = args[0], true
		for i := 3; i < len(args); i++ {
			c := info.Types[args[i]].Value
			if c == nil || c.Kind() != constant.String {
				return
			}
			switch opt := strings.ToUpper(constant.StringVal(c)); opt {
			case "EX", "PX":
				if i+1 >= len(args) {
					return
				}
				n, isNum := num(args[i+1])
				if !isNum {
					return
				}
				u := time.Second
				if opt == "PX" {
					u = time.Millisecond
				}
				if d, ok = unit(n, u); !ok {
					return
				}
				at = args[i+1]
				i++
			case "EXAT", "PXAT", "KEEPTTL":
				return // a point in time, or the key's own TTL: not checked
			}
		}
	}
	if ok {
		v.ttlPolicy(name, k.family, d, expire, at)
	}
}
