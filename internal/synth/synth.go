// Package synth generates deterministic, realistic registries and keys for
// tests and benchmarks.
//
// Patterns(n) returns n key patterns of the shape a large team ends up with
// (versioned, domain:entity, typed placeholders, hash tags, a few catch-all
// {name:any} tails), YAML(n) wraps them into a valid keys.yaml, and Keys
// fills patterns with random valid values and mixes in keys that belong to
// no family. The same arguments always give the same output.
//
// The package does not import registry, so registry's own tests can use it.
package synth

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

var domains = []string{
	"billing", "user", "search", "cart", "catalog", "inventory", "order",
	"payment", "shipping", "auth", "notify", "feed", "chat", "media",
	"analytics", "ads", "geo", "pricing", "reco", "fraud", "support", "mail",
	"webhook", "export", "report", "audit", "flags", "ratelimit", "queue",
}

var entities = []string{
	"invoice", "session", "profile", "cache", "token", "item", "product",
	"price", "stock", "event", "counter", "index", "lock", "job", "result",
	"thread", "message", "image", "thumb", "segment", "rule", "quota",
	"bucket", "cursor", "digest", "summary", "snapshot", "draft", "receipt",
	"refund", "label", "address", "device", "otp", "nonce", "score", "rank",
	"tag", "view", "click",
}

// templates are second segments with a placeholder inside. Their literal
// starts ("team", "{", "org") begin no domain, and no two of them can match
// one segment, so a pattern's first three segments still identify it.
var templates = []struct{ seg, name string }{
	{"team{team_id:int}", "team"},
	{"{{user_id:int}}", "user-tag"},
	{"org{org_id:ulid}", "org"},
}

// tails follow "v<N>:<domain>:<entity>". %s is the entity name. Only the
// last two end in {name:any}.
var tails = []string{
	":{%s_id:uuid}",
	":{%s_id:int}",
	":{%s_hash:hex}",
	":{%s_id:ulid}",
	":{%s}",
	":{%s_id:int}:{field}",
	":{%s_id:uuid}:meta",
	":{day:int}:{%s_id:hex}",
	":{lang}-{region}:{%s_id:int}",
	":{%s_id:int}.json",
	":lock:{%s_id:uuid}",
	":{%s_id:hex}:rev{rev:int}",
	"",
	":{%s_key:any}",
	":by-path:{%s_path:any}",
}

// anyTails is the number of tails at the end of the list that use any.
const anyTails = 2

// pattern is one generated pattern and what YAML needs to know about it.
type pattern struct {
	src     string
	name    string
	version int
	domain  string // domain or template name, for the owner
	entity  string
}

func generate(n int) []pattern {
	r := rand.New(rand.NewPCG(0x6b657972, 0x6567))
	out := make([]pattern, 0, n)
	// A pattern is identified by version, second segment and third segment,
	// all fixed before any {name:any}; keeping that triple unique keeps the
	// patterns from overlapping.
	seen := map[string]bool{}
	for len(out) < n {
		ver := 1 + r.IntN(3)
		if r.IntN(10) == 0 {
			ver = 4
		}
		seg, dname := "", ""
		if r.IntN(12) == 0 {
			t := templates[r.IntN(len(templates))]
			seg, dname = t.seg, t.name
		} else {
			seg = domains[r.IntN(len(domains))]
			dname = seg
		}
		ent := entities[r.IntN(len(entities))]
		id := fmt.Sprintf("%d|%s|%s", ver, seg, ent)
		for k := 2; seen[id]; k++ {
			ent = entities[r.IntN(len(entities))] + strconv.Itoa(k)
			id = fmt.Sprintf("%d|%s|%s", ver, seg, ent)
		}
		seen[id] = true
		// {name:any} is rare: about one pattern in 25.
		ti := r.IntN(len(tails) - anyTails)
		if r.IntN(25) == 0 {
			ti = len(tails) - anyTails + r.IntN(anyTails)
		}
		tail := tails[ti]
		if strings.Contains(tail, "%s") {
			tail = fmt.Sprintf(tail, strings.TrimRight(ent, "0123456789"))
		}
		out = append(out, pattern{
			src:     fmt.Sprintf("v%d:%s:%s%s", ver, seg, ent, tail),
			name:    fmt.Sprintf("%s-%s-v%d", dname, ent, ver),
			version: ver,
			domain:  dname,
			entity:  ent,
		})
	}
	return out
}

// Patterns returns n realistic key patterns for the separator ":", such as
// "v1:billing:invoice:{invoice_id:uuid}" or "v2:team{team_id:int}:cache:{cache}".
// No key matches two of them: the first three segments of every pattern
// (version, domain, entity) come before any {name:any} and are unique as a
// triple, and the placeholder forms used in the second segment exclude one
// another and every literal domain.
func Patterns(n int) []string {
	ps := generate(n)
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.src
	}
	return out
}

var owners = []struct{ name, contact string }{
	{"identity", "#identity-oncall"},
	{"checkout", "checkout-oncall@example.com"},
	{"platform", "platform@example.com"},
	{"growth", "#growth"},
	{"data", "data-eng@example.com"},
}

var shapes = []struct{ typ, enc string }{
	{"string", "json"}, {"string", "json"}, {"string", "msgpack"},
	{"string", "text"}, {"string", "int"}, {"hash", "text"},
	{"hash", "json"}, {"list", "json"}, {"set", "text"}, {"zset", "text"},
	{"stream", "json"}, {"json", "json"},
}

var ttls = []string{`"30m"`, `"24h"`, `{max: 7d}`, `"1h"`, `persistent`, `optional`, `{max: 2w}`}

// YAML returns a complete, valid keys.yaml (format version 1) that declares
// one family for each of Patterns(n), with owners, descriptions, versions,
// types, encodings and TTL policies.
func YAML(n int) []byte {
	ps := generate(n)
	var b strings.Builder
	b.WriteString("# Generated by internal/synth. Do not edit.\nversion: 1\nseparator: \":\"\n")
	b.WriteString("defaults:\n  ttl: 24h\n  max_idle: 30d\nowners:\n")
	for _, o := range owners {
		fmt.Fprintf(&b, "  %s:\n    contact: %q\n", o.name, o.contact)
	}
	b.WriteString("families:\n")
	for i, p := range ps {
		h := hash(p.name)
		sh := shapes[h%uint32(len(shapes))]
		fmt.Fprintf(&b, "  - name: %s\n", p.name)
		fmt.Fprintf(&b, "    description: %s records of the %s service, key layout v%d\n", p.entity, p.domain, p.version)
		fmt.Fprintf(&b, "    pattern: %s\n", yamlQuote(p.src))
		fmt.Fprintf(&b, "    version: %d\n", p.version)
		fmt.Fprintf(&b, "    owner: %s\n", owners[hash(p.domain)%uint32(len(owners))].name)
		fmt.Fprintf(&b, "    type: %s\n", sh.typ)
		fmt.Fprintf(&b, "    encoding: %s\n", sh.enc)
		fmt.Fprintf(&b, "    ttl: %s\n", ttls[(h>>8)%uint32(len(ttls))])
		if i%7 == 3 {
			b.WriteString("    max_bytes: 4096\n")
		}
		if sh.typ == "stream" {
			b.WriteString("    max_len: 100000\n") // a trimmed stream (stream-unbounded)
		}
	}
	return []byte(b.String())
}

// hash is FNV-1a, to derive stable attributes from names.
func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// yamlQuote returns s as a single-quoted YAML scalar.
func yamlQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// part is a parsed piece of a pattern: a literal (typ == "") or a
// placeholder of type typ.
type part struct {
	lit string
	typ string
}

// parse splits a pattern into literals and placeholders. It follows the
// keys.yaml grammar ({name}, {name:type}, {{name}}, \{ \} \\) and does not
// validate: a malformed pattern yields some parts.
func parse(src string) []part {
	var out []part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, part{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			i++
			lit.WriteByte(src[i])
		case c == '{':
			tag := i+1 < len(src) && src[i+1] == '{'
			start := i + 1
			if tag {
				start++
			}
			end := strings.IndexByte(src[start:], '}')
			if end < 0 {
				lit.WriteString(src[i:])
				i = len(src)
				continue
			}
			body := src[start : start+end]
			typ := "word"
			if _, t, ok := strings.Cut(body, ":"); ok {
				typ = t
			}
			if tag {
				lit.WriteByte('{')
			}
			flush()
			out = append(out, part{typ: typ})
			i = start + end
			if tag {
				lit.WriteByte('}')
				if i+1 < len(src) && src[i+1] == '}' {
					i++
				}
			}
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return out
}

const (
	lower     = "abcdefghijklmnopqrstuvwxyz"
	wordChars = lower + lower + "0123456789_-."
	hexChars  = "0123456789abcdef"
	crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
)

// value returns a random valid value of a placeholder type.
func value(r *rand.Rand, typ string, sep byte) string {
	switch typ {
	case "int":
		s := strconv.FormatInt(r.Int64N(1<<uint(4+r.IntN(36))), 10)
		if r.IntN(50) == 0 {
			s = "-" + s
		}
		return s
	case "uuid":
		s := randString(r, hexChars, 32, sep)
		s = s[:8] + "-" + s[8:12] + "-4" + s[13:16] + "-" + s[16:20] + "-" + s[20:]
		if r.IntN(10) == 0 {
			s = strings.ToUpper(s)
		}
		return s
	case "hex":
		return randString(r, hexChars, []int{8, 16, 32, 40, 64}[r.IntN(5)], sep)
	case "ulid":
		return randString(r, "01", 1, sep) + randString(r, crockford, 25, sep)
	case "any":
		n := 1 + r.IntN(4)
		segs := make([]string, n)
		for i := range segs {
			segs[i] = randString(r, wordChars, 1+r.IntN(10), sep)
		}
		join := string(sep)
		if r.IntN(3) == 0 {
			join = "/"
		}
		return strings.Join(segs, join)
	}
	// word, or a type this package does not know
	return randString(r, wordChars, 1+r.IntN(12), sep)
}

// randString returns n random bytes of alphabet, never sep.
func randString(r *rand.Rand, alphabet string, n int, sep byte) string {
	b := make([]byte, n)
	for i := range b {
		for {
			b[i] = alphabet[r.IntN(len(alphabet))]
			if b[i] != sep {
				break
			}
		}
	}
	return string(b)
}

// junkPrefixes start keys that no registry of Patterns declares: leftovers
// and framework keys.
var junkPrefixes = []string{
	"tmp:", "sidekiq:queue:", "celery-task-meta-", "session:", "cache:",
	"resque:stat:", "test", "lock:", "_kombu.binding.", "rq:job:",
}

// Keys returns n keys. About unmatchedFrac of them are junk that matches
// none of patterns: framework and leftover keys such as "tmp:foo" or
// "sidekiq:queue:mailers", and typos of real keys (a wrong version, a
// misspelt domain). The others are keys of a random pattern with every
// placeholder filled with a random valid value for separator sep. The same
// arguments always give the same keys.
func Keys(patterns []string, sep byte, n int, seed int64, unmatchedFrac float64) []string {
	r := rand.New(rand.NewPCG(uint64(seed), 0x6b657973))
	parsed := make([][]part, len(patterns))
	for i, p := range patterns {
		parsed[i] = parse(p)
	}
	// Build the keys into one buffer and slice it, so they sit next to each
	// other in memory as keys parsed from a SCAN reply do.
	var buf strings.Builder
	ends := make([]int, n)
	for i := range ends {
		if len(parsed) == 0 || r.Float64() < unmatchedFrac {
			buf.WriteString(junk(r, parsed, sep))
		} else {
			build(&buf, r, parsed[r.IntN(len(parsed))], sep)
		}
		ends[i] = buf.Len()
	}
	all := buf.String()
	out := make([]string, n)
	start := 0
	for i, end := range ends {
		out[i] = all[start:end]
		start = end
	}
	return out
}

func build(b *strings.Builder, r *rand.Rand, parts []part, sep byte) {
	for _, p := range parts {
		if p.typ == "" {
			b.WriteString(p.lit)
			continue
		}
		b.WriteString(value(r, p.typ, sep))
	}
}

func junk(r *rand.Rand, parsed [][]part, sep byte) string {
	if len(parsed) == 0 || r.IntN(3) > 0 {
		return junkPrefixes[r.IntN(len(junkPrefixes))] + value(r, "word", sep)
	}
	var b strings.Builder
	build(&b, r, parsed[r.IntN(len(parsed))], sep)
	k := b.String()
	switch r.IntN(3) {
	case 0: // a version nobody declared
		if i := strings.IndexByte(k, sep); i >= 0 && strings.HasPrefix(k, "v") {
			return "v9" + k[i:]
		}
		return "v9" + string(sep) + k
	case 1: // a misspelt second segment
		first := strings.IndexByte(k, sep)
		if first >= 0 && first+2 < len(k) {
			return k[:first+1] + k[first+2:]
		}
	}
	// a stray prefix, as left by a missing namespace setting
	return "staging" + string(sep) + k
}
