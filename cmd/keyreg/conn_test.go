package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/scanner"
)

// hostileChars break a URL when a password holds them raw.
var hostileChars = []string{"#", "/", "?", "@", ":", "%", " ", `"`, "'"}

// leak returns the first fragment of 3 or more bytes of secret found in
// text, or "".
func leak(text, secret string) string {
	for i := 0; i+3 <= len(secret); i++ {
		if f := secret[i : i+3]; strings.Contains(text, f) {
			return f
		}
	}
	return ""
}

// seedClean writes n keys that cleanRegistry accepts.
func seedClean(t testing.TB, c redis.Cmdable, n int) {
	t.Helper()
	p := c.Pipeline()
	for i := range n {
		p.Set(context.Background(), fmt.Sprintf("v1:session:%d", i+1), fmt.Sprintf(`{"user_id":%d,"role":"user"}`, i+1), 10*time.Minute)
	}
	if _, err := p.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestConnectionErrorsNeverLeak runs keyreg audit with passwords holding
// each hostile character, on every path a connection can take: a URL that
// does not parse, one that parses with the character raw (the audit runs),
// an unreachable server, a wrong password, a failed TLS handshake and a
// sentinel that refuses its password; each through --url and $REDIS_URL,
// in the report formats. No output may hold a fragment of the password.
func TestConnectionErrorsNeverLeak(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	s := redistest.Standalone(t)
	seedClean(t, s.Client(t), 20)
	dead := redistest.Standalone(t)
	dead.Stop()
	certs := redistest.NewCerts(t)
	tlsSrv := redistest.StandaloneTLS(t, certs, false)
	ss := redistest.Sentinels(t, redistest.SentinelConfig{Password: "Zq9-sentinel-Wv7"})

	type path struct {
		name  string
		url   string
		args  []string
		env   map[string]string
		codes []int // acceptable exit codes
	}
	check := func(t *testing.T, pw string, p path, viaEnv bool, format string) {
		t.Helper()
		args := []string{"audit", "--registry", cleanRegistry, "--command-timeout", "2s", "--format", format}
		if viaEnv {
			t.Setenv("REDIS_URL", p.url)
		} else {
			t.Setenv("REDIS_URL", "")
			args = append(args, "--url", p.url)
		}
		for k, v := range p.env {
			t.Setenv(k, v)
		}
		if err := os.WriteFile(summary, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errs := cli(t, append(args, p.args...)...)
		if !slices.Contains(p.codes, code) {
			t.Errorf("%s (env %v, %s): exit %d, want one of %v\n%s", p.name, viaEnv, format, code, p.codes, errs)
		}
		step, _ := os.ReadFile(summary)
		if f := leak(out+errs+string(step), pw); f != "" {
			t.Errorf("%s (env %v, %s): output holds %q of the password:\nstdout %s\nstderr %s", p.name, viaEnv, format, f, out, errs)
		}
		for k := range p.env {
			t.Setenv(k, "")
		}
	}
	for i, c := range hostileChars {
		pw := "S3cr" + c + "tPa55"
		user := fmt.Sprintf("user%d", i)
		redistest.ACLUser(t, s, user, pw, strings.Fields(scanner.MinimalACL)...)
		redistest.ACLUser(t, tlsSrv, user, pw, strings.Fields(scanner.MinimalACL)...)
		enc := url.UserPassword(user, pw).String()
		raw := user + ":" + pw
		t.Run(fmt.Sprintf("%q", c), func(t *testing.T) {
			paths := []path{
				{name: "unreachable", url: "redis://" + enc + "@" + dead.Addr, codes: []int{exitRuntime}},
				{name: "wrong password", url: "redis://" + url.UserPassword(user, pw+"X").String() + "@" + s.Addr, codes: []int{exitRuntime}},
				{name: "tls failure", url: "rediss://" + enc + "@" + tlsSrv.TLSAddr, args: []string{"--tls-ca-cert", certs.OtherCA}, codes: []int{exitRuntime}},
				{name: "tls, plain port", url: "rediss://" + enc + "@" + s.Addr, args: []string{"--tls-ca-cert", certs.CA, "--command-timeout", "200ms"}, codes: []int{exitRuntime}},
				{name: "sentinel refuses", url: "redis://" + enc + "@" + ss.SentinelAddr, args: []string{"--sentinel-master", ss.MasterName},
					env: map[string]string{"REDIS_SENTINEL_PASSWORD": pw}, codes: []int{exitRuntime}},
				{name: "sentinel refuses (flag)", url: "redis://" + enc + "@" + ss.SentinelAddr, args: []string{"--sentinel-master", ss.MasterName, "--sentinel-password", pw}, codes: []int{exitRuntime}},
			}
			formats := []string{"json", "sarif", "text"}
			if _, err := url.Parse("redis://" + raw + "@" + s.Addr); err != nil {
				paths = append(paths, path{name: "raw, does not parse", url: "redis://" + raw + "@" + s.Addr, codes: []int{exitUsage}})
			} else {
				// The raw URL is valid: the audit runs, in every format.
				paths = append(paths, path{name: "raw, audited", url: "redis://" + raw + "@" + s.Addr, codes: []int{exitClean}})
				for _, f := range report.AuditFormats {
					if !slices.Contains(formats, string(f)) {
						formats = append(formats, string(f))
					}
				}
			}
			for _, p := range paths {
				for _, viaEnv := range []bool{false, true} {
					fs := formats[:1]
					if strings.HasPrefix(p.name, "raw") {
						fs = formats
					}
					for _, f := range fs {
						check(t, pw, p, viaEnv, f)
					}
				}
			}
		})
	}
}

// TestAuditTLSFlags audits a mutual-TLS server through the flags and their
// environment variables, and checks the failures a TLS setup meets.
func TestAuditTLSFlags(t *testing.T) {
	certs := redistest.NewCerts(t)
	s := redistest.StandaloneTLS(t, certs, true)
	seedClean(t, s.Client(t), 30)
	u := "rediss://" + s.TLSAddr
	base := []string{"audit", "--registry", cleanRegistry, "--url", u, "--format", "json", "--command-timeout", "2s"}
	tlsFlags := []string{"--tls-ca-cert", certs.CA, "--tls-cert", certs.ClientCert, "--tls-key", certs.ClientKey}

	code, out, errs := cli(t, append(base, tlsFlags...)...)
	if r := parseAudit(t, out); code != exitClean || r.Totals.Keys != 30 || strings.Contains(errs, "warning") {
		t.Fatalf("mutual tls by flags: exit %d, %d keys\n%s", code, r.Totals.Keys, errs)
	}
	t.Setenv("REDIS_TLS_CA_CERT", certs.CA)
	t.Setenv("REDIS_TLS_CERT", certs.ClientCert)
	t.Setenv("REDIS_TLS_KEY", certs.ClientKey)
	t.Setenv("REDIS_TLS_SERVER_NAME", "localhost")
	code, out, errs = cli(t, base...)
	if r := parseAudit(t, out); code != exitClean || r.Totals.Keys != 30 {
		t.Fatalf("mutual tls by environment: exit %d, %d keys\n%s", code, r.Totals.Keys, errs)
	}
	// A flag wins over its variable.
	code, _, errs = cli(t, append(base, "--tls-server-name", "redis.example")...)
	if code != exitRuntime || !strings.Contains(errs, `not valid for "redis.example"`) || !strings.Contains(errs, "hint: give the name its certificate holds with --tls-server-name") {
		t.Errorf("wrong server name: exit %d\n%s", code, errs)
	}
	code, _, errs = cli(t, append(base, "--tls-ca-cert", certs.OtherCA)...)
	if code != exitRuntime || !strings.Contains(errs, "unknown authority") || !strings.Contains(errs, "hint: give the server's CA with --tls-ca-cert") {
		t.Errorf("wrong ca: exit %d\n%s", code, errs)
	}
	t.Setenv("REDIS_TLS_CERT", "")
	t.Setenv("REDIS_TLS_KEY", "")
	code, _, errs = cli(t, base...)
	if code != exitRuntime || !strings.Contains(errs, "certificate") {
		t.Errorf("no client certificate: exit %d\n%s", code, errs)
	}
	t.Setenv("REDIS_TLS_CERT", certs.ClientCert)
	t.Setenv("REDIS_TLS_KEY", certs.ClientKey)

	// --tls-insecure (or its variable) connects despite the wrong CA, warns
	// on stderr and says so in the report.
	insecure := func(name string, args ...string) {
		t.Helper()
		code, out, errs := cli(t, append(append(base, "--tls-ca-cert", certs.OtherCA), args...)...)
		var r struct {
			Scan struct {
				Notes []string `json:"notes"`
			} `json:"scan"`
		}
		_ = json.Unmarshal([]byte(out), &r)
		if code != exitClean || !strings.Contains(errs, "keyreg: warning: tls certificate verification is off") || !slices.Contains(r.Scan.Notes, scanner.InsecureNote) {
			t.Errorf("%s: exit %d, notes %q\n%s", name, code, r.Scan.Notes, errs)
		}
		code, out, _ = cli(t, append([]string{"audit", "--registry", cleanRegistry, "--url", u, "--format", "text", "--tls-ca-cert", certs.OtherCA}, args...)...)
		if code != exitClean || !strings.Contains(out, scanner.InsecureNote) {
			t.Errorf("%s, text: exit %d\n%s", name, code, out)
		}
	}
	insecure("--tls-insecure", "--tls-insecure")
	t.Setenv("REDIS_TLS_INSECURE", "true")
	insecure("REDIS_TLS_INSECURE")
	if code, _, errs := cli(t, append(base, "--tls-ca-cert", certs.OtherCA, "--tls-insecure=false")...); code != exitRuntime {
		t.Errorf("--tls-insecure=false over REDIS_TLS_INSECURE: exit %d\n%s", code, errs)
	}
	t.Setenv("REDIS_TLS_INSECURE", "maybe")
	if code, _, errs := cli(t, base...); code != exitUsage || !strings.Contains(errs, `"maybe"`) {
		t.Errorf("REDIS_TLS_INSECURE=maybe: exit %d\n%s", code, errs)
	}
	t.Setenv("REDIS_TLS_INSECURE", "")

	// explain --live shares the flags.
	code, out, errs = cli(t, "explain", "--registry", cleanRegistry, "--live", "--url", u, "--format", "json", "v1:session:1")
	if code != exitClean || !strings.Contains(out, `"live"`) {
		t.Errorf("explain --live over mutual tls: exit %d\n%s%s", code, out, errs)
	}

	// Scheme mismatches name the scheme to use; TLS flags need rediss://.
	for _, v := range []string{"REDIS_TLS_CA_CERT", "REDIS_TLS_CERT", "REDIS_TLS_KEY", "REDIS_TLS_SERVER_NAME"} {
		t.Setenv(v, "")
	}
	code, _, errs = cli(t, "audit", "--registry", cleanRegistry, "--url", "rediss://"+s.Addr, "--command-timeout", "1s")
	if code != exitRuntime || !strings.Contains(errs, "use redis:// instead of rediss://") {
		t.Errorf("rediss:// on a plain port: exit %d\n%s", code, errs)
	}
	code, _, errs = cli(t, "audit", "--registry", cleanRegistry, "--url", "redis://"+s.TLSAddr, "--command-timeout", "1s")
	if code != exitRuntime || !strings.Contains(errs, "use rediss:// instead of redis://") {
		t.Errorf("redis:// on a TLS port: exit %d\n%s", code, errs)
	}
	t.Setenv("REDIS_TLS_CA_CERT", certs.CA)
	code, _, errs = cli(t, "audit", "--registry", cleanRegistry, "--url", "redis://"+s.Addr)
	if code != exitUsage || !strings.Contains(errs, "tls options need a rediss:// url") {
		t.Errorf("tls variables with redis://: exit %d\n%s", code, errs)
	}
}

// TestAuditSentinelFlags audits through two sentinels that require a
// password, the first down.
func TestAuditSentinelFlags(t *testing.T) {
	const sentPW = "Zq9#Sx/Wv7"
	ss := redistest.Sentinels(t, redistest.SentinelConfig{N: 2, Password: sentPW})
	seedClean(t, ss.Master.Client(t), 25)
	ss.Sentinels[0].Stop()
	args := []string{"audit", "--registry", cleanRegistry, "--url", "redis://" + ss.Sentinels[0].Addr, "--sentinel-master", ss.MasterName,
		"--sentinel-addr", ss.Sentinels[1].Addr, "--format", "json", "--command-timeout", "2s"}
	code, _, errs := cli(t, "audit", "--registry", cleanRegistry, "--url", "redis://nobody:Wrong-Pw-9@"+ss.Master.Addr)
	if code != exitRuntime || !strings.Contains(errs, "WRONGPASS") || !strings.Contains(errs, "hint: check the user and password in --url") {
		t.Errorf("wrong password: exit %d\n%s", code, errs)
	}
	code, out, errs := cli(t, args...)
	if code != exitRuntime || !strings.Contains(errs, "hint: the sentinels need their own password") || leak(out+errs, sentPW) != "" {
		t.Errorf("no sentinel password: exit %d\n%s", code, errs)
	}
	code, out, errs = cli(t, append(args, "--sentinel-password", sentPW)...)
	if r := parseAudit(t, out); code != exitClean || r.Mode != "sentinel" || r.Totals.Keys != 25 {
		t.Errorf("--sentinel-password: exit %d, %+v\n%s", code, r, errs)
	}
	t.Setenv("REDIS_SENTINEL_PASSWORD", sentPW)
	code, out, errs = cli(t, args...)
	if r := parseAudit(t, out); code != exitClean || r.Totals.Keys != 25 || leak(out+errs, sentPW) != "" {
		t.Errorf("REDIS_SENTINEL_PASSWORD: exit %d, %d keys\n%s", code, r.Totals.Keys, errs)
	}
	// A comma list works like a repeated flag.
	args[7], args[8] = "--sentinel-addr", ss.Sentinels[0].Addr+","+ss.Sentinels[1].Addr
	if code, _, errs = cli(t, args...); code != exitClean {
		t.Errorf("comma list: exit %d\n%s", code, errs)
	}
	// Sentinel flags without --sentinel-master are a usage error.
	if code, _, errs = cli(t, "audit", "--registry", cleanRegistry, "--url", "redis://"+ss.Master.Addr, "--sentinel-password", sentPW); code != exitUsage || leak(errs, sentPW) != "" {
		t.Errorf("--sentinel-password without --sentinel-master: exit %d\n%s", code, errs)
	}
}

// TestAuditCancelBlocked interrupts an audit whose server stopped answering
// (paused with SIGSTOP once the audit has audited 100 keys, cancelled once
// its request is known to wait): the partial report must come within 1 s,
// exit 3, however long --command-timeout is.
func TestAuditCancelBlocked(t *testing.T) {
	s := redistest.Standalone(t)
	seedClean(t, s.Client(t), 3000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := startFault(t, ctx, 100, "audit", "--registry", cleanRegistry, "--url", s.URL(), "--count", "100", "--rate", "2000",
		"--format", "json", "--command-timeout", "20s")
	r.at(t)
	s.Pause(t)
	defer s.Resume(t)
	r.release()
	s.WaitUnread(t)
	at := time.Now()
	cancel()
	code, out, errs := r.finish()
	took := time.Since(at)
	t.Logf("the audit returned %v after cancel", took)
	if code != exitRuntime || took > time.Second {
		t.Fatalf("exit %d after %v, want 3 within 1s; stderr:\n%s", code, took, errs)
	}
	if !strings.Contains(errs, "interrupted") {
		t.Errorf("stderr does not say the audit was interrupted:\n%s", errs)
	}
	rep := parseAudit(t, out)
	if !rep.Partial || rep.Totals.Keys < 100 || rep.Totals.Keys >= 3000 {
		t.Errorf("report partial=%v with %d keys; want a partial report of some keys (at least the 100 before the pause)", rep.Partial, rep.Totals.Keys)
	}
}
