package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecoverRefusesWhatIsNotAPlan: recover names what is missing or
// wrong before it asks any host (its end-to-end test is
// internal/provider TestAccRecoverAfterKilledApply).
func TestRecoverRefusesWhatIsNotAPlan(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	os.WriteFile(state, []byte(`{"format_version":"1.0","values":{"root_module":{}}}`), 0o644)
	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte(`not json`), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"recover"}, 2, "recover needs --plan"},
		{[]string{"recover", "--plan", garbage, "--endpoint", "http://127.0.0.1:1"}, 1, "is not the JSON of a plan"},
		{[]string{"recover", "--plan", state, "--endpoint", "http://127.0.0.1:1"}, 1, "holds no planned changes"},
	} {
		code, out, errOut := run(c.args...)
		if code != c.code || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, out %q, err %q; want exit %d and %q", c.args, code, out, errOut, c.code, c.want)
		}
	}
}
