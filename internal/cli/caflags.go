package cli

import (
	"github.com/spf13/cobra"

	"github.com/takoform/takoform/client"
)

// caFlags are --ca-certificate (PEM text) and --ca-certificate-file, the
// private CA a command trusts for an https host; bindEnv gives them
// TAKOFORM_CA_CERTIFICATE and TAKOFORM_CA_CERTIFICATE_FILE, the variables
// the provider reads (decision spec/decisions/0008-deployable-host.md).
type caFlags struct{ pem, file string }

func (f *caFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.pem, "ca-certificate", "", "PEM of the CA certificate(s) to trust for an https host instead of the system roots")
	c.Flags().StringVar(&f.file, "ca-certificate-file", "", "file of PEM CA certificate(s) to trust for an https host instead of the system roots")
}

// options sets o's CA fields from the flags (client.New refuses both).
func (f *caFlags) options(o client.Options) client.Options {
	if f.pem != "" {
		o.CACertificatePEM = []byte(f.pem)
	}
	o.CACertificateFile = f.file
	return o
}
