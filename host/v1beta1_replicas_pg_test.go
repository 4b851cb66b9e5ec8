package host_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// Two host replicas on one PostgreSQL database apply, at the same moment,
// two applications whose sets diverge at position 1 to one database
// (spec/lane-v1beta1.md §6.7 rule 1: serialized per database, re-checked
// under the lock). In every round exactly one commits and the other is
// refused migration_required — never both, never a storage error — and
// the ledger is exactly the winner's set.
func TestV1beta1LedgerTwoReplicas(t *testing.T) {
	data := pgtest.URL(t)
	first := startBeta(t, hosttest.Options{Data: data})
	second := betaOn(t, hosttest.Start(t, hosttest.Options{Data: data, Catalog: first.catalog}), first.catalog)
	left := file{"0002_left.sql", artifact.MediaTypeSQL, []byte("CREATE TABLE l (id INTEGER);\n")}
	right := file{"0002_right.sql", artifact.MediaTypeSQL, []byte("CREATE TABLE r (id INTEGER);\n")}
	sets := map[string][]file{"left": {sql0001, left}, "right": {sql0001, right}}
	for name, files := range sets {
		first.mustCreate("SQLiteMigrationSet", name, map[string]any{"manifestDigest": first.upload(artifact.KindMigrationBundle, files...)})
	}
	const rounds = 8
	for i := range rounds {
		db := first.mustCreate("SQLiteDatabase", fmt.Sprintf("db-%d", i), map[string]any{})
		var wg sync.WaitGroup
		errs := map[string]error{}
		var mu sync.Mutex
		start := make(chan struct{})
		for side, b := range map[string]*beta{"left": first, "right": second} {
			wg.Go(func() {
				<-start
				_, err := b.create("SQLiteMigrationApplication", fmt.Sprintf("app-%d-%s", i, side), appSpec(db.Metadata.Name, side))
				mu.Lock()
				errs[side] = err
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		var winner string
		for side, err := range errs {
			var we *wire.Error
			switch {
			case err == nil && winner == "":
				winner = side
			case err == nil:
				t.Fatalf("round %d: both applications committed; the ledger lost the prefix rule", i)
			case !errors.As(err, &we) || we.Code != wire.MigrationRequired:
				t.Fatalf("round %d: %s got %v, want success or migration_required", i, side, err)
			}
		}
		if winner == "" {
			t.Fatalf("round %d: neither application committed: %v", i, errs)
		}
		wantLedger(t, fmt.Sprintf("round %d (won by %s)", i, winner), first.ledgerOf(db.Metadata.UID), entriesOf(sets[winner]...))
	}
}
