package golang

import (
	"github.com/keyreg/keyreg/codegen"

	"go/ast"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// scopeYAML has hand-declared families of two owners (one deprecated in
// favour of the other's), a fenced lock, and the celery preset owned by
// checkout.
const scopeYAML = `version: 1
owners:
  checkout: {contact: c@example.com}
  identity: {contact: i@example.com}
  idle: {contact: x@example.com}
families:
  - {name: cart, pattern: "v1:cart:{id:int}", owner: checkout, type: string, encoding: int, ttl: {max: 1h}}
  - {name: invoice-lock, pattern: "v1:lock:{id:int}", owner: checkout, kind: lock, encoding: text, ttl: {max: 30s}, fencing: invoice-fence}
  - {name: invoice-fence, pattern: "v1:fence:{id:int}", owner: identity, kind: fence}
  - {name: session, pattern: "v1:session:{id:uuid}", owner: identity, type: string, encoding: text, ttl: {max: 1h}}
  - name: session-v0
    pattern: "v0:session:{id:uuid}"
    owner: identity
    type: string
    encoding: text
    ttl: {max: 1h}
    deprecated: {reason: moved, replaced_by: session}
presets:
  - use: celery
    owner: checkout
`

// keyTypes returns the families a generated file declares, by their key
// types (CartKey → "Cart").
func keyTypes(t *testing.T, src []byte) []string {
	t.Helper()
	var out []string
	for _, d := range parseGenerated(t, src).Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.Name == "Family" {
			typ := fd.Recv.List[0].Type.(*ast.Ident).Name
			out = append(out, strings.TrimSuffix(typ, "Key"))
		}
	}
	slices.Sort(out)
	return out
}

func TestScope(t *testing.T) {
	reg := parseRegistry(t, scopeYAML)
	var celery []string
	for _, f := range reg.Families {
		if f.Preset == "celery" {
			celery = append(celery, exported(f.Name))
		}
	}
	if len(celery) < 5 {
		t.Fatalf("the celery preset expanded into %d families", len(celery))
	}
	own := []string{"Cart", "InvoiceFence", "InvoiceLock", "Session", "SessionV0"}
	with := func(names ...string) []string {
		out := slices.Concat(names)
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		name  string
		scope codegen.Scope
		want  []string
	}{
		{"default: declared by hand", codegen.Scope{}, own},
		{"include presets", codegen.Scope{IncludePresets: true}, with(append(own, celery...)...)},
		{"a preset family by name", codegen.Scope{Families: []string{"celery-task-result"}}, []string{"CeleryTaskResult"}},
		{"a lock brings its fence", codegen.Scope{Families: []string{"invoice-lock"}}, []string{"InvoiceFence", "InvoiceLock"}},
		{"an owner", codegen.Scope{Owners: []string{"checkout"}}, []string{"Cart", "InvoiceFence", "InvoiceLock"}},
		{"an owner with presets", codegen.Scope{Owners: []string{"checkout"}, IncludePresets: true}, with(append([]string{"Cart", "InvoiceFence", "InvoiceLock"}, celery...)...)},
		{"families and owners add up", codegen.Scope{Owners: []string{"identity"}, Families: []string{"cart"}}, []string{"Cart", "InvoiceFence", "Session", "SessionV0"}},
		{"families and presets add up", codegen.Scope{Families: []string{"cart"}, IncludePresets: true}, with(append([]string{"Cart"}, celery...)...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Generate(reg, Options{Package: "keys", Scope: c.scope})
			if err != nil {
				t.Fatal(err)
			}
			if got := keyTypes(t, out); !slices.Equal(got, c.want) {
				t.Errorf("families %v, want %v", got, c.want)
			}
		})
	}

	// A deprecation names the replacement's type only when the file
	// declares it.
	out, err := Generate(reg, Options{Package: "keys", Scope: codegen.Scope{Families: []string{"session-v0"}}})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); strings.Contains(s, "Use SessionKey") || !strings.Contains(s, "Replaced by the family session.") {
		t.Errorf("session-v0 alone: the deprecation note names a type the file lacks:\n%s", s[strings.Index(s, "Deprecated:"):][:120])
	}
	out, err = Generate(reg, Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "Use SessionKey (family session).") {
		t.Error("the default scope's deprecation note does not name SessionKey")
	}
}

func TestScopeErrors(t *testing.T) {
	reg := parseRegistry(t, scopeYAML)
	for _, c := range []struct {
		scope codegen.Scope
		want  string
	}{
		{codegen.Scope{Families: []string{"sesion"}}, `family "sesion" is not in the registry (did you mean "session"?)`},
		{codegen.Scope{Families: []string{"nothing-like-it"}}, `family "nothing-like-it" is not in the registry`},
		{codegen.Scope{Owners: []string{"chekout"}}, `owner "chekout" is not in the registry (did you mean "checkout"?)`},
		{codegen.Scope{Owners: []string{"idle"}}, `owner "idle" owns no family or channel`},
		{codegen.Scope{Owners: []string{""}}, `owner "" is not in the registry`},
	} {
		_, err := Generate(reg, Options{Package: "keys", Scope: c.scope})
		if err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.scope, err, c.want)
		}
	}
	presetsOnly := parseRegistry(t, "version: 1\nowners:\n  q: {contact: q@example.com}\nfamilies: []\npresets:\n  - use: celery\n    owner: q\n")
	if _, err := Generate(presetsOnly, Options{Package: "keys"}); err == nil || !strings.Contains(err.Error(), "every family of the registry comes from a preset") {
		t.Errorf("a registry of presets only: %v", err)
	}
	if _, err := Generate(presetsOnly, Options{Package: "keys", Scope: codegen.Scope{Owners: []string{"q"}}}); err == nil || !strings.Contains(err.Error(), `owner "q": its `) {
		t.Errorf("an owner of presets only: %v", err)
	}
	if _, err := Generate(presetsOnly, Options{Package: "keys", Scope: codegen.Scope{IncludePresets: true}}); err != nil {
		t.Errorf("a registry of presets only, included: %v", err)
	}
	empty := parseRegistry(t, "version: 1\nfamilies: []\n")
	if _, err := Generate(empty, Options{Package: "keys"}); err != nil {
		t.Errorf("an empty registry: %v", err)
	}
}

// TestScopeDigest: RegistryDigest covers the families generated, so a
// change to a preset family leaves the default file as it is, and a
// change to a generated family changes it.
func TestScopeDigest(t *testing.T) {
	gen := func(src string, scope codegen.Scope) string {
		t.Helper()
		out, err := Generate(parseRegistry(t, src), Options{Package: "keys", Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	presetChanged := strings.Replace(scopeYAML, "    owner: checkout\n", "    owner: checkout\n    with: {result_expires: 2h}\n", 1)
	if presetChanged == scopeYAML {
		t.Fatal("the preset entry is not in scopeYAML as the test expects")
	}
	if a, b := gen(scopeYAML, codegen.Scope{}), gen(presetChanged, codegen.Scope{}); a != b {
		t.Errorf("a change to a preset family changed the default file:\n%s", codegen.UnifiedDiff("a", "b", []byte(a), []byte(b), 4096))
	}
	if a, b := gen(scopeYAML, codegen.Scope{IncludePresets: true}), gen(presetChanged, codegen.Scope{IncludePresets: true}); a == b {
		t.Error("a change to a preset family left the file with presets as it was")
	}
	ownChanged := strings.Replace(scopeYAML, "v1:cart:{id:int}\", owner: checkout, type: string, encoding: int, ttl: {max: 1h}", "v1:cart:{id:int}\", owner: checkout, type: string, encoding: int, ttl: {max: 2h}", 1)
	a, b := gen(scopeYAML, codegen.Scope{}), gen(ownChanged, codegen.Scope{})
	digestLine := func(s string) string { return s[strings.Index(s, "const RegistryDigest"):][:90] }
	if digestLine(a) == digestLine(b) {
		t.Error("a TTL change of a generated family kept RegistryDigest")
	}
	// With every family in scope, the digest is Digest's.
	full := gen(scopeYAML, codegen.Scope{IncludePresets: true})
	if !strings.Contains(full, `const RegistryDigest = "`+codegen.Digest(parseRegistry(t, scopeYAML))+`"`) {
		t.Error("with every family, RegistryDigest is not codegen.Digest(reg)")
	}
}

// TestScopeCompiles vets a file of a lock alone (with its fence pulled
// in) and one of a preset family alone.
func TestScopeCompiles(t *testing.T) {
	reg := parseRegistry(t, scopeYAML)
	dir := mkTempPackageDir(t)
	for i, scope := range []codegen.Scope{{Families: []string{"invoice-lock"}}, {Families: []string{"celery-task-result"}}, {Owners: []string{"identity"}}} {
		out, err := Generate(reg, Options{Package: "keys", Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		pkg := filepath.Join(dir, "s"+string(rune('0'+i)))
		if err := os.Mkdir(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, goldenOut), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goVet(t, "./"+filepath.ToSlash(dir)+"/...")
}
