package audit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/source"
)

// ErrChecksRefused is the error of an audit during which the server refused
// a command that a check needs (NOPERM under an ACL without -memory or
// -object, OBJECT IDLETIME under an LFU policy): the check did not run on
// those keys, so the report is partial, in every format, and the audit
// exits 3. A check that did not run is never a pass.
var ErrChecksRefused = errors.New("checks did not run")

// refusedChecks names the checks each probe command feeds.
var refusedChecks = map[string]string{
	"object idletime": "stale-key",
	"memory usage":    "value-too-large",
	"object encoding": "fence-invalid",
	"exists":          "fence-missing",
	"hlen":            "collection-too-long",
	"llen":            "collection-too-long",
	"scard":           "collection-too-long",
	"zcard":           "collection-too-long",
	"xlen":            "collection-too-long",
	"xinfo groups":    "stream-group-missing, stream-group-lag and stream-pending",
	"xinfo consumers": "stream-consumer-idle",
}

// refusedError says which checks did not run, on how many keys and why;
// nil when the server refused nothing.
func refusedError(rs []source.Refusal) error {
	if len(rs) == 0 {
		return nil
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		checks := refusedChecks[r.Command]
		if checks == "" {
			checks = "the checks that need it"
		}
		parts[i] = fmt.Sprintf("%s not checked on %d %s: %s could not be read (%s)", checks, r.Keys, diag.Plural(r.Keys, "key"), strings.ToUpper(r.Command), r.Err)
	}
	return fmt.Errorf("%w: %s", ErrChecksRefused, strings.Join(parts, "; "))
}
