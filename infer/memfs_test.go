package infer

import (
	"io/fs"
	"testing"
)

func TestMemFS(t *testing.T) {
	m := memFS{"keys.yaml": []byte("version: 1\n"), "schemas/a.json": []byte("{}")}
	for name, want := range m {
		got, err := fs.ReadFile(m, name)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
		st, err := fs.Stat(m, name)
		if err != nil || st.Size() != int64(len(want)) || st.IsDir() {
			t.Errorf("stat %s: %v, %v", name, st, err)
		}
	}
	for _, name := range []string{"missing.json", "../keys.yaml", "/keys.yaml"} {
		if _, err := m.Open(name); err == nil {
			t.Errorf("%s opened", name)
		}
	}
}
