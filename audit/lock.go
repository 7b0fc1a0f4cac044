package audit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// What CheckKey adds about a lock (its holder token's shape, its fence)
// and a fence (its value), for explain --live. Values are never quoted:
// a token is described by its shape, and a fence's value is printed only
// when it is an integer, which is what a fence holds.

// TokenShape describes a lock holder's token without quoting it: "uuid",
// "ulid", "int", "hex 32", "text 20 bytes", "binary 16 bytes" or "empty".
func TokenShape(b []byte) string {
	s := string(b)
	switch {
	case len(b) == 0:
		return "empty"
	case registry.UUID.Valid(s, 0):
		return "uuid"
	case registry.ULID.Valid(s, 0) && !registry.Hex.Valid(s, 0) && !registry.Int.Valid(s, 0):
		return "ulid"
	case isInteger(b):
		return "int"
	case registry.Hex.Valid(s, 0):
		return fmt.Sprintf("hex %d", len(b))
	case utf8.Valid(b) && printable(s):
		return fmt.Sprintf("text %d bytes", len(b))
	}
	return fmt.Sprintf("binary %d bytes", len(b))
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// isInteger reports whether b is an int64 as INCR writes it.
func isInteger(b []byte) bool {
	n, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == string(b)
}

// fenceValue describes a fence's value: the integer, or why it is none.
func fenceValue(b []byte) string {
	if isInteger(b) {
		return string(b)
	}
	return "(not an integer)"
}

// readFence reads the value of the fence key of a lock for KeyCheck: the
// integer, or why it was not read.
func readFence(ctx context.Context, p Prober, ki source.KeyInfo) (string, error) {
	if !ki.HasFence || !ki.FenceExists {
		return "", nil
	}
	fi, err := p.Probe(ctx, ki.Fence)
	if err != nil {
		return "", err
	}
	if fi.Vanished {
		return "(gone)", nil
	}
	if fi.Type != "string" {
		return "(a " + fi.Type + ", not an integer)", nil
	}
	s, err := p.Sample(ctx, fi, 1, 64)
	switch {
	case errors.Is(err, source.ErrTouch):
		return "(not read: it would reset the fence's LRU/LFU state on a primary before redis 7.2)", nil
	case errors.Is(err, source.ErrTooLarge):
		return "(not an integer)", nil
	case errors.Is(err, source.ErrVanished):
		return "(gone)", nil
	case err != nil:
		return "", err
	}
	return fenceValue(s.String), nil
}
