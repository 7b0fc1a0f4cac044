package snapshot

import (
	"context"
	"io"
	"os"
	"sync"
	"syscall"
)

// openInput opens a snapshot path ("-" is stdin) for reading that ends when
// ctx does: an input that stalls (a pipe whose writer sends nothing more, a
// FIFO that no writer opens) must not outlive Ctrl-C or --timeout. close
// releases what it holds.
//
// A regular file never blocks for long, so its reads check ctx between
// them. Anything else (stdin, a pipe, a FIFO, a device) is read by a pump
// goroutine into buffers of its own, and Read waits for the pump or ctx,
// whichever comes first. On the end of ctx the pump is left behind: a read
// blocked in the kernel cannot be recalled, but a FIFO (opened by
// os.Open, so through the runtime poller) is closed, which ends it; stdin
// is the process's own and ends with it.
func openInput(ctx context.Context, path string, stdin io.Reader) (r io.Reader, close func(), err error) {
	if path == "-" {
		if stdin == nil {
			return nil, nil, errNoStdin
		}
		p := newPump(ctx, stdin, nil)
		return p, p.close, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if st.Mode().IsRegular() {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		return ctxReader{ctx, f}, func() { f.Close() }, nil
	}
	f, err := openCtx(ctx, path, st.Mode()&os.ModeNamedPipe != 0)
	if err != nil {
		return nil, nil, err
	}
	p := newPump(ctx, f, f)
	return p, p.close, nil
}

// openCtx opens path, which may block (a FIFO waits for a writer), until
// ctx ends. A FIFO open still waiting then is ended by opening the FIFO
// for writing, without blocking, and closing it at once: that is a writer
// which sends nothing, so the waiting open returns and its file, read by no
// one, is closed.
func openCtx(ctx context.Context, path string, fifo bool) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
	}
	if fifo {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
	go func() {
		if o := <-ch; o.f != nil {
			o.f.Close()
		}
	}()
	return nil, ctx.Err()
}

// ctxReader reads r until ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// pump reads src on a goroutine of its own, into two buffers that it hands
// to Read in turn, so that Read can stop waiting when ctx ends. What it
// read is never written into the caller's buffer after Read returned.
type pump struct {
	ctx     context.Context
	out     chan pumped
	free    chan []byte
	done    chan struct{}
	once    sync.Once
	closer  io.Closer
	cur     []byte // what Read has not handed over yet, in last
	last    []byte // the buffer cur is in, given back when it is used up
	err     error  // sticky
	pending error  // the pump's error, once cur is used up
}

type pumped struct {
	b   []byte
	err error
}

const pumpBuffers = 2

func newPump(ctx context.Context, src io.Reader, closer io.Closer) *pump {
	p := &pump{ctx: ctx, out: make(chan pumped), free: make(chan []byte, pumpBuffers), done: make(chan struct{}), closer: closer}
	for range pumpBuffers {
		p.free <- make([]byte, bufSize)
	}
	go p.run(src)
	return p
}

func (p *pump) run(src io.Reader) {
	for {
		var b []byte
		select {
		case b = <-p.free:
		case <-p.done:
			return
		}
		n, err := src.Read(b)
		if n == 0 && err == nil {
			p.free <- b
			b = nil // input.retry bounds the readers that make no progress
		}
		select {
		case p.out <- pumped{b[:n], err}:
		case <-p.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (p *pump) Read(dst []byte) (int, error) {
	if len(p.cur) == 0 {
		if p.err != nil {
			return 0, p.err
		}
		if p.pending != nil {
			p.err = p.pending
			return 0, p.err
		}
		if p.last != nil {
			p.free <- p.last[:cap(p.last)]
			p.last = nil
		}
		select {
		case r := <-p.out:
			p.cur, p.last, p.pending = r.b, r.b, r.err
			if r.b == nil {
				p.last = nil
			}
		case <-p.ctx.Done():
			p.err = p.ctx.Err()
			p.close()
			return 0, p.err
		}
		if len(p.cur) == 0 && p.pending != nil {
			p.err = p.pending
			return 0, p.err
		}
	}
	n := copy(dst, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// close stops the pump; a read it is blocked in ends when the file closes
// (a FIFO), or with the process (stdin).
func (p *pump) close() {
	p.once.Do(func() {
		close(p.done)
		if p.closer != nil {
			p.closer.Close()
		}
	})
}
