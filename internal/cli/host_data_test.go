package cli

import (
	"strings"
	"testing"
)

// TestDataLocationRefusesMistypedPostgres: serve's --data (and backup's)
// refuses a PostgreSQL location that is not a URL as a usage error, never
// showing its password, instead of taking it for a SQLite file name.
func TestDataLocationRefusesMistypedPostgres(t *testing.T) {
	for _, in := range []string{"postgres//u:Sekrit@h/db", "host=127.0.0.1 password=Sekrit dbname=x"} {
		_, err := dataLocation(in)
		if err == nil || !isUsage(err) {
			t.Errorf("dataLocation(%q) = %v, want a usage error", in, err)
			continue
		}
		if strings.Contains(err.Error(), "Sekrit") {
			t.Errorf("dataLocation(%q) error %q shows the password", in, err)
		}
	}
}
