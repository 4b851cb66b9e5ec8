package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/store/sqlite"
)

func newHostCommand() *cobra.Command {
	h := &cobra.Command{Use: "host", Short: "Run and administer a Takoform host"}
	h.AddCommand(newHostServeCommand(), &cobra.Command{
		Use:   "token-hash TOKEN",
		Short: "Print the sha256 a tokens file stores for TOKEN",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), host.HashToken(args[0]))
			return nil
		},
	})
	return h
}

type serveFlags struct {
	listen, data, tokens, devToken string
	forms                          []string
	syncBudget, delay, idemTTL     time.Duration
	maxBody                        int64
	probe                          bool
}

func newHostServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the Host API (lane forms.takoform.com/v1alpha3) on an embedded SQLite file",
		Long: "serve answers the Takoform Host API. State lives in one SQLite file (created on first\n" +
			"start, WAL, full fsync). Credentials come from a tokens file:\n" +
			"  {\"tokens\":[{\"sha256\":\"<takoform host token-hash TOKEN>\",\"tenant\":\"acme\",\"principal\":\"ci\"}]}\n" +
			"or, for local development only, --dev-token (tenant and principal \"dev\").",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on")
	fl.StringVar(&f.data, "data", sqlite.DefaultPath(), "SQLite data file")
	fl.StringVar(&f.tokens, "tokens", "", "tokens file (JSON) mapping token hashes to tenant and principal")
	fl.StringVar(&f.devToken, "dev-token", "", "accept this bearer token as tenant \"dev\", principal \"dev\" (development only)")
	fl.StringArrayVar(&f.forms, "forms", nil, "install the Form family in this directory instead of the built-in Edge family; repeat to install several families that do not collide (\""+host.BuiltinFamily+"\" names the built-in one)")
	fl.DurationVar(&f.syncBudget, "sync-budget", 10*time.Second, "longest a mutation may take before it answers 202 with an operation")
	fl.DurationVar(&f.delay, "provisioning-delay", 0, "artificial delay before a mutation commits (above --sync-budget every mutation is asynchronous)")
	fl.DurationVar(&f.idemTTL, "idempotency-ttl", 24*time.Hour, "age after which idempotency records expire")
	fl.Int64Var(&f.maxBody, "max-body-bytes", 8<<20, "largest request body accepted")
	fl.BoolVar(&f.probe, "conformance-probe", false, "enable the test-only Takoform-Conformance-Probe header (loopback listeners only)")
	return cmd
}

func serve(cmd *cobra.Command, f serveFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--sync-budget", f.syncBudget}, {"--idempotency-ttl", f.idemTTL}} {
		if d.v <= 0 {
			return usage("%s must be a positive duration, got %s", d.flag, d.v)
		}
	}
	if f.delay < 0 {
		return usage("--provisioning-delay cannot be negative, got %s", f.delay)
	}
	if f.maxBody <= 0 {
		return usage("--max-body-bytes must be positive, got %d", f.maxBody)
	}
	var tokens []host.Token
	if f.tokens != "" {
		t, err := host.LoadTokens(f.tokens)
		if err != nil {
			return err
		}
		tokens = t
	}
	if f.devToken != "" {
		tokens = append(tokens, host.Token{SHA256: host.HashToken(f.devToken), Tenant: "dev", Principal: "dev"})
	}
	if len(tokens) == 0 {
		if f.tokens != "" {
			return usage("the tokens file %s lists no token; add one ({\"sha256\": \"<takoform host token-hash TOKEN>\", \"tenant\": …, \"principal\": …})", f.tokens)
		}
		return usage("no credentials: pass --tokens FILE (or --dev-token TOKEN for local development)")
	}
	var cat *form.Catalog
	var err error
	if len(f.forms) > 0 {
		cat, err = host.LoadFamilies(host.FamilySources(f.forms, func(dir string) fs.FS { return os.DirFS(dir) }))
	} else {
		cat, err = host.BuiltinCatalog()
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.listen, err)
	}
	defer ln.Close()
	if f.probe && !isLoopback(ln.Addr()) {
		return usage("--conformance-probe is refused: %s is not a loopback address", ln.Addr())
	}
	st, err := sqlite.Open(ctx, f.data, sqlite.Options{})
	if err != nil {
		return fmt.Errorf("open data file %s: %w", f.data, err)
	}
	defer st.Close()
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	srv, err := host.New(ctx, host.Config{
		Store: st, Catalog: cat, Tokens: tokens, Family: host.DefaultFamily(cat), MaxBodyBytes: f.maxBody,
		SyncBudget: f.syncBudget, ProvisioningDelay: f.delay, IdempotencyTTL: f.idemTTL, Probe: f.probe, Logger: logger,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(cmd.OutOrStdout(), "takoform host serving http://%s (data %s, %d forms)\n", ln.Addr(), f.data, cat.Len())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(shut)
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
