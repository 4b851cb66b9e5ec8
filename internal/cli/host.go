package cli

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime/events"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlite"
	"github.com/takoform/takoform/host/store/storeurl"
	"github.com/takoform/takoform/internal/version"
)

// dataLocation resolves --data (set from TAKOFORM_DATA by bindEnv when
// not given): the flag, else the default SQLite file; a location storeurl
// cannot open is a usage error. (The default is resolved here, not in the
// flag, so --help never prints a URL with its password.)
func dataLocation(flag string) (string, error) {
	data := flag
	if data == "" {
		data = sqlite.DefaultPath()
	}
	if _, _, err := storeurl.Parse(data); err != nil {
		return "", usage("--data: %v", err)
	}
	return data, nil
}

// openData opens the store a resolved --data names; errors never show a
// password.
func openData(ctx context.Context, data string) (store.Store, error) {
	return storeurl.Open(ctx, data)
}

func newHostCommand() *cobra.Command {
	h := &cobra.Command{Use: "host", Short: "Run and administer a Takoform host"}
	h.AddCommand(newHostServeCommand(), newHostBackupCommand(), newHostCopyCommand(), newHostSecretsCommand(), &cobra.Command{
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
	deploy                         deployFlags
	op                             *operatorFlags
	rt                             runtimeFlags
}

// ServeGCPercent is the GC percent `host serve` runs with when the operator
// sets no GOGC: fewer collections per request within the host's RSS budget
// (decision spec/decisions/0036-hand-written-grammars.md, section 5).
const ServeGCPercent = 200

// serveGCPercent applies ServeGCPercent unless GOGC is set.
func serveGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(ServeGCPercent)
	}
}

func newHostServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the Host API (lanes forms.takoform.com/v1alpha3 and forms.takoform.com/v1beta1) on SQLite or PostgreSQL",
		Long: "serve answers the Takoform Host API. State lives in one SQLite file (created on first\n" +
			"start, WAL, full fsync) or, with --data postgres://…, in a PostgreSQL database that any\n" +
			"number of replicas share. Credentials come from a tokens file:\n" +
			"  {\"tokens\":[{\"sha256\":\"<takoform host token-hash TOKEN>\",\"tenant\":\"acme\",\"principal\":\"ci\"}]}\n" +
			"or, for local development only, --dev-token (tenant and principal \"dev\").",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on")
	fl.StringVar(&f.data, "data", "", "where state lives: a SQLite file path (or sqlite:///PATH), or postgres://USER:PASSWORD@HOST:PORT/DATABASE shared by replicas (default: the SQLite file "+sqlite.DefaultPath()+")")
	fl.StringVar(&f.tokens, "tokens", "", "tokens file (JSON) mapping token hashes to tenant and principal; re-read on SIGHUP")
	fl.StringVar(&f.devToken, "dev-token", "", "accept this bearer token as tenant \"dev\", principal \"dev\" (development only)")
	fl.StringArrayVar(&f.forms, "forms", nil, "install the Form family in this directory instead of the built-in Edge family; repeat to install several families that do not collide (\""+host.BuiltinFamily+"\" names the built-in one, both editions: \""+host.BuiltinV1alpha1+"\" on lane v1alpha3 and \""+host.BuiltinV1beta1+"\" on lane v1beta1; name one edition to install only it)")
	fl.DurationVar(&f.syncBudget, "sync-budget", 10*time.Second, "longest a mutation may take before it answers 202 with an operation")
	fl.DurationVar(&f.delay, "provisioning-delay", 0, "artificial delay before a mutation commits (above --sync-budget every mutation is asynchronous)")
	fl.DurationVar(&f.idemTTL, "idempotency-ttl", 24*time.Hour, "age after which idempotency records expire")
	fl.Int64Var(&f.maxBody, "max-body-bytes", 8<<20, "largest request body accepted")
	fl.BoolVar(&f.probe, "conformance-probe", false, "enable the test-only Takoform-Conformance-Probe header (loopback listeners only)")
	f.deploy.register(fl)
	f.rt.register(fl)
	f.op = addOperatorFlags(fl)
	return cmd
}

func serve(cmd *cobra.Command, f serveFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serveGCPercent()
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
	if err := f.op.check(f.syncBudget); err != nil {
		return err
	}
	data, err := dataLocation(f.data)
	if err != nil {
		return err
	}
	logger, err := f.op.logger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	tokens, err := credentials(f.tokens, f.devToken, f.deploy.strictPerms, logger)
	if err != nil {
		return err
	}
	var cat *form.Catalog
	var lanes host.LaneSets
	if len(f.forms) > 0 {
		cat, lanes, err = host.LoadFamilies(host.FamilySources(f.forms, func(dir string) fs.FS { return os.DirFS(dir) }))
	} else {
		cat, lanes, err = host.BuiltinFamilies()
	}
	if err != nil {
		return err
	}
	ep, err := openEndpoint(f.listen, f.deploy, f.devToken != "", f.probe, logger)
	if err != nil {
		return err
	}
	defer ep.ln.Close()
	st, err := openData(ctx, data)
	if err != nil {
		return err
	}
	defer st.Close()
	cfg := host.Config{
		Store: st, Catalog: cat, Lanes: lanes, Tokens: tokens, Family: host.DefaultFamily(cat), MaxBodyBytes: f.maxBody,
		SyncBudget: f.syncBudget, ProvisioningDelay: f.delay, IdempotencyTTL: f.idemTTL, Probe: f.probe, Logger: logger,
		PublicURL: ep.publicURL,
	}
	f.op.configure(&cfg)
	testAddr, testHost, err := f.rt.testListener(f.probe)
	if err != nil {
		return err
	}
	loaderAddr, loaderToken, err := f.rt.loaderListener(f.probe)
	if err != nil {
		return err
	}
	evOn, err := f.rt.eventsOn(data)
	if err != nil {
		return err
	}
	if kind, _, _ := storeurl.Parse(data); kind == storeurl.SQLite && f.rt.peerURL != "" {
		logger.Warn("--peer-url has no effect with a SQLite data file: one host serves its SQLite databases itself")
	} else if kind != storeurl.SQLite {
		if f.rt.peer.url, err = peerURL(f.rt.peerURL, ep.ln.Addr(), ep.certs != nil); err != nil {
			return err
		}
		if f.rt.peer.client, err = peerClient(f.deploy.tlsCert); err != nil {
			return err
		}
	}
	rt, closeGateway, notice, err := f.rt.startRuntime(st, data, &cfg, f.deploy.strictPerms, logger)
	if err != nil {
		return err
	}
	defer closeGateway()
	defer rt.Close()
	im := ingress.NewMetrics()
	cfg.Collectors = append(cfg.Collectors, im.Collectors()...)
	if f.rt.bin != "" && !evOn {
		logger.Info("cron triggers and queue consumers are not dispatched by this host (--events off)")
	}
	if f.rt.bin != "" && evOn {
		// Cron triggers and queue consumers (spec/runtime-v1.md §2.5, §2.6).
		em := events.NewMetrics()
		cfg.Collectors = append(cfg.Collectors, em.Collectors()...)
		ev := events.Start(events.Config{Store: st, Runtime: rt, Logger: logger, Metrics: em, Holder: eventsHolder(ep.ln.Addr())})
		defer ev.Close()
		if f.rt.gateway != nil {
			f.rt.gateway.OnQueueSend(ev.Wake)
			defer f.rt.gateway.OnQueueSend(nil)
		}
	}
	srv, err := host.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	hs := srv.HTTPServer()
	if f.rt.gateway != nil {
		// Other replicas forward SQLiteDatabase calls here (repo decision 0063).
		hs.Handler = peerRoutes(f.rt.gateway.PeerHandler(), hs.Handler)
	}
	ingressAddr := f.rt.ingressAddr(data)
	var itls *ingressTLS
	if ingressAddr != "" {
		if itls, err = f.rt.loadIngressTLS(ingressAddr, data, f.deploy, ep.certs, logger); err != nil {
			return err
		}
	}
	reloadOnHUP(ctx, srv, ep, f, logger, func() { itls.reload(ep.certs, f.deploy.strictPerms, logger) })
	fmt.Fprintf(cmd.OutOrStdout(), "takoform host serving %s (listen %s, data %s, %d forms)\n", ep.url, ep.ln.Addr(), storeurl.Redact(data), cat.Len())
	if notice != "" {
		fmt.Fprintln(cmd.OutOrStdout(), notice)
	}
	if itls != nil && itls.ca != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "ingress dev CA: %s (curl --cacert %s https://ep-….workers.takoform.localhost:PORT/)\n", itls.ca.CertPath, itls.ca.CertPath)
	}
	defer serveIngress(ctx, ingressAddr, rt, im, itls.config(), cmd.OutOrStdout(), logger)()
	if testAddr != "" {
		stopTest, err := serveTestListener(ctx, testAddr, testHost, rt, im, cmd.OutOrStdout(), logger)
		if err != nil {
			return err
		}
		defer stopTest()
	}
	if loaderAddr != "" {
		stopLoader, err := serveLoader(ctx, loaderAddr, f.rt.bin, loaderToken, cmd.OutOrStdout(), logger)
		if err != nil {
			return err
		}
		defer stopLoader()
	}
	logger.Info("takoform host started", "version", version.String(), "listen", ep.ln.Addr().String(), "url", ep.url, "store", storeLabel(data), "families", families(cat), "forms", cat.Len(), "lanes", laneForms(cat, lanes))
	return f.op.run(ctx, srv, hs, ep.serve, logger)
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// storeLabel names the store a resolved --data opens for the start log
// line: "sqlite:PATH" or the PostgreSQL URL with its password redacted.
func storeLabel(data string) string {
	if kind, path, err := storeurl.Parse(data); err == nil && kind == storeurl.SQLite {
		return "sqlite:" + path
	}
	return storeurl.Redact(data)
}
