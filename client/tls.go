package client

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// CertPool parses a PEM bundle of one or more CA certificates (blocks of
// type CERTIFICATE; anything between blocks is ignored) into a pool. what
// names the source in errors ("ca_certificate", a file path). Errors: no
// CERTIFICATE block, a block of another type, or a certificate that does
// not parse (decision spec/decisions/0008-deployable-host.md).
func CertPool(pemBytes []byte, what string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	for rest := pemBytes; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("takoform: %s holds a PEM block of type %q; give only CA certificates (BEGIN CERTIFICATE)", what, b.Type)
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("takoform: %s: certificate %d does not parse: %w", what, n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("takoform: %s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", what)
	}
	return pool, nil
}

// rootCAs returns the pool Options ask for: nil (the system roots) when
// neither CACertificatePEM nor CACertificateFile is set.
func (o Options) rootCAs() (*x509.CertPool, error) {
	switch {
	case len(o.CACertificatePEM) > 0 && o.CACertificateFile != "":
		return nil, errors.New("takoform: set the CA certificate as PEM or as a file, not both")
	case len(o.CACertificatePEM) > 0:
		return CertPool(o.CACertificatePEM, "the CA certificate")
	case o.CACertificateFile != "":
		data, err := os.ReadFile(o.CACertificateFile)
		if err != nil {
			return nil, fmt.Errorf("takoform: read the CA certificate file: %w", err)
		}
		return CertPool(data, "CA certificate file "+o.CACertificateFile)
	}
	return nil, nil
}

// RootCAs is the pool o trusts for https: nil (the system roots) when
// neither CACertificatePEM nor CACertificateFile is set. Errors as New's
// for a bad CA (both set, unreadable file, no certificate). For a caller
// that makes its own raw requests beside a Client (the conformance
// runner). Decision spec/decisions/0008-deployable-host.md.
func (o Options) RootCAs() (*x509.CertPool, error) { return o.rootCAs() }
