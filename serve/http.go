package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/exporter-toolkit/web"
)

// Handler serves /metrics (text or OpenMetrics, as the scrape's Accept
// header asks), /report (the last complete audit in HTML), /report.json
// (the same as keyreg audit --format json writes it, which keyreg report
// merge reads), /healthz (the process is up) and /readyz (a complete
// audit has been published).
func (e *Exporter) Handler() http.Handler {
	// reg is what changes between audits (their status, the registry's,
	// the runtime's), gathered by every scrape; the audits' figures are
	// encoded once per audit (e.expo).
	reg := prometheus.NewRegistry()
	for _, t := range e.targets {
		r := prometheus.Registerer(reg)
		if t.Name != "" {
			r = prometheus.WrapRegistererWith(prometheus.Labels{"target": label(t.Name)}, reg)
		}
		r.MustRegister(collector{e, t})
	}
	reg.MustRegister(registryCollector{e},
		// Without the MemStats metrics, whose counter go_memstats_alloc_bytes_total
		// and gauge go_memstats_alloc_bytes are one family name twice in
		// OpenMetrics: the same figures come from runtime/metrics.
		collectors.NewGoCollector(collectors.WithGoCollectorMemStatsMetricsDisabled(),
			collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsGC, collectors.MetricsMemory, collectors.MetricsScheduler)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) { e.serveMetrics(w, r, reg) })
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, r *http.Request) {
		e.serveReport(w, r, "text/html; charset=utf-8", func(p *published) []byte { return p.html })
	})
	mux.HandleFunc("GET /report.json", func(w http.ResponseWriter, r *http.Request) {
		e.serveReport(w, r, "application/json", func(p *published) []byte { return p.json })
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !e.Ready() {
			http.Error(w, "no complete audit yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>keyreg serve</title><h1>keyreg serve</h1><ul><li><a href="metrics">metrics</a><li><a href="report">report</a><li><a href="report.json">report.json</a><li><a href="healthz">healthz</a><li><a href="readyz">readyz</a></ul>`))
	})
	return mux
}

// exposition is every target's last complete audit for /metrics: encoded
// once per audit in the two text formats, which a scrape writes as they
// are, and gathered for the protobuf formats, encoded per scrape. A scrape
// of a large registry (1,000 families: 10,000 series) then costs a copy,
// not the encoding of every series (docs/benchmarks.md).
type exposition struct {
	families []*dto.MetricFamily
	text, om []byte
}

// publishTo makes p t's last complete audit and ch its last channel
// read's metrics (nil: either stays as it is; ch empty: no channel series)
// and re-encodes the exposition with them and the other targets' last
// audits, each under its target label. On an error (a series twice: a
// bug) nothing changes.
func (e *Exporter) publishTo(t *target, p *published, ch *snapshot) error {
	e.expoMu.Lock()
	defer e.expoMu.Unlock()
	reg := prometheus.NewRegistry()
	for _, tg := range e.targets {
		last, chl := tg.last.Load(), tg.chLast.Load()
		if tg == t && p != nil {
			last = p
		}
		if tg == t && ch != nil {
			chl = ch
		}
		r := prometheus.Registerer(reg)
		if tg.Name != "" {
			r = prometheus.WrapRegistererWith(prometheus.Labels{"target": label(tg.Name)}, reg)
		}
		if last != nil {
			if err := r.Register(snapshotCollector{last.metrics}); err != nil {
				return err
			}
		}
		if chl != nil && len(chl.metrics) > 0 {
			if err := r.Register(snapshotCollector{chl}); err != nil {
				return err
			}
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	x := &exposition{families: mfs}
	var b bytes.Buffer
	for _, f := range [...]struct {
		format expfmt.FormatType
		out    *[]byte
	}{{expfmt.TypeTextPlain, &x.text}, {expfmt.TypeOpenMetrics, &x.om}} {
		b.Reset()
		enc := expfmt.NewEncoder(&b, expfmt.NewFormat(f.format))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				return err
			}
		}
		// No Close: OpenMetrics' "# EOF" ends the whole exposition.
		*f.out = bytes.Clone(b.Bytes())
	}
	if p != nil {
		t.last.Store(p)
	}
	switch {
	case ch == nil:
	case len(ch.metrics) == 0:
		t.chLast.Store(nil)
	default:
		t.chLast.Store(ch)
	}
	e.expo.Store(x)
	return nil
}

// serveMetrics writes the exposition in the format the Accept header
// negotiates (client_golang's negotiation: text, OpenMetrics or protobuf),
// gzipped when the scraper accepts it: the audits' figures as encoded at
// their audit, then what dyn gathers now. The two have no family in common.
func (e *Exporter) serveMetrics(w http.ResponseWriter, r *http.Request, dyn prometheus.Gatherer) {
	mfs, err := dyn.Gather()
	if err != nil {
		// A collector error is a bug of ours: serve what there is, and say so in the log.
		e.log.Error("gathering metrics", "err", err)
	}
	x := e.expo.Load()
	format := expfmt.NegotiateIncludingOpenMetrics(r.Header)
	var pre []byte
	switch format.FormatType() {
	case expfmt.TypeTextPlain:
		pre = x.text
	case expfmt.TypeOpenMetrics:
		pre = x.om
	default:
		mfs = append(slices.Clone(x.families), mfs...)
		slices.SortFunc(mfs, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	}
	w.Header().Set("Content-Type", string(format))
	var out io.Writer = w
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzipPool.Get().(*gzip.Writer)
		gz.Reset(w)
		defer func() {
			_ = gz.Close()
			gzipPool.Put(gz)
		}()
		out = gz
	}
	if _, err := out.Write(pre); err != nil {
		return // the scraper went away
	}
	enc := expfmt.NewEncoder(out, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			e.log.Error("encoding metrics", "family", mf.GetName(), "err", err)
			return
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		_ = c.Close() // OpenMetrics' "# EOF"
	}
}

var gzipPool = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// acceptsGzip says whether an Accept-Encoding header accepts gzip (by
// name or as *, with a q above 0).
func acceptsGzip(h string) bool {
	for part := range strings.SplitSeq(h, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.TrimSpace(name)
		if name != "gzip" && name != "*" {
			continue
		}
		q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !ok {
			return true
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(q), 64)
		return err == nil && v > 0
	}
	return false
}

// serveReport writes the last complete audit's document of the target the
// request names (?target=, when there are several), or 503 before the
// first.
func (e *Exporter) serveReport(w http.ResponseWriter, r *http.Request, ctype string, doc func(*published) []byte) {
	t := e.targets[0]
	if len(e.targets) > 1 {
		name := r.URL.Query().Get("target")
		i := slices.IndexFunc(e.targets, func(t *target) bool { return t.Name == name })
		if i < 0 {
			names := make([]string, len(e.targets))
			for i, t := range e.targets {
				names[i] = strconv.Quote(t.Name)
			}
			http.Error(w, "name the target: ?target= one of "+strings.Join(names, ", "), http.StatusBadRequest)
			return
		}
		t = e.targets[i]
	}
	p := t.last.Load()
	if p == nil {
		http.Error(w, "no complete audit yet", http.StatusServiceUnavailable)
		return
	}
	b := doc(p)
	if b == nil {
		http.Error(w, "not rendered", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Last-Modified", p.end.UTC().Format(http.TimeFormat))
	_, _ = w.Write(b)
}

// Serve serves h on l until ctx ends, with TLS and basic auth as the
// exporter-toolkit web configuration file webConfig says ("" for plain
// HTTP), then shuts the server down, giving requests in flight a few
// seconds.
func Serve(ctx context.Context, l net.Listener, h http.Handler, webConfig string, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	done := make(chan error, 1)
	go func() {
		done <- web.Serve(l, srv, &web.FlagConfig{WebConfigFile: &webConfig}, log)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// ValidateWebConfig checks a web configuration file before anything
// starts, so that a bad one is a usage error.
func ValidateWebConfig(path string) error {
	if path == "" {
		return nil
	}
	return web.Validate(path)
}
