package cli

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/takoform/takoform/host/runtime/gateway"
)

// The replicas of a host on PostgreSQL forward each SQLiteDatabase call
// to the replica that owns the database, at that replica's --peer-url
// (repo decision 0063).

// peerURL is the base URL the other replicas reach this one's API
// listener at: --peer-url, else the listener's own address (this
// machine's host name when it listens on every address), with the API's
// scheme.
func peerURL(flag string, addr net.Addr, tlsOn bool) (string, error) {
	if flag != "" {
		u, err := url.Parse(flag)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return "", usage("--peer-url takes the scheme, host and port the other replicas reach this one's API at, like https://replica-1.internal:8080, not %q", flag)
		}
		if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
			return "", usage("--peer-url %s names every address, which another replica cannot dial: give this replica's address or host name", flag)
		}
		return u.Scheme + "://" + u.Host, nil
	}
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return "", usage("--peer-url is needed: the API listens on %s, which names no TCP address", addr)
	}
	host := ta.IP.String()
	if ta.IP.IsUnspecified() {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return "", usage("--peer-url is needed: the API listens on every address and this machine's host name is unknown (%v)", err)
		}
		host = h
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(ta.Port)), nil
}

// peerClient makes the calls forwarded to other replicas. With TLS it
// trusts the system's roots (SSL_CERT_FILE and SSL_CERT_DIR add to them)
// and every certificate of --tls-cert's chain, so replicas sharing one
// certificate, or certificates of one CA whose chain the file holds,
// reach each other with no further setting.
func peerClient(certFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 3 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if certFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		b, err := os.ReadFile(certFile)
		if err != nil {
			return nil, usage("--tls-cert: %v", err)
		}
		for rest := b; ; {
			var blk *pem.Block
			if blk, rest = pem.Decode(rest); blk == nil {
				break
			}
			if blk.Type != "CERTIFICATE" {
				continue
			}
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return nil, usage("--tls-cert %s: %v", certFile, err)
			}
			pool.AddCert(c)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}, nil
}

// peerRoutes serves the peer routes (gateway.PeerPathPrefix) before api.
func peerRoutes(peer, api http.Handler) http.Handler {
	if peer == nil {
		return api
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, gateway.PeerPathPrefix) {
			peer.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
