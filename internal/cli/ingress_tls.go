package cli

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/takoform/takoform/host/runtime/devca"
	"github.com/takoform/takoform/host/store/storeurl"
)

// ingressTLS is the ingress's certificates (handbook/workers-observability.md):
// the operator's pair (--ingress-tls-cert/--ingress-tls-key, else the
// control plane's --tls-cert/--tls-key), re-read on SIGHUP, and the
// host's dev CA for localhost names.
type ingressTLS struct {
	certs *certReloader // nil: none
	ca    *devca.CA     // nil: no dev CA
}

// config is the ingress's TLS configuration, nil when it serves none.
func (t *ingressTLS) config() *tls.Config {
	if t == nil || (t.certs == nil && t.ca == nil) {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}, GetCertificate: t.get}
}

// get chooses a certificate by server name: the dev CA's for a localhost
// name, else the operator's; with only the dev CA, any other name gets
// none (the handshake fails).
func (t *ingressTLS) get(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if t.ca != nil && (devca.Covers(hello.ServerName) || t.certs == nil) {
		return t.ca.GetCertificate(hello)
	}
	return t.certs.get(hello)
}

// loadIngressTLS reads the ingress's TLS flags. The dev CA is on by
// default when the ingress listens on loopback with a SQLite data file
// (the embedded default); it lives in --ingress-dev-ca-dir, default
// FILE.devca beside the data file.
func (f *runtimeFlags) loadIngressTLS(addr, data string, d deployFlags, controlPlane *certReloader, log *slog.Logger) (*ingressTLS, error) {
	if (f.ingressCert == "") != (f.ingressKey == "") {
		return nil, usage("--ingress-tls-cert and --ingress-tls-key go together: give both (a PEM certificate chain and its private key) or neither")
	}
	t := &ingressTLS{certs: controlPlane}
	if f.ingressCert != "" {
		if err := checkPrivate(f.ingressKey, "ingress TLS key", d.strictPerms, log); err != nil {
			return nil, err
		}
		t.certs = &certReloader{certFile: f.ingressCert, keyFile: f.ingressKey}
		if err := t.certs.load(); err != nil {
			return nil, err
		}
	}
	kind, path, perr := storeurl.Parse(data)
	sqlite := perr == nil && kind == storeurl.SQLite
	devCA := f.devCA
	if f.fl == nil || !f.fl.Changed("ingress-dev-ca") {
		host, _, err := net.SplitHostPort(addr)
		ip := net.ParseIP(host)
		devCA = err == nil && sqlite && (host == "localhost" || (ip != nil && ip.IsLoopback()))
	}
	if !devCA {
		return t, nil
	}
	dir := f.devCADir
	if dir == "" {
		if !sqlite {
			return nil, usage("--ingress-dev-ca needs --ingress-dev-ca-dir with a PostgreSQL data store (the CA's files live there)")
		}
		dir = path + ".devca"
	}
	ca, created, err := devca.Load(dir)
	if err != nil {
		return nil, err
	}
	if err := checkPrivate(dir+"/"+devca.KeyFile, "dev CA key", d.strictPerms, log); err != nil {
		return nil, err
	}
	t.ca = ca
	log.Info("ingress dev CA for .localhost names", "ca", ca.CertPath, "created", created)
	return t, nil
}

// reload re-reads the operator's pair when it is the ingress's own (the
// control plane's is reloaded with the control plane).
func (t *ingressTLS) reload(controlPlane *certReloader, strict bool, log *slog.Logger) {
	if t == nil || t.certs == nil || t.certs == controlPlane {
		return
	}
	err := checkPrivate(t.certs.keyFile, "ingress TLS key", strict, log)
	if err == nil {
		err = t.certs.load()
	}
	if err != nil {
		log.Error("SIGHUP: the ingress TLS certificate was not reloaded; the previous one keeps serving", "err", err)
		return
	}
	log.Info("SIGHUP: ingress TLS certificate reloaded", "cert", t.certs.certFile)
}

// sniffTimeout bounds the wait for a new connection's first byte.
const sniffTimeout = 10 * time.Second

// splitListener hands each connection of ln to the TLS or the plain
// listener by its first byte (0x16 opens a TLS handshake), so one
// loopback port answers both http:// and https://.
type splitListener struct {
	ln    net.Listener
	tls   *chanListener
	plain *chanListener
}

func newSplitListener(ln net.Listener) *splitListener {
	s := &splitListener{ln: ln, tls: newChanListener(ln), plain: newChanListener(ln)}
	go s.run()
	return s
}

func (s *splitListener) run() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			s.tls.close(err)
			s.plain.close(err)
			return
		}
		go s.dispatch(c)
	}
}

func (s *splitListener) dispatch(c net.Conn) {
	if err := c.SetReadDeadline(time.Now().Add(sniffTimeout)); err != nil {
		c.Close()
		return
	}
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		c.Close()
		return
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		c.Close()
		return
	}
	pc := &peekedConn{Conn: c, r: br}
	if first[0] == 0x16 {
		s.tls.deliver(pc)
	} else {
		s.plain.deliver(pc)
	}
}

// peekedConn reads first what was peeked.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// chanListener is a net.Listener fed connections by splitListener.
type chanListener struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
	err  error
	// parent is the shared listener: closing either server's listener
	// stops accepting on the port (both servers shut down together).
	parent net.Listener
}

func newChanListener(ln net.Listener) *chanListener {
	return &chanListener{addr: ln.Addr(), ch: make(chan net.Conn), done: make(chan struct{}), parent: ln}
}

func (l *chanListener) deliver(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *chanListener) close(err error) {
	l.once.Do(func() {
		l.err = err
		close(l.done)
	})
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, fmt.Errorf("ingress listener closed: %w", l.err)
	}
}

func (l *chanListener) Close() error {
	l.close(net.ErrClosed)
	if err := l.parent.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
func (l *chanListener) Addr() net.Addr { return l.addr }
