package vet

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/diag"
)

// maxErrors bounds the package errors a run keeps from go vet's stderr.
const maxErrors = 200

// GoVet runs the analyzer of c over patterns in dir through go vet: it runs
// `go vet -json -vettool=tool`, where tool is a binary that acts as the
// analyzer's unitchecker (keyreg-vet, or keyreg itself with ToolEnv set),
// and reads the diagnostics back. go vet type-checks each package once,
// from source against its dependencies' export data, in parallel and with
// its build and result caches; Check's packages.Load compiles every package
// first and then type-checks it again. Positions are relative to dir.
func GoVet(c *Config, dir, tool string, patterns []string) (*Result, error) {
	sum, err := fileSum(c.Registry)
	if err != nil {
		return nil, err
	}
	reg, err := filepath.Abs(c.Registry)
	if err != nil {
		return nil, err
	}
	args := []string{"vet", "-json", "-vettool=" + tool, "-registry=" + reg, "-registry-sum=" + sum}
	if c.Strict {
		args = append(args, "-strict")
	}
	args = append(args, "--")
	args = append(args, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), ToolEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return nil, fmt.Errorf("running go vet: %w", runErr)
	}
	abs, _ := filepath.Abs(dir)
	res := &Result{}
	if err := res.decode(&stdout, abs); err != nil {
		return nil, fmt.Errorf("reading go vet -json: %w", err)
	}
	if runErr != nil {
		// go vet failed: packages that do not build or type-check. Its
		// stderr says which ("# pkg" and the compiler's lines).
		for l := range strings.SplitSeq(stderr.String(), "\n") {
			if l = strings.TrimSpace(l); l != "" && len(res.Errors) < maxErrors {
				res.Errors = append(res.Errors, l)
			}
		}
		if len(res.Errors) == 0 {
			res.Errors = append(res.Errors, "go vet: "+runErr.Error())
		}
	}
	res.Diagnostics.Sort()
	return res, nil
}

// jsonDiag is a diagnostic of go vet -json (unitchecker's JSONDiagnostic).
type jsonDiag struct {
	Category string `json:"category"`
	Posn     string `json:"posn"`
	End      string `json:"end"`
	Message  string `json:"message"`
}

// decode reads go vet -json's stream: one object per package, package ID
// to analyzer name to either a list of diagnostics or {"error": "..."}.
func (res *Result) decode(r io.Reader, dir string) error {
	dec := json.NewDecoder(r)
	for {
		var tree map[string]map[string]json.RawMessage
		if err := dec.Decode(&tree); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		ids := make([]string, 0, len(tree))
		for id := range tree {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			for _, raw := range tree[id] {
				var failed struct {
					Err string `json:"error"`
				}
				if json.Unmarshal(raw, &failed) == nil && failed.Err != "" {
					res.Errors = append(res.Errors, id+": "+failed.Err)
					continue
				}
				var ds []jsonDiag
				if err := json.Unmarshal(raw, &ds); err != nil {
					return fmt.Errorf("package %s: %w", id, err)
				}
				for _, d := range ds {
					if d.Category == StatsCategory {
						res.Stats.add(d.Message)
						continue
					}
					res.Diagnostics = append(res.Diagnostics, jsonToDiag(dir, d))
				}
			}
		}
	}
}

// add adds a StatsCategory message, "keys=N unknown=N generated=N".
func (st *Stats) add(msg string) {
	for f := range strings.FieldsSeq(msg) {
		k, v, _ := strings.Cut(f, "=")
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			continue
		}
		switch k {
		case "keys":
			st.Keys += n
		case "unknown":
			st.Unknown += n
		case "generated":
			st.Generated += n
		}
	}
}

func jsonToDiag(dir string, d jsonDiag) diag.Diagnostic {
	file, line, col := splitPosn(d.Posn)
	if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
		file = rel
	}
	pos := diag.Pos{File: filepath.ToSlash(file), Line: line, Col: col}
	if _, el, ec := splitPosn(d.End); el > 0 {
		pos.EndLine, pos.EndCol = el, ec
	}
	return diag.Diagnostic{
		Pos:      pos,
		Severity: Severity(d.Category),
		Rule:     d.Category,
		Message:  strings.TrimSuffix(d.Message, " ("+d.Category+")"),
	}
}

// splitPosn splits "file:line:col" (the file may contain colons).
func splitPosn(s string) (file string, line, col int) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0, 0
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j < 0 {
		return s, 0, 0
	}
	line, err1 := strconv.Atoi(s[j+1 : i])
	col, err2 := strconv.Atoi(s[i+1:])
	if err1 != nil || err2 != nil {
		return s, 0, 0
	}
	return s[:j], line, col
}

func fileSum(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:16]), nil
}
