package demo

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
)

// Locks, fences and stream consumer groups (kind: lock, kind: fence,
// groups:). A clean lock has its fence and a clean stream has its
// family's groups, both written by record; the plants below break one
// thing each.
//
// miniredis differs from Redis in two ways that matter here: it has no
// OBJECT ENCODING, which objectEncoding adds, and its XINFO GROUPS reports
// a group's lag as the length of the stream, whatever the group read. The
// plants are written so that both servers agree: the lagging group read
// nothing, and the other planted streams are shorter than any max_lag.

// objectEncoding teaches m OBJECT ENCODING for strings (int, embstr or
// raw, as Redis decides them), through the server's pre-hook, so that the
// audit's fence-invalid check runs on the embedded server. Other OBJECT
// subcommands go to miniredis.
func objectEncoding(m *miniredis.Miniredis) {
	m.Server().SetPreHook(func(c *server.Peer, cmd string, args ...string) bool {
		if cmd != "OBJECT" || len(args) != 2 || !strings.EqualFold(args[0], "encoding") {
			return false
		}
		switch m.Type(args[1]) {
		case "":
			c.WriteNull()
		case "string":
			v, _ := m.Get(args[1])
			c.WriteBulk(stringEncoding(v))
		default:
			c.WriteBulk("listpack")
		}
		return true
	})
}

// stringEncoding is the OBJECT ENCODING Redis gives a string value.
func stringEncoding(v string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err == nil && strconv.FormatInt(n, 10) == v:
		return "int"
	case len(v) <= 44:
		return "embstr"
	}
	return "raw"
}

// do runs one command on m, as a client would, and returns its error
// reply (BUSYGROUP, for a group that exists, is none).
func (s *seeder) do(args ...string) error {
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	s.m.Server().Dispatch(server.NewPeer(w), args)
	_ = w.Flush()
	if b := out.String(); strings.HasPrefix(b, "-") && !strings.HasPrefix(b, "-BUSYGROUP") {
		return fmt.Errorf("%s: %s", strings.Join(args[:min(2, len(args))], " "), strings.TrimSpace(b[1:]))
	}
	return nil
}

// companions writes what a key of f needs to be clean besides itself:
// the fence of a lock (recorded as a key of the fence family) unless the
// key is planted without it, and the consumer groups of a stream unless it
// is planted without one. rs are the rules the key is planted for.
func (s *seeder) companions(key string, f *registry.Family, rs []string) error {
	if f == nil || s.match.Match(key) != f {
		return nil
	}
	if f.FencingFamily != nil && !slices.Contains(rs, rules.FenceMissing.ID) {
		if fk, ok := f.FenceKey(key); ok && !s.used[fk] {
			if err := s.m.Set(fk, strconv.Itoa(1+s.g.r.IntN(5000))); err != nil {
				return err
			}
			s.used[fk] = true
			s.record(fk, f.FencingFamily)
		}
	}
	if len(f.Groups) > 0 && !slices.Contains(rs, rules.StreamGroupMissing.ID) && s.m.Type(key) == "stream" {
		for _, g := range f.Groups {
			if err := s.do("XGROUP", "CREATE", key, g.Name, "$"); err != nil {
				return fmt.Errorf("writing %q: %w", key, err)
			}
		}
	}
	return nil
}

func isLock(f *registry.Family) bool {
	return f.Kind == registry.KindLock && f.FencingFamily != nil && f.FencingProblem() == ""
}

func isFence(f *registry.Family) bool { return f.Kind == registry.KindFence && f.Type == "string" }

func hasGroups(f *registry.Family) bool { return f.Type == "stream" && len(f.Groups) > 0 }

// unfenced writes a live lock of f whose fence key does not exist.
func (s *seeder) unfenced(f *registry.Family) (string, error) {
	for range 20 {
		key, v, err := s.fresh(f)
		if err != nil {
			return "", err
		}
		if fk, ok := f.FenceKey(key); !ok || s.used[fk] {
			s.used[key] = true // try another
			continue
		}
		return key, s.write(key, v, s.ttl(f))
	}
	return "", errSkip
}

// badFence writes a fence of f that is not an integer or has a TTL.
func (s *seeder) badFence(f *registry.Family) (string, error) {
	key, err := s.keyFor(f)
	if err != nil {
		return "", err
	}
	if s.g.r.IntN(2) == 0 {
		return key, s.write(key, value{typ: "string", str: []byte(strconv.Itoa(1 + s.g.r.IntN(5000)))}, s.days(1, 30))
	}
	return key, s.write(key, value{typ: "string", str: []byte(pick(s.g.r, "reset", "n/a", "17.5", "0x1f"))}, 0)
}

// groupStream writes a clean stream of f with n entries (at least the
// good value's), creates the groups of f at its start, except skip, and
// then has consumer read count entries of group read, at the time at.
func (s *seeder) groupStream(f *registry.Family, n int, skip, read, consumer string, count int, at time.Time) (string, error) {
	key, v, err := s.fresh(f)
	if err != nil {
		return "", err
	}
	for len(v.entries) < n {
		more, err := s.good(f)
		if err != nil {
			return "", err
		}
		v.entries = append(v.entries, more.entries...)
	}
	if n > 0 {
		v.entries = v.entries[:n]
	}
	if err := s.write(key, v, s.ttl(f)); err != nil {
		return "", err
	}
	for _, g := range f.Groups {
		if g.Name != skip {
			if err := s.do("XGROUP", "CREATE", key, g.Name, "0"); err != nil {
				return "", err
			}
		}
	}
	if read != "" {
		if !at.IsZero() {
			s.m.SetTime(at)
			defer s.m.SetTime(time.Time{})
		}
		if err := s.do("XREADGROUP", "GROUP", read, consumer, "COUNT", strconv.Itoa(count), "STREAMS", key, ">"); err != nil {
			return "", err
		}
		if !at.IsZero() {
			// miniredis dates a consumer's last interaction only on
			// XCLAIM: the consumer claims what it read, then falls silent.
			// The IDs are those write gives the first count entries.
			claim := []string{"XCLAIM", key, read, consumer, "0"}
			for i := range count {
				claim = append(claim, fmt.Sprintf("%d-0", base.UnixMilli()-int64(len(v.entries)-i)*60_000))
			}
			if err := s.do(claim...); err != nil {
				return "", err
			}
		}
	}
	return key, nil
}

// firstGroup returns the group of f with the smallest limit that has
// returns, and that limit.
func firstGroup(f *registry.Family, limit func(registry.StreamGroup) int64) (registry.StreamGroup, bool) {
	var best registry.StreamGroup
	found := false
	for _, g := range f.Groups {
		if l := limit(g); l != registry.NoLimit && (!found || l < limit(best)) {
			best, found = g, true
		}
	}
	return best, found
}

// shortest is the length below every max_lag of f, so that miniredis,
// which reports a stream's length as every group's lag, sees no lag.
func shortest(f *registry.Family) int {
	n := 50
	for _, g := range f.Groups {
		if g.MaxLag != registry.NoLimit {
			n = min(n, int(g.MaxLag))
		}
	}
	return n
}

// lagging writes a stream whose group with the smallest max_lag has read
// nothing of max_lag+1 entries.
func (s *seeder) lagging(f *registry.Family) (string, error) {
	g, ok := firstGroup(f, func(g registry.StreamGroup) int64 { return g.MaxLag })
	if !ok || (f.MaxLen > 0 && g.MaxLag+1 > f.MaxLen) || g.MaxLag > 5000 {
		return "", errSkip
	}
	return s.groupStream(f, int(g.MaxLag)+1, "", "", "", 0, time.Time{})
}

// backlog writes a stream whose consumer holds max_pending+1 entries of
// the group with the smallest max_pending, unacknowledged.
func (s *seeder) backlog(f *registry.Family) (string, error) {
	g, ok := firstGroup(f, func(g registry.StreamGroup) int64 { return g.MaxPending })
	if !ok || int(g.MaxPending)+1 > shortest(f) {
		return "", errSkip
	}
	n := int(g.MaxPending) + 1
	return s.groupStream(f, n, "", g.Name, pick(s.g.r, "push-worker-2", "push-worker-5"), n, time.Time{})
}

// deadConsumer writes a stream one of whose consumers took two entries and
// has been silent for longer than its group's max_consumer_idle since.
func (s *seeder) deadConsumer(f *registry.Family) (string, error) {
	g, ok := firstGroup(f, func(g registry.StreamGroup) int64 { return int64(g.MaxConsumerIdle) })
	if !ok || shortest(f) < 3 {
		return "", errSkip
	}
	at := time.Now().Add(-g.MaxConsumerIdle - time.Duration(1+s.g.r.IntN(48))*time.Hour)
	return s.groupStream(f, 3, "", g.Name, pick(s.g.r, "push-worker-7", "push-worker-9"), 2, at)
}

// missingGroup writes a stream that lacks one of its family's groups.
func (s *seeder) missingGroup(f *registry.Family) (string, error) {
	if len(f.Groups) == 0 {
		return "", errSkip
	}
	return s.groupStream(f, min(3, shortest(f)), f.Groups[len(f.Groups)-1].Name, "", "", 0, time.Time{})
}
