package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/wire"
)

// operatorFlags are the `host serve` flags of the operator layer: logs,
// metrics, limits and timeouts, shutdown, retention and quotas
// (spec/decisions/0010-operator-surface.md, spec/decisions/0009-retention-and-quotas.md).
type operatorFlags struct {
	logFormat, logLevel, metricsListen string
	limits                             host.Limits
	retention                          host.Retention
	quotas                             host.Quotas
	shutdownGrace                      time.Duration
}

func addOperatorFlags(fl *pflag.FlagSet) *operatorFlags {
	o := &operatorFlags{}
	fl.StringVar(&o.logFormat, "log-format", "text", "log format: text or json (one line per request, on stderr)")
	fl.StringVar(&o.logLevel, "log-level", "info", "least severe log level written: debug, info, warn or error")
	fl.StringVar(&o.metricsListen, "metrics-listen", "", "serve /metrics on this address instead of the API listener")
	fl.IntVar(&o.limits.MaxInFlight, "max-in-flight", 512, "API requests answered at once; more are answered rate_limited (429)")
	fl.IntVar(&o.limits.MaxHeaderBytes, "max-header-bytes", 64<<10, "largest request line and headers accepted")
	fl.Float64Var(&o.limits.TenantRate, "tenant-rate", 0, "requests per second each tenant may send (0: no per-tenant limit)")
	fl.IntVar(&o.limits.TenantBurst, "tenant-burst", 0, "requests a tenant may send at once above --tenant-rate (default: the rate, rounded up)")
	fl.DurationVar(&o.limits.ReadHeaderTimeout, "read-header-timeout", 10*time.Second, "longest time to read a request's headers")
	fl.DurationVar(&o.limits.ReadTimeout, "read-timeout", time.Minute, "longest time to read a whole request, body included")
	fl.DurationVar(&o.limits.WriteTimeout, "write-timeout", 0, "longest time to answer a request, from when its headers were read; must exceed --read-timeout plus --sync-budget (default: --read-timeout + --sync-budget + 30s)")
	fl.DurationVar(&o.limits.IdleTimeout, "idle-timeout", 2*time.Minute, "longest time a keep-alive connection waits for its next request")
	fl.DurationVar(&o.limits.BlobTimeout, "blob-timeout", 10*time.Minute, "longest time to read one artifact blob upload (its answer may take as much longer as --write-timeout is than --read-timeout)")
	fl.DurationVar(&o.shutdownGrace, "shutdown-grace", 30*time.Second, "on SIGTERM or SIGINT, how long in-flight requests may take to finish")
	fl.DurationVar(&o.retention.Operations, "retention-operations", 0, "keep terminal operations this long (default and minimum: --idempotency-ttl)")
	fl.DurationVar(&o.retention.Uploads, "retention-uploads", 24*time.Hour, "delete upload sessions started longer ago than this")
	fl.DurationVar(&o.retention.Artifacts, "retention-artifacts", 24*time.Hour, "delete blobs and manifests nothing references after this long")
	fl.DurationVar(&o.retention.Interval, "sweep-interval", time.Minute, "time between retention sweeps")
	fl.Int64Var(&o.quotas.Resources, "quota-resources", 0, "live resources each tenant may hold (0: unlimited)")
	fl.Int64Var(&o.quotas.ArtifactBytes, "quota-artifact-bytes", 0, "artifact blob bytes each tenant may hold (0: unlimited)")
	return o
}

// check refuses flag values the host would misread, naming the flag.
func (o *operatorFlags) check(syncBudget time.Duration) error {
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--read-header-timeout", o.limits.ReadHeaderTimeout}, {"--read-timeout", o.limits.ReadTimeout},
		{"--idle-timeout", o.limits.IdleTimeout}, {"--blob-timeout", o.limits.BlobTimeout},
		{"--shutdown-grace", o.shutdownGrace}, {"--retention-uploads", o.retention.Uploads},
		{"--retention-artifacts", o.retention.Artifacts}, {"--sweep-interval", o.retention.Interval},
	} {
		if d.v <= 0 {
			return usage("%s must be a positive duration, got %s", d.flag, d.v)
		}
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--write-timeout", o.limits.WriteTimeout}, {"--retention-operations", o.retention.Operations}} {
		if d.v < 0 {
			return usage("%s cannot be negative, got %s (0 takes the default)", d.flag, d.v)
		}
	}
	for _, n := range []struct {
		flag string
		v    int64
	}{{"--max-in-flight", int64(o.limits.MaxInFlight)}, {"--max-header-bytes", int64(o.limits.MaxHeaderBytes)}} {
		if n.v <= 0 {
			return usage("%s must be positive, got %d", n.flag, n.v)
		}
	}
	for _, n := range []struct {
		flag string
		v    int64
	}{{"--tenant-burst", int64(o.limits.TenantBurst)}, {"--quota-resources", o.quotas.Resources}, {"--quota-artifact-bytes", o.quotas.ArtifactBytes}} {
		if n.v < 0 {
			return usage("%s cannot be negative, got %d (0 turns it off)", n.flag, n.v)
		}
	}
	if w, r := o.limits.WriteTimeout, o.limits.ReadTimeout; w != 0 && w <= r+syncBudget {
		return usage("--write-timeout %s must exceed --read-timeout %s plus --sync-budget %s (%s), or the answer to a slow body is cut off unsent; raise --write-timeout (or leave it out: it defaults to %s) or lower the others", w, r, syncBudget, r+syncBudget, r+syncBudget+30*time.Second)
	}
	if o.limits.TenantRate < 0 {
		return usage("--tenant-rate cannot be negative, got %g (0 turns it off)", o.limits.TenantRate)
	}
	return nil
}

// logger builds the host's logger on w from --log-format and --log-level.
func (o *operatorFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, usage("--log-level %q is not a level: use debug, info, warn or error", o.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch o.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usage("--log-format %q is not a format: use text or json", o.logFormat)
}

// configure copies the operator settings into the host configuration.
func (o *operatorFlags) configure(c *host.Config) {
	c.Limits, c.Retention, c.Quotas = o.limits, o.retention, o.quotas
	c.MetricsElsewhere = o.metricsListen != ""
}

// laneForms says how many Forms each lane answers ("v1alpha3=13,v1beta1=0"),
// for the start line (spec/lane-v1beta1.md §2.5).
func laneForms(cat *form.Catalog, lanes host.LaneSets) string {
	if lanes == nil {
		var err error
		if lanes, err = host.SplitLanes(cat); err != nil {
			return err.Error()
		}
	}
	out := make([]string, 0, len(wire.Lanes))
	for _, l := range wire.Lanes {
		out = append(out, l.Version()+"="+strconv.Itoa(lanes[l.Name].Len()))
	}
	return strings.Join(out, ",")
}

// families lists the Form groups a catalog installs.
func families(cat *form.Catalog) string {
	seen := map[string]bool{}
	var out []string
	for _, in := range cat.Forms() {
		if g := in.Definition.Ref().APIVersion; !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// run serves hs through serve (the listener, plain or TLS; deploy.go) (and the metrics on --metrics-listen) until ctx ends,
// then drains: /readyz fails at once, in-flight requests get
// --shutdown-grace to finish, and the log says what happened.
func (o *operatorFlags) run(ctx context.Context, srv *host.Server, hs *http.Server, serve func(*http.Server) error, log *slog.Logger) error {
	errc := make(chan error, 2)
	var ms *http.Server
	if o.metricsListen != "" {
		mln, err := net.Listen("tcp", o.metricsListen)
		if err != nil {
			return fmt.Errorf("listen on --metrics-listen %s: %w", o.metricsListen, err)
		}
		ms = &http.Server{Handler: srv.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { errc <- ms.Serve(mln) }()
		log.Info("metrics listening", "listen", mln.Addr().String())
	}
	go func() { errc <- serve(hs) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
	}
	srv.BeginShutdown()
	log.Info("shutting down", "grace", o.shutdownGrace, "inFlight", srv.InFlight())
	shut, cancel := context.WithTimeout(context.Background(), o.shutdownGrace)
	defer cancel()
	err := hs.Shutdown(shut)
	if ms != nil {
		_ = ms.Close()
	}
	if err != nil {
		log.Warn("shutdown grace expired; cutting the remaining requests", "grace", o.shutdownGrace, "inFlight", srv.InFlight())
		_ = hs.Close()
		return nil
	}
	log.Info("stopped", "inFlight", srv.InFlight())
	return nil
}
