package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host"
)

// deployFlags are host serve's deployment flags: TLS, the public origin and
// file-permission strictness (decision spec/decisions/0008-deployable-host.md).
type deployFlags struct {
	tlsCert, tlsKey, publicURL string
	strictPerms                bool
}

func (d *deployFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&d.tlsCert, "tls-cert", "", "serve TLS (1.2 or later) with this PEM certificate chain; re-read on SIGHUP")
	fl.StringVar(&d.tlsKey, "tls-key", "", "the PEM private key of --tls-cert; re-read on SIGHUP")
	fl.StringVar(&d.publicURL, "public-url", "", "the origin clients use (https://host.example[:port]), advertised by discovery; for a host behind a TLS-terminating proxy")
	fl.BoolVar(&d.strictPerms, "strict-permissions", false, "refuse to start (or reload) with a tokens file or TLS key readable by group or others, instead of warning")
}

// endpoint is the listener host serve answers on.
type endpoint struct {
	ln        net.Listener
	url       string        // what the first output line prints
	publicURL string        // canonical --public-url, or ""
	certs     *certReloader // nil without TLS
	log       *slog.Logger
}

// openEndpoint checks the deployment flags, listens on addr and applies the
// start refusals that depend on the listener: --dev-token and
// --conformance-probe need a loopback listener; plain http off loopback
// needs --public-url https://… (a TLS-terminating proxy in front), which
// it then warns about on log. Errors are usage errors saying what to change.
func openEndpoint(addr string, d deployFlags, devToken, probe bool, log *slog.Logger) (*endpoint, error) {
	if (d.tlsCert == "") != (d.tlsKey == "") {
		return nil, usage("--tls-cert and --tls-key go together: give both (a PEM certificate chain and its private key) or neither")
	}
	e := &endpoint{log: log}
	if d.publicURL != "" {
		u, err := client.ParseEndpoint(d.publicURL)
		if err != nil {
			return nil, usage("--public-url: %v", strings.TrimPrefix(err.Error(), "takoform: "))
		}
		e.publicURL = u
	}
	if d.tlsCert != "" {
		if err := checkPrivate(d.tlsKey, "TLS key", d.strictPerms, log); err != nil {
			return nil, err
		}
		e.certs = &certReloader{certFile: d.tlsCert, keyFile: d.tlsKey}
		if err := e.certs.load(); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	e.ln = ln
	loop := isLoopback(ln.Addr())
	refuse := func(format string, args ...any) (*endpoint, error) {
		ln.Close()
		return nil, usage(format, args...)
	}
	switch {
	case devToken && !loop:
		return refuse("--dev-token is refused: %s is not a loopback address; listen on 127.0.0.1 or ::1, or drop --dev-token and give real credentials with --tokens FILE", ln.Addr())
	case probe && !loop:
		return refuse("--conformance-probe is refused: %s is not a loopback address", ln.Addr())
	case e.certs == nil && !loop && !strings.HasPrefix(e.publicURL, "https://"):
		return refuse("plain http on %s (not a loopback address) is refused: serve TLS with --tls-cert and --tls-key, or, behind a TLS-terminating proxy, set --public-url https://<the proxy's origin>", ln.Addr())
	case e.certs == nil && !loop:
		log.Warn("serving plain http on a non-loopback listener; only the TLS-terminating proxy at --public-url may reach it", "listen", ln.Addr().String(), "public_url", e.publicURL)
	}
	scheme := "http"
	if e.certs != nil {
		scheme = "https"
	}
	e.url = scheme + "://" + ln.Addr().String()
	if e.publicURL != "" {
		e.url = e.publicURL
	}
	return e, nil
}

// serve answers hs on the endpoint (TLS when configured, HTTP/2 offered)
// until hs shuts down.
func (e *endpoint) serve(hs *http.Server) error {
	if hs.ErrorLog == nil { // TLS handshake failures and the like, in the host's log
		hs.ErrorLog = slog.NewLogLogger(e.log.Handler(), slog.LevelWarn)
	}
	if e.certs == nil {
		return hs.Serve(e.ln)
	}
	hs.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: e.certs.get}
	return hs.ServeTLS(e.ln, "", "")
}

// certReloader holds the serving certificate; load replaces it.
type certReloader struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

// load reads the pair; on error the previous pair stays in use.
func (c *certReloader) load() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("load TLS certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	c.cur.Store(&cert)
	return nil
}

func (c *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cur.Load(), nil }

// checkPrivate warns, or with strict refuses, when the file at path is
// readable (or writable) by group or others.
func checkPrivate(path, what string, strict bool, log *slog.Logger) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	m := fi.Mode().Perm()
	if m&0o077 == 0 {
		return nil
	}
	if strict {
		return usage("the %s %s has mode %04o, open to group or others; run chmod 600 %s (or drop --strict-permissions)", what, path, m, path)
	}
	log.Warn(fmt.Sprintf("the %s is open to group or others; run chmod 600 on it (--strict-permissions refuses this)", what), "file", path, "mode", fmt.Sprintf("%04o", m))
	return nil
}

// credentials reads --tokens (after checkPrivate) and adds --dev-token.
func credentials(tokensFile, devToken string, strict bool, log *slog.Logger) ([]host.Token, error) {
	var tokens []host.Token
	if tokensFile != "" {
		if err := checkPrivate(tokensFile, "tokens file", strict, log); err != nil {
			return nil, err
		}
		t, err := host.LoadTokens(tokensFile)
		if err != nil {
			return nil, err
		}
		tokens = t
	}
	if devToken != "" {
		tokens = append(tokens, host.Token{SHA256: host.HashToken(devToken), Tenant: "dev", Principal: "dev"})
	}
	if len(tokens) == 0 {
		if tokensFile != "" {
			return nil, usage("the tokens file %s lists no token; add one ({\"sha256\": \"<takoform host token-hash TOKEN>\", \"tenant\": …, \"principal\": …})", tokensFile)
		}
		return nil, usage("no credentials: pass --tokens FILE (or --dev-token TOKEN for local development)")
	}
	return tokens, nil
}

// reloadOnHUP re-reads the tokens file and the TLS pair on every SIGHUP
// until ctx ends. A reload that fails is logged and changes nothing: the
// previous tokens and certificate keep serving.
func reloadOnHUP(ctx context.Context, srv *host.Server, e *endpoint, f serveFlags, log *slog.Logger, more ...func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			if f.tokens != "" {
				if t, err := credentials(f.tokens, f.devToken, f.deploy.strictPerms, log); err != nil {
					log.Error("SIGHUP: the tokens file was not reloaded; the previous tokens stay in force", "err", err)
				} else {
					srv.SetTokens(t)
					log.Info("SIGHUP: tokens file reloaded", "file", f.tokens, "tokens", len(t))
				}
			}
			if e.certs != nil {
				err := checkPrivate(e.certs.keyFile, "TLS key", f.deploy.strictPerms, log)
				if err == nil {
					err = e.certs.load()
				}
				if err != nil {
					log.Error("SIGHUP: the TLS certificate was not reloaded; the previous one keeps serving", "err", err)
				} else {
					log.Info("SIGHUP: TLS certificate reloaded", "cert", e.certs.certFile)
				}
			}
			for _, reload := range more {
				reload()
			}
		}
	}()
}
