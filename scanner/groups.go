package scanner

import (
	"bufio"
	"context"
	"io"
	"time"

	"github.com/keyreg/keyreg/source"
)

// The consumer groups of a stream are read in one more round trip of the
// probe, for the streams whose plan names groups: XINFO GROUPS of each, and
// XINFO CONSUMERS of each planned group whose consumers are wanted. Both
// are O(1) per group (per consumer) on the server, and both look the key up
// as a read that touches it, so the plan drops them where touching is
// refused (planFor). Their replies are parsed element by element, keeping
// only the planned groups (at most the registry's 32 per family) and, per
// group, the longest idle consumer that holds pending entries: a stream of
// thousands of groups or consumers costs time to read, not memory.

// readGroups reads the planned groups of the streams listed in streams as
// pairs (index in keys and kps, index in infos) on rc, and stores them in
// the infos. A reply error (the key changed type) is a note; an I/O or
// protocol error fails the probe.
func (c *Conn) readGroups(ctx context.Context, rc *rawConn, keys []string, kps []probed, infos []KeyInfo, streams []int, note func(string, error)) error {
	if err := rc.begin(ctx, c.base.ReadTimeout); err != nil {
		return err
	}
	defer rc.stop()
	for j := 0; j < len(streams); j += 2 {
		k, plan := keys[streams[j]], &kps[streams[j]].plan
		rc.cmd("XINFO", "GROUPS", k)
		for _, q := range plan.Groups {
			if q.Consumers {
				rc.cmd("XINFO", "CONSUMERS", k, q.Name)
			}
		}
	}
	rc.pending = 0
	if err := rc.w.Flush(); err != nil {
		return rc.ctxErr(err)
	}
	gr := newGroupReader(rc.r)
	for j := 0; j < len(streams); j += 2 {
		plan, ki := &kps[streams[j]].plan, &infos[streams[j+1]]
		gr.cr.reply = nil
		groups, err := gr.groups(plan.Groups)
		if err != nil {
			return rc.ctxErr(err)
		}
		ki.Groups, ki.HasGroups = groups, gr.cr.reply == nil
		if gr.cr.reply != nil {
			note("xinfo groups", gr.cr.reply)
		}
		for _, q := range plan.Groups {
			if !q.Consumers {
				continue
			}
			var g *source.GroupInfo
			for i := range ki.Groups {
				if ki.Groups[i].Name == q.Name {
					g = &ki.Groups[i]
				}
			}
			gr.cr.reply = nil
			if err := gr.consumers(g); err != nil {
				return rc.ctxErr(err)
			}
			// NOGROUP: the group does not exist, which the groups say.
			if gr.cr.reply != nil && g != nil {
				note("xinfo consumers", gr.cr.reply)
			}
		}
	}
	return nil
}

// groupReader parses XINFO replies on a probe connection, with the
// header, skip and discard of the sample reader.
type groupReader struct {
	cr   capReader
	buf  [800]byte // a group name: keys.yaml allows 200 characters, 800 bytes of UTF-8
	name [32]byte  // a field name: longer ones are no field read
}

func newGroupReader(r *bufio.Reader) *groupReader {
	gr := &groupReader{}
	gr.cr = capReader{r: r, wave: new(int64)}
	return gr
}

// small reads the body of a bulk string of length n (its header read) into
// gr.buf when it fits, and returns it; a longer one is discarded and nil.
func (gr *groupReader) small(cr *capReader, n int64) ([]byte, error) {
	if n < 0 {
		return nil, nil
	}
	if n > int64(len(gr.buf)) {
		return nil, cr.discard(n + 2)
	}
	b := gr.buf[:n]
	if _, err := io.ReadFull(cr.r, b); err != nil {
		return nil, err
	}
	return b, crlf(cr)
}

// crlf reads the end of a bulk string, as capReader.crlf does but byte by
// byte, so that nothing escapes to the heap once per element.
func crlf(cr *capReader) error {
	for _, want := range [2]byte{'\r', '\n'} {
		c, err := cr.r.ReadByte()
		if err != nil {
			return err
		}
		if c != want {
			return errProtocol
		}
	}
	return nil
}

// field reads the next field of a reply that is an array of field-value
// pairs: the field's name (in gr.name, valid until the next call; nil for
// one that is not a short bulk string) and the header of its value, which
// the caller must consume (cr.skip if nothing else).
func (gr *groupReader) field(cr *capReader) (name []byte, kind byte, n int64, err error) {
	kind, n, _, err = cr.header()
	if err != nil {
		return nil, 0, 0, err
	}
	if kind == '$' && n >= 0 && n <= int64(len(gr.name)) {
		name = gr.name[:n]
		if _, err := io.ReadFull(cr.r, name); err != nil {
			return nil, 0, 0, err
		}
		if err := crlf(cr); err != nil {
			return nil, 0, 0, err
		}
	} else if err := cr.skip(kind, n); err != nil {
		return nil, 0, 0, err
	}
	kind, n, _, err = cr.header()
	return name, kind, n, err
}

// rest skips what is left of a pairs array of m elements after its pairs:
// one element when m is odd.
func (gr *groupReader) rest(cr *capReader, m int64) error {
	if m%2 == 0 {
		return nil
	}
	kind, n, _, err := cr.header()
	if err != nil {
		return err
	}
	return cr.skip(kind, n)
}

// groups parses an XINFO GROUPS reply and returns the planned groups it
// lists.
func (gr *groupReader) groups(plan []source.GroupQuery) ([]source.GroupInfo, error) {
	cr := &gr.cr
	size, err := cr.array()
	if err != nil || size < 0 {
		return nil, err
	}
	var out []source.GroupInfo
	for range size {
		kind, m, _, err := cr.header()
		if err != nil {
			return nil, err
		}
		if kind != '*' {
			if err := cr.skip(kind, m); err != nil {
				return nil, err
			}
			continue
		}
		var g source.GroupInfo
		planned := -1
		for f := int64(0); f+1 < m; f += 2 {
			name, kind, n, err := gr.field(cr)
			if err != nil {
				return nil, err
			}
			switch {
			case string(name) == "name" && kind == '$':
				b, err := gr.small(cr, n)
				if err != nil {
					return nil, err
				}
				for i, q := range plan {
					if b != nil && string(b) == q.Name {
						planned = i
					}
				}
			case kind == ':' && string(name) == "consumers":
				g.Consumers = n
			case kind == ':' && string(name) == "pending":
				g.Pending = n
			case kind == ':' && string(name) == "lag":
				g.Lag, g.HasLag = n, true
			default:
				if err := cr.skip(kind, n); err != nil {
					return nil, err
				}
			}
		}
		if err := gr.rest(cr, m); err != nil {
			return nil, err
		}
		if planned >= 0 {
			g.Name = plan[planned].Name
			if out == nil {
				out = make([]source.GroupInfo, 0, len(plan))
			}
			out = append(out, g)
		}
	}
	return out, nil
}

// consumers parses an XINFO CONSUMERS reply into g (nil: the group is not
// among those read; the reply is consumed all the same): the longest idle
// consumer that holds pending entries.
func (gr *groupReader) consumers(g *source.GroupInfo) error {
	cr := &gr.cr
	size, err := cr.array()
	if err != nil || size < 0 {
		return err
	}
	var idlest [source.MaxConsumerName]byte
	idlestLen, found := 0, false
	var longest int64
	for range size {
		kind, m, _, err := cr.header()
		if err != nil {
			return err
		}
		if kind != '*' {
			if err := cr.skip(kind, m); err != nil {
				return err
			}
			continue
		}
		var name [source.MaxConsumerName]byte
		nameLen := 0
		var pending, idle int64
		for f := int64(0); f+1 < m; f += 2 {
			field, kind, n, err := gr.field(cr)
			if err != nil {
				return err
			}
			switch {
			case string(field) == "name" && kind == '$' && n >= 0:
				keep := min(n, int64(len(name)))
				if _, err := io.ReadFull(cr.r, name[:keep]); err != nil {
					return err
				}
				nameLen = int(keep)
				if err := cr.discard(n - keep); err != nil {
					return err
				}
				if err := crlf(cr); err != nil {
					return err
				}
			case kind == ':' && string(field) == "pending":
				pending = n
			case kind == ':' && string(field) == "idle":
				idle = n
			default:
				if err := cr.skip(kind, n); err != nil {
					return err
				}
			}
		}
		if err := gr.rest(cr, m); err != nil {
			return err
		}
		if pending > 0 && (!found || idle > longest) {
			found, longest, idlest, idlestLen = true, idle, name, nameLen
		}
	}
	if g != nil && found {
		g.IdlePending, g.IdleConsumer, g.HasIdle = time.Duration(longest)*time.Millisecond, string(idlest[:idlestLen]), true
	}
	return nil
}
