package synth

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestPatternsDeterministic(t *testing.T) {
	a, b := Patterns(500), Patterns(500)
	if !slices.Equal(a, b) {
		t.Fatal("Patterns(500) differs between calls")
	}
	if got := Patterns(100); !slices.Equal(got, a[:100]) {
		t.Error("Patterns(100) is not a prefix of Patterns(500)")
	}
	if len(a) != 500 {
		t.Fatalf("len = %d, want 500", len(a))
	}
	if y1, y2 := YAML(50), YAML(50); string(y1) != string(y2) {
		t.Error("YAML(50) differs between calls")
	}
	k1 := Keys(a, ':', 1000, 7, 0.1)
	k2 := Keys(a, ':', 1000, 7, 0.1)
	if !slices.Equal(k1, k2) {
		t.Error("Keys differs between calls with one seed")
	}
	if k3 := Keys(a, ':', 1000, 8, 0.1); slices.Equal(k1, k3) {
		t.Error("Keys ignores the seed")
	}
}

// TestPatternsDisjoint checks the argument of the Patterns doc: the first
// three segments come before any {name:any} and identify a pattern, and a
// second segment with a placeholder cannot be mistaken for a literal one.
func TestPatternsDisjoint(t *testing.T) {
	ps := Patterns(5000)
	seen := map[string]string{}
	kinds := map[string]bool{}
	for _, p := range ps {
		segs := segments(p)
		if len(segs) < 3 {
			t.Fatalf("%q has fewer than three segments", p)
		}
		if !regexp.MustCompile(`^v[1-9][0-9]*$`).MatchString(segs[0]) {
			t.Errorf("%q: first segment is not a version", p)
		}
		if strings.ContainsAny(segs[2], "{}") {
			t.Errorf("%q: third segment is not literal", p)
		}
		if strings.Contains(strings.Join(segs[:3], "|"), ":any}") {
			t.Errorf("%q: {name:any} in the first three segments", p)
		}
		id := strings.Join(segs[:3], "|")
		if q, ok := seen[id]; ok {
			t.Errorf("%q and %q share their first three segments", p, q)
		}
		seen[id] = p
		kinds[segs[1]] = true
	}
	for seg := range kinds {
		if !strings.Contains(seg, "{") {
			for _, tp := range templates {
				lit := tp.seg[:strings.IndexByte(tp.seg, '{')]
				if lit == "" {
					lit = "{"
				}
				if strings.HasPrefix(seg, lit) {
					t.Errorf("domain %q starts like template %q", seg, tp.seg)
				}
			}
		}
	}
	var any, tags, untyped int
	for _, p := range ps {
		switch {
		case strings.Contains(p, ":any}"):
			any++
		case strings.Contains(p, "{{"):
			tags++
		}
		if regexp.MustCompile(`\{[a-z_]+\}`).MatchString(p) {
			untyped++
		}
	}
	if any == 0 || tags == 0 || untyped == 0 {
		t.Errorf("want some any (%d), hash tag (%d) and untyped (%d) patterns", any, tags, untyped)
	}
	if any > len(ps)/10 {
		t.Errorf("%d of %d patterns end in any; want a few", any, len(ps))
	}
}

// segments splits a pattern at the separators outside placeholders.
func segments(p string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ':':
			if depth == 0 {
				out = append(out, p[start:i])
				start = i + 1
			}
		}
	}
	return append(out, p[start:])
}

func TestYAMLShape(t *testing.T) {
	y := string(YAML(40))
	for _, want := range []string{"version: 1\n", "owners:\n", "families:\n", "  - name: ", "    ttl: ", "    encoding: "} {
		if !strings.Contains(y, want) {
			t.Errorf("YAML lacks %q", want)
		}
	}
	names := regexp.MustCompile(`(?m)^  - name: (.*)$`).FindAllStringSubmatch(y, -1)
	if len(names) != 40 {
		t.Fatalf("%d families, want 40", len(names))
	}
	seen := map[string]bool{}
	kebab := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	for _, m := range names {
		if seen[m[1]] || !kebab.MatchString(m[1]) {
			t.Errorf("name %q is duplicate or not kebab-case", m[1])
		}
		seen[m[1]] = true
	}
	// every version field equals the v<N> of its pattern
	pv := regexp.MustCompile(`(?m)^    pattern: 'v(\d+):.*\n    version: (\d+)$`).FindAllStringSubmatch(y, -1)
	if len(pv) != 40 {
		t.Fatalf("%d pattern/version pairs, want 40", len(pv))
	}
	for _, m := range pv {
		if m[1] != m[2] {
			t.Errorf("pattern version v%s but version: %s", m[1], m[2])
		}
	}
}

func TestKeysValues(t *testing.T) {
	ps := []string{
		"v1:a:{id:uuid}", "v1:b:{id:ulid}", "v1:c:{n:int}", "v1:d:{h:hex}",
		"v1:e:{w}", "v1:f:{{user_id:int}}:items", `v1:g:\{x\}:{k:any}`,
	}
	re := []*regexp.Regexp{
		regexp.MustCompile(`^v1:a:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`),
		regexp.MustCompile(`^v1:b:[0-9A-HJKMNP-TV-Z]{26}$`),
		regexp.MustCompile(`^v1:c:-?[0-9]+$`),
		regexp.MustCompile(`^v1:d:[0-9a-f]+$`),
		regexp.MustCompile(`^v1:e:[^:]+$`),
		regexp.MustCompile(`^v1:f:\{-?[0-9]+\}:items$`),
		regexp.MustCompile(`^v1:g:\{x\}:.+$`),
	}
	keys := Keys(ps, ':', 5000, 1, 0)
	for _, k := range keys {
		ok := false
		for _, r := range re {
			ok = ok || r.MatchString(k)
		}
		if !ok {
			t.Errorf("key %q fits none of the patterns", k)
		}
	}
	junk := 0
	for _, k := range Keys(ps, ':', 10000, 2, 0.25) {
		ok := false
		for _, r := range re {
			ok = ok || r.MatchString(k)
		}
		if !ok {
			junk++
		}
	}
	if junk < 2000 || junk > 3000 {
		t.Errorf("%d junk keys of 10000, want about 2500", junk)
	}
	if got := Keys(nil, ':', 3, 1, 0); len(got) != 3 {
		t.Errorf("Keys(nil) = %q", got)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string
	}{
		{"v1:{id:int}", "v1:|int"},
		{"c:{{u}}:i", "c:{|word|}:i"},
		{`a\{b\}{x:any}`, "a{b}|any"},
		{"x{", "x{"},
	} {
		var got []string
		for _, p := range parse(tc.src) {
			if p.typ != "" {
				got = append(got, p.typ)
			} else {
				got = append(got, p.lit)
			}
		}
		if s := strings.Join(got, "|"); s != tc.want {
			t.Errorf("parse(%q) = %q, want %q", tc.src, s, tc.want)
		}
	}
}
