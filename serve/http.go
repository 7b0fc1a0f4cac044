package serve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
)

// Handler serves /metrics (text or OpenMetrics, as the scrape's Accept
// header asks), /report (the last complete audit in HTML), /report.json
// (the same as keyreg audit --format json writes it, which keyreg report
// merge reads), /healthz (the process is up) and /readyz (a complete
// audit has been published).
func (e *Exporter) Handler() http.Handler {
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
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		// A collector error is a bug of ours: serve what there is, and say so in the log.
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slog.NewLogLogger(e.log.Handler(), slog.LevelError),
	}))
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
