package host_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/takoform/takoform/host"
)

var tokenHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// FuzzTokensFile: no tokens file makes LoadTokens panic; an accepted one
// holds only entries with a 64-hex-digit lowercase hash (not the empty
// token's), a tenant and a principal, and no hash twice.
func FuzzTokensFile(f *testing.F) {
	f.Add([]byte(`{"tokens":[{"sha256":"` + host.HashToken("t") + `","tenant":"acme","principal":"ci"}]}`))
	f.Add([]byte(`{"tokens":[]}`))
	f.Add([]byte(`{"tokens":[{"sha256":"AB","tenant":"","principal":"x"}],"extra":1}`))
	f.Add([]byte(`{"tokens":null}`))
	f.Add([]byte(`[]`))
	path := filepath.Join(f.TempDir(), "tokens.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		tokens, err := host.LoadTokens(path)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, tk := range tokens {
			if !tokenHash.MatchString(tk.SHA256) || tk.SHA256 == host.HashToken("") || tk.Tenant == "" || tk.Principal == "" || seen[tk.SHA256] {
				t.Fatalf("accepted entry %+v of %q", tk, data)
			}
			seen[tk.SHA256] = true
		}
	})
}
