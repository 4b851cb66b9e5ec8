package provider

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/takoform/takoform/client"
)

// caCertificate returns the PEM CA bundle the configuration asks the
// client to trust (nil: the system roots), from ca_certificate (or
// TAKOFORM_CA_CERTIFICATE) or the file ca_certificate_file (or
// TAKOFORM_CA_CERTIFICATE_FILE). Errors name the attribute: both set, an
// unreadable file, no or an unparsable certificate (decision
// spec/decisions/0008-deployable-host.md).
func caCertificate(pemText, file string) ([]byte, error) {
	switch {
	case pemText != "" && file != "":
		return nil, errors.New("both ca_certificate (or TAKOFORM_CA_CERTIFICATE) and ca_certificate_file (or TAKOFORM_CA_CERTIFICATE_FILE) are set; keep one")
	case pemText != "":
		if _, err := client.CertPool([]byte(pemText), "ca_certificate (or TAKOFORM_CA_CERTIFICATE)"); err != nil {
			return nil, err
		}
		return []byte(pemText), nil
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("ca_certificate_file (or TAKOFORM_CA_CERTIFICATE_FILE): %w", err)
		}
		if _, err := client.CertPool(data, "ca_certificate_file (or TAKOFORM_CA_CERTIFICATE_FILE) "+file); err != nil {
			return nil, err
		}
		return data, nil
	}
	return nil, nil
}

// negotiationCode is the diagnostic code of a failed negotiation: an https
// certificate the client does not trust gets its own repair.
func negotiationCode(err error) Code {
	var unknown x509.UnknownAuthorityError
	var name x509.HostnameError
	var invalid x509.CertificateInvalidError
	if errors.As(err, &unknown) || errors.As(err, &name) || errors.As(err, &invalid) {
		return CodeTLSUntrusted
	}
	return CodeLaneUnavailable
}
