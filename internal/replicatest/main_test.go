package replicatest_test

import (
	"os"
	"testing"

	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/internal/replicatest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	replicatest.Cleanup()
	os.Exit(code)
}

// cluster starts n replicas on a fresh PostgreSQL database (skipping
// without one). REPLICATEST_SQLITE=1 runs the harness on one SQLite
// replica instead, to debug a test without PostgreSQL; it proves nothing
// about replicas.
func cluster(t testing.TB, n int, o replicatest.Options) *replicatest.Cluster {
	t.Helper()
	o.Replicas = n
	if os.Getenv("REPLICATEST_SQLITE") == "1" {
		o.Replicas = 1
		o.Data = t.TempDir() + "/host.db"
	} else {
		o.Data = pgtest.URL(t)
	}
	return replicatest.Start(t, o)
}
