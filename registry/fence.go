package registry

import (
	"fmt"
	"strings"
)

// A lock family (kind: lock) may name the family of its fencing counter
// (fencing:), a kind: fence family. Each lock key has one fence key: the
// fence pattern with the placeholder values the lock key binds, so that
// v1:lock:invoice:{42} is fenced by v1:fence:invoice:{42}.

// FencingProblem says why keys of the lock family f cannot be fenced as
// declared: fencing names no family, or a family that is not a fence, or a
// placeholder of the fence pattern that the lock pattern does not bind to
// a value the fence accepts. It returns "" when every lock key has a fence
// key, and when f declares no fencing.
func (f *Family) FencingProblem() string {
	if f.Fencing == "" {
		return ""
	}
	fence := f.FencingFamily
	switch {
	case fence == nil:
		return fmt.Sprintf("fencing %q names no family", f.Fencing)
	case fence.Kind != KindFence:
		return fmt.Sprintf("fencing %q names a family that is not kind: fence", f.Fencing)
	case f.Pattern == nil || fence.Pattern == nil:
		return ""
	}
	sep := f.Pattern.Sep
	for _, fp := range fence.Pattern.Placeholders() {
		lp, ok := f.placeholder(fp.Name)
		if !ok {
			return fmt.Sprintf("the fence pattern's placeholder {%s} is not in the lock pattern %q, so no fence key can be built from a lock key", fp.Name, f.Pattern.Source)
		}
		if !typeWithin(lp.Type, fp.Type, sep) {
			return fmt.Sprintf("the lock's {%s:%s} values do not all fit the fence's {%s:%s}", lp.Name, lp.Type, fp.Name, fp.Type)
		}
	}
	return ""
}

// placeholder returns the placeholder of f's pattern called name.
func (f *Family) placeholder(name string) (Part, bool) {
	for _, pt := range f.Pattern.Parts {
		if pt.Name == name {
			return pt, true
		}
	}
	return Part{}, false
}

// typeWithin reports whether every value of type a is a value of type b.
func typeWithin(a, b PlaceholderType, sep byte) bool {
	switch {
	case a == b || b == Any:
		return true
	case b == Word:
		// Every type but Any refuses the separator, except UUID's dashes
		// when the separator is "-".
		return a != Any && !(a == UUID && sep == '-')
	}
	return false
}

// FenceKey returns the key of the fencing counter of lockKey, a key of the
// lock family f: the fence family's pattern with the placeholder values
// that lockKey binds in f's pattern. ok is false when f has no usable
// fence (FencingProblem is not empty, or f declares none), when lockKey is
// not a key of f, or when a bound value does not fit the fence's
// placeholder.
func (f *Family) FenceKey(lockKey string) (key string, ok bool) {
	fence := f.FencingFamily
	if fence == nil || fence.Kind != KindFence || f.Pattern == nil || fence.Pattern == nil {
		return "", false
	}
	m := f.lockMatcher
	if m == nil {
		m = NewMatcher([]*Family{f}, f.Pattern.Sep)
	}
	var buf [8]Param
	got, params := m.MatchParams(lockKey, buf[:0])
	if got != f {
		return "", false
	}
	var b strings.Builder
	for _, pt := range fence.Pattern.Parts {
		if !pt.IsPlaceholder() {
			b.WriteString(pt.Lit)
			continue
		}
		v, found := "", false
		for _, p := range params {
			if p.Name == pt.Name {
				v, found = p.Value, true
				break
			}
		}
		if !found || !pt.Type.Valid(v, fence.Pattern.Sep) {
			return "", false
		}
		b.WriteString(v)
	}
	return b.String(), true
}
