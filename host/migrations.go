package host

import (
	"context"
	"errors"

	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// Migrations is the data plane's migration executor as host.Config takes
// it: host/runtime/gateway's Gateway.ApplyMigrations (spec/runtime-v1.md
// §9.3).
type Migrations func(ctx context.Context, databaseUID string, files []gateway.MigrationFile) ([]gateway.LedgerEntry, error)

// migrator adapts m to the Edge family's Migrator: the same files, the
// in-file ledger as (path, digest) entries, and a fault of the host's
// storage (a *gateway.Error) as the wire refusal it stands for, naming the
// database (resource_busy for busy, else backend_unavailable; both
// retryable, and nothing of the failed file is applied).
func migrator(m Migrations) edgehost.Migrator {
	return func(ctx context.Context, uid string, files []edgehost.MigrationFile) ([]store.MigrationEntry, error) {
		in := make([]gateway.MigrationFile, len(files))
		for i, f := range files {
			in[i] = gateway.MigrationFile{Path: f.Path, Digest: f.Digest, SQL: f.SQL}
		}
		ledger, err := m(ctx, uid, in)
		out := make([]store.MigrationEntry, len(ledger))
		for i, e := range ledger {
			out[i] = store.MigrationEntry{Path: e.Path, Digest: e.Digest}
		}
		var ge *gateway.Error
		if errors.As(err, &ge) {
			code := wire.BackendUnavailable
			if ge.Code == "busy" {
				code = wire.ResourceBusy
			}
			err = wire.Errorf(code, "the data plane could not migrate database %s now (%s); retry the apply", uid, ge.Message).WithHostCode("migration_" + ge.Code)
		}
		return out, err
	}
}
