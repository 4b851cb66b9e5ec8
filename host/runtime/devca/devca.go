// Package devca is the host's development certificate authority for the
// ingress (spec/runtime-v1.md §10.1): made once in a directory (its key
// 0600), constrained to localhost names, it issues a leaf certificate per
// TLS server name under .localhost on demand, so the published
// https://ep-….workers.takoform.localhost/ URL answers curl --cacert on a
// developer's machine. It never issues for any other name.
package devca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// File names in the CA's directory.
const (
	CertFile = "ingress-dev-ca.pem"     // what a client trusts (0644)
	KeyFile  = "ingress-dev-ca-key.pem" // PKCS#8, 0600
)

// Validity of the CA and of each leaf it issues.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 90 * 24 * time.Hour
	// leafRenew: a cached leaf this close to expiry is issued anew.
	leafRenew = 7 * 24 * time.Hour
	// maxLeaves bounds the leaf cache (names are chosen by clients).
	maxLeaves = 4096
)

// CA is a loaded dev CA.
type CA struct {
	// CertPath is the CA certificate's file: curl --cacert CertPath.
	CertPath string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	leafKey  *ecdsa.PrivateKey // one key for every leaf of this process

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// Load reads the CA in dir, creating dir (0700) and the CA on first use;
// created reports a new CA. A CA whose files are unreadable, mismatched
// or expired is an error naming the files to remove.
func Load(dir string) (ca *CA, created bool, err error) {
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	switch {
	case errors.Is(cerr, fs.ErrNotExist) && errors.Is(kerr, fs.ErrNotExist):
		certPEM, keyPEM, err = create(dir, certPath, keyPath)
		if err != nil {
			return nil, false, err
		}
		created = true
	case cerr != nil:
		return nil, false, fmt.Errorf("dev CA: %w (remove %s and %s to make a new CA)", cerr, certPath, keyPath)
	case kerr != nil:
		return nil, false, fmt.Errorf("dev CA: %w (remove %s and %s to make a new CA)", kerr, certPath, keyPath)
	}
	ca, err = parse(certPEM, keyPEM)
	if err != nil {
		return nil, false, fmt.Errorf("dev CA %s: %w (remove %s and %s to make a new CA)", certPath, err, certPath, keyPath)
	}
	if time.Now().After(ca.cert.NotAfter) {
		return nil, false, fmt.Errorf("dev CA %s expired on %s (remove %s and %s to make a new CA)", certPath, ca.cert.NotAfter.Format(time.DateOnly), certPath, keyPath)
	}
	ca.CertPath = certPath
	return ca, created, nil
}

// create makes a new CA's files: the key first (0600, never replaced),
// then the certificate.
func create(dir, certPath, keyPath string) ([]byte, []byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("dev CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown host"
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "Takoform host dev CA (" + host + ")", Organization: []string{"Takoform development"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(caValidity),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		// Only localhost names, ever: a leaked key cannot vouch for a real site.
		PermittedDNSDomainsCritical: true, PermittedDNSDomains: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	k8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k8})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writeNew(keyPath, keyPEM, 0o600); err != nil {
		return nil, nil, err
	}
	if err := writeNew(certPath, certPEM, 0o644); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("dev CA: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("dev CA: %w", err)
	}
	return nil
}

func parse(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok || !key.PublicKey.Equal(cert.PublicKey) {
		return nil, errors.New("the key does not match the certificate")
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, leafKey: leafKey, leaves: map[string]*tls.Certificate{}}, nil
}

// Covers reports whether the CA issues for a server name: localhost and
// names under .localhost.
func Covers(name string) bool {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	return name == "localhost" || (strings.HasSuffix(name, ".localhost") && len(name) > len(".localhost"))
}

// ErrNotCovered is GetCertificate's error for a name outside .localhost.
var ErrNotCovered = errors.New("the host's dev CA issues certificates for localhost names only")

// GetCertificate is a tls.Config.GetCertificate: the leaf for the
// ClientHello's server name, issued on first use and cached; a name
// outside .localhost (or none) is ErrNotCovered.
func (c *CA) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := strings.TrimSuffix(strings.ToLower(hello.ServerName), ".")
	if !Covers(name) {
		return nil, fmt.Errorf("%w: %q", ErrNotCovered, hello.ServerName)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.leaves[name]; l != nil && time.Until(l.Leaf.NotAfter) > leafRenew {
		return l, nil
	}
	l, err := c.issue(name)
	if err != nil {
		return nil, err
	}
	if len(c.leaves) >= maxLeaves {
		clear(c.leaves)
	}
	c.leaves[name] = l
	return l, nil
}

// issue signs a leaf for name.
func (c *CA) issue(name string) (*tls.Certificate, error) {
	notAfter := time.Now().Add(leafValidity)
	if notAfter.After(c.cert.NotAfter) {
		notAfter = c.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &c.leafKey.PublicKey, c.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der, c.cert.Raw}, PrivateKey: c.leafKey, Leaf: leaf}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand never fails
	}
	return n
}
