package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A fleet runs one keyreg audit per target on a job engine (a Kubernetes
// Indexed Job, a CI matrix; docs/fleet.md), each picking its target from
// one target list by index, then keyreg report merge joins the reports.
//
// The target list is text, one target per line: a name, then the audit
// flags of that target only (such as --cluster or --db 2), split at
// spaces, never evaluated; # starts a comment line. It holds no secret: the
// URL (with its password) and the TLS files of target NAME are the files
// NAME.url, NAME.ca.pem, NAME.cert.pem and NAME.key.pem of the secrets
// directory, as a Kubernetes Secret mounted there provides them.

const (
	maxTargets         = 10000
	maxTargetListBytes = 1 << 20
	maxURLFileBytes    = 8 << 10
)

// targetName is what a target may be called: it names files.
var targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// fleetTarget is one line of a target list.
type fleetTarget struct {
	Name string
	Args []string
	Line int
}

// targetOnlyFlags may not appear in a target list: the list is not secret
// and picks no other list.
var targetOnlyFlags = []string{"url", "u", "sentinel-password", "target-list", "target-index", "secrets-dir"}

// readTargets parses a target list; errors are file:line.
func readTargets(name string, r io.Reader) ([]fleetTarget, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxTargetListBytes+1))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	var out []fleetTarget
	seen := map[string]int{}
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if size > maxTargetListBytes {
			return nil, fmt.Errorf("%s: larger than %d bytes", name, maxTargetListBytes)
		}
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if !targetName.MatchString(f[0]) {
			return nil, fmt.Errorf("%s:%d:1: target name %q: want letters, digits, . _ or -, at most 63", name, n, clipName(f[0]))
		}
		if prev, ok := seen[f[0]]; ok {
			return nil, fmt.Errorf("%s:%d:1: target %s is already on line %d", name, n, f[0], prev)
		}
		for _, a := range f[1:] {
			flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			dash := "--"
			if !strings.HasPrefix(a, "--") && len(a) > 1 {
				// A shorthand takes its value in the same argument
				// too: -uredis://user:password@host is -u.
				flag, dash = a[1:2], "-"
			}
			if strings.HasPrefix(a, "-") && slices.Contains(targetOnlyFlags, flag) {
				return nil, fmt.Errorf("%s:%d: target %s: %s does not belong in a target list (URLs and passwords go in the secrets directory)", name, n, f[0], dash+flag)
			}
		}
		if len(out) == maxTargets {
			return nil, fmt.Errorf("%s:%d: more than %d targets", name, n, maxTargets)
		}
		seen[f[0]] = n
		out = append(out, fleetTarget{Name: f[0], Args: f[1:], Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return out, nil
}

func clipName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// targetOptions are audit's --target-list, --target-index and
// --secrets-dir.
type targetOptions struct {
	list    string
	index   string
	secrets string
}

func (o *targetOptions) flags(f *pflag.FlagSet) {
	f.StringVar(&o.list, "target-list", "", "fleet: audit one target of this target list (docs/fleet.md), the one --target-index picks")
	f.StringVar(&o.index, "target-index", "", "fleet: index of the target in --target-list, from 0 (env JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it)")
	f.StringVar(&o.secrets, "secrets-dir", "", "fleet: directory of each target's NAME.url and NAME.{ca,cert,key}.pem (env KEYREG_SECRETS_DIR)")
}

// applyTarget picks the target of --target-list, parses its flags through
// c's own flag set, and takes its URL and TLS files from the secrets
// directory; {target} in an --output path becomes its name.
func applyTarget(c *cobra.Command, t *targetOptions, o *auditOptions) error {
	if t.list == "" {
		if t.index != "" || t.secrets != "" {
			return usageError(errors.New("--target-index and --secrets-dir need --target-list"), "")
		}
		return nil
	}
	idx := env(t.index, "JOB_COMPLETION_INDEX")
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 {
		return usageError(fmt.Errorf("target index %q is not a number from 0", idx), "set --target-index or $JOB_COMPLETION_INDEX")
	}
	f, err := os.Open(t.list)
	if err != nil {
		return usageError(err, "")
	}
	targets, err := readTargets(t.list, f)
	f.Close()
	if err != nil {
		return usageError(err, "")
	}
	if i >= len(targets) {
		return usageError(fmt.Errorf("target index %d: %s has %d targets", i, t.list, len(targets)), "")
	}
	tg := targets[i]
	if err := c.Flags().Parse(tg.Args); err != nil {
		return usageError(fmt.Errorf("%s:%d: target %s: %w", t.list, tg.Line, tg.Name, err), "")
	}
	if len(c.Flags().Args()) > 0 {
		return usageError(fmt.Errorf("%s:%d: target %s: unexpected argument %q", t.list, tg.Line, tg.Name, c.Flags().Args()[0]), "")
	}
	for k, v := range o.output.outputs {
		o.output.outputs[k] = strings.ReplaceAll(v, "{target}", tg.Name)
	}
	o.fleetTarget = tg.Name // the report says which target it is
	dir := env(t.secrets, "KEYREG_SECRETS_DIR")
	if dir == "" {
		return nil
	}
	conn := &o.scan.conn
	url, err := readSecretFile(filepath.Join(dir, tg.Name+".url"))
	switch {
	case err == nil:
		conn.url = url
	case errors.Is(err, os.ErrNotExist):
		// Falling back to $REDIS_URL or localhost would audit another
		// server and file its report under this target's name.
		return usageError(fmt.Errorf("%s:%d: target %s: the secrets directory %s has no %s.url", t.list, tg.Line, tg.Name, dir, tg.Name), "")
	default:
		return usageError(err, "")
	}
	for _, p := range []struct {
		file string
		dst  *string
	}{{".ca.pem", &conn.tls.CACert}, {".cert.pem", &conn.tls.Cert}, {".key.pem", &conn.tls.Key}} {
		path := filepath.Join(dir, tg.Name+p.file)
		if _, err := os.Stat(path); err == nil && *p.dst == "" {
			*p.dst = path
		}
	}
	return nil
}

// readSecretFile reads a URL file, bounded, without its surrounding space.
func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxURLFileBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxURLFileBytes {
		return "", fmt.Errorf("%s: larger than %d bytes", path, maxURLFileBytes)
	}
	s := strings.TrimSpace(string(b))
	if s == "" || strings.ContainsAny(s, "\r\n") {
		return "", fmt.Errorf("%s: want one URL on one line", path)
	}
	return s, nil
}
