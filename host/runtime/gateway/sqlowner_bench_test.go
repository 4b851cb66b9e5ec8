package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// BenchmarkSQLOnReplicas: one edge.sql insert and one point read per op,
// on a database two replicas on PostgreSQL share (repo decision 0063) —
// called through the owner and through the other replica, which
// forwards — beside the floor of the same calls on a host with a SQLite
// data file, where the database is a file and nothing is stored
// elsewhere. Run by `make bench`.
func BenchmarkSQLOnReplicas(b *testing.B) {
	url := pgtest.URL(b)
	a, o := pgOwnerReplicaLease(b, url, store.SQLOwnerLease), pgOwnerReplicaLease(b, url, store.SQLOwnerLease)
	if err := a.st.Update(context.Background(), func(tx store.Tx) error {
		return tx.CreateResource(resource("acme", gateway.KindSQL, "db", "uid-sql"))
	}); err != nil {
		b.Fatal(err)
	}
	file := newFixture(b)
	for _, c := range []struct {
		name string
		f    *fixture
	}{{"floor_sqlite_file", file}, {"owner", a.fixture}, {"forwarded", o.fixture}} {
		callB(b, c.f, "execute", "CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT)")
		b.Run(c.name+"/insert", func(b *testing.B) {
			for b.Loop() {
				callB(b, c.f, "execute", "INSERT INTO kv VALUES (?1, 'value')", tagged("text", fmt.Sprint(c.name, benchKey.Add(1))))
			}
		})
		b.Run(c.name+"/read", func(b *testing.B) {
			for b.Loop() {
				callB(b, c.f, "query", "SELECT v FROM kv WHERE k = ?1", tagged("text", c.name+"1"))
			}
		})
	}
}

// benchKey numbers the inserted keys across -count runs.
var benchKey atomic.Int64

func callB(b *testing.B, f *fixture, op, text string, params ...any) {
	b.Helper()
	body, err := json.Marshal(map[string]any{"sql": text, "params": params})
	if err != nil {
		b.Fatal(err)
	}
	if a := f.do(b, "POST", "/sql/v1/"+op, body, nil, "uid-sql"); a.status != 200 {
		b.Fatalf("%s %q: %d %s", op, text, a.status, a.body)
	}
}
