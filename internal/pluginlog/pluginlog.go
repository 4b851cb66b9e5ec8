// Package pluginlog sets a provider process's SDK log levels before it
// serves (decision spec/decisions/0019-performance-budget.md).
package pluginlog

import (
	"os"
	"strings"
)

// quieted are the levels the plugin SDKs read at start (terraform-plugin-go:
// TF_LOG_SDK, TF_LOG_SDK_PROTO and TF_LOG_PROVIDER; the framework:
// TF_LOG_SDK_FRAMEWORK). Unset, each defaults to TRACE: every RPC and every
// schema attribute is formatted as a JSON log line on stderr.
var quieted = []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER"}

// Quiet turns the SDK logs off when the CLI will discard them: when no
// TF_LOG* variable is set in the environment the CLI passes to its
// providers, OpenTofu and Terraform do not keep provider log lines, so
// formatting them is wasted work (repo decision 0019: about a fifth of
// the provider's CPU in a 500-resource plan). Any TF_LOG* variable (TF_LOG,
// TF_LOG_PROVIDER, TF_LOG_PATH, TF_LOG_SDK_…) leaves every level as the
// SDKs choose, so `TF_LOG=trace tofu plan` logs exactly as before.
func Quiet() {
	for _, k := range Defaults(os.Environ()) {
		os.Setenv(k, "off")
	}
}

// Defaults returns the variables Quiet sets to "off" for environ
// (KEY=VALUE entries): all of quieted when no TF_LOG* entry has a
// non-empty value, else none.
func Defaults(environ []string) []string {
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TF_LOG") && v != "" {
			return nil
		}
	}
	return quieted
}
