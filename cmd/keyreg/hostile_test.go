package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/scanner"
)

// TestAuditServerErrorNeverLeaks: a server whose error replies quote the
// password (after a successful AUTH) gets its text into stderr and the
// partial report of every format, with the password masked.
func TestAuditServerErrorNeverLeaks(t *testing.T) {
	denied := "-ERR denied for user audit with password " + passwordMarker + "\r\n"
	cases := map[string]func(args []string) (string, bool){
		"scan": func(args []string) (string, bool) {
			if strings.EqualFold(args[0], "SCAN") {
				return denied, true
			}
			return "", false
		},
		"type": func(args []string) (string, bool) {
			switch strings.ToUpper(args[0]) {
			case "SCAN":
				return "*2\r\n$1\r\n0\r\n*1\r\n$14\r\nv1:session:123\r\n", true
			case "TYPE":
				return denied, true
			case "PTTL":
				return ":-1\r\n", true
			}
			return "", false
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			fake := redistest.StartFake(t, h)
			url := fake.URL("audit:" + passwordMarker)
			for _, f := range report.AuditFormats {
				out := filepath.Join(t.TempDir(), "report")
				code, stdout, stderr := cli(t, "audit", "--registry", auditRegistry, "--url", url, "--format", string(f),
					"--output", string(f)+"="+out, "--command-timeout", "2s")
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatalf("format %s wrote no report: %v (stderr %q)", f, err, stderr)
				}
				if code != exitRuntime {
					t.Errorf("format %s: exit %d, want 3\n%s", f, code, stderr)
				}
				if !strings.Contains(stderr, "denied for user audit") {
					t.Errorf("format %s: stderr does not report the server's error: %q", f, stderr)
				}
				if f == report.JSON && !strings.Contains(string(b), "denied for user audit with password xxxxx") {
					t.Errorf("the json report does not carry the masked error:\n%s", b)
				}
				for what, text := range map[string]string{"stdout": stdout, "stderr": stderr, "report": string(b)} {
					if strings.Contains(text, passwordMarker) {
						t.Errorf("format %s: the %s leaks the password:\n%s", f, what, text)
					}
				}
			}
		})
	}
}

// TestAuditHostileReplyHeader: a SCAN or sentinel reply announcing two
// billion elements is a clean runtime error (exit 3), not a crash.
func TestAuditHostileReplyHeader(t *testing.T) {
	for _, cmd := range []string{"SCAN", "SENTINEL"} {
		fake := redistest.StartFake(t, func(args []string) (string, bool) {
			if strings.EqualFold(args[0], cmd) {
				return "*2000000000\r\n", true
			}
			return "", false
		})
		args := []string{"audit", "--registry", auditRegistry, "--url", fake.URL(""), "--format", "json", "--command-timeout", "2s"}
		if cmd == "SENTINEL" {
			args = append(args, "--sentinel-master", "mymaster")
		}
		code, _, stderr := cli(t, args...)
		if code != exitRuntime || !strings.Contains(stderr, "reply too large: the server announced an aggregate of 2000000000 elements") {
			t.Errorf("%s: exit %d (want 3), stderr %q", cmd, code, stderr)
		}
	}
}

// TestAuditRefusedChecks: a user whose ACL refuses MEMORY USAGE or OBJECT
// IDLETIME makes value-too-large or stale-key not run; every format says
// the audit is partial, and why, and the audit exits 3.
func TestAuditRefusedChecks(t *testing.T) {
	s := redistest.Standalone(t)
	seedAudit(t, s.Addr, 30)
	cases := []struct{ drop, user, reason string }{
		{"+memory|usage", "nomem", "value-too-large not checked on"},
		{"+object|idletime", "noobj", "stale-key not checked on"},
	}
	for _, tc := range cases {
		var rules []string
		for _, r := range strings.Fields(scanner.MinimalACL) {
			if r != tc.drop {
				rules = append(rules, r)
			}
		}
		redistest.ACLUser(t, s, tc.user, "pw-"+tc.user, rules...)
		url := fmt.Sprintf("redis://%s:pw-%s@%s", tc.user, tc.user, s.Addr)
		for _, f := range report.AuditFormats {
			code, out, errs := cli(t, "audit", "--registry", auditRegistry, "--url", url, "--format", string(f))
			if code != exitRuntime || !strings.Contains(errs, tc.reason) {
				t.Errorf("%s, format %s: exit %d (want 3), stderr %q", tc.user, f, code, errs)
			}
			want := tc.reason
			switch f {
			case report.Prometheus:
				want = "keyreg_audit_partial 1"
			case report.JSON:
				if r := parseAudit(t, out); !r.Partial || !strings.Contains(r.PartialReason, tc.reason) {
					t.Errorf("%s: json partial %v, reason %q", tc.user, r.Partial, r.PartialReason)
				}
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s, format %s: the report does not say %q:\n%s", tc.user, f, want, out)
			}
		}
	}
}
