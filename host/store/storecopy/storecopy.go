// Package storecopy moves a host from its SQLite file to PostgreSQL
// (`takoform host copy --from FILE --to postgres://…`, decision
// spec/decisions/0012-copy-sqlite-to-postgres.md). Both stores share one
// schema, table for table and column for column, so the copy is generic:
// every table is copied in one target transaction (a failure leaves the
// target empty), the sequences table comes across with its values (so the
// next value of every sequence is past the source's: no UID, operation or
// upload id is handed out twice), and before committing, the copy
// compares each table's row count and content digest on both sides.
package storecopy

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/sqlite"
)

// tables lists every table of the schema with the columns that order it
// (its primary key). Copy refuses to run when the target's tables differ
// from this list, so a table added by a migration is never left behind.
var tables = []struct{ name, order string }{
	{"resources", "uid"},
	{"claims", "tenant, claim"},
	{"pins", "source_uid, ord"},
	{"idempotency", "lane, tenant, principal, space, key"},
	{"operations", "id"},
	{"blobs", "digest"},
	{"manifests", "digest"},
	{"holdings", "tenant, digest"},
	{"uploads", "id"},
	{"sequences", "name"},
	{"settings", "name"},
	{"artifact_refs", "holder, digest"},
	{"kv_entries", "namespace, key"},
	{"queue_messages", "queue, id"},
	{"objects", "bucket, key"},
	{"object_uploads", "bucket, id"},
	{"object_parts", "bucket, upload, number"},
	{"worker_secrets", "worker, name"}, // sealed: the target's hosts need the same secrets key file
	// Last: the target's triggers (migrations 00002, 00007, 00008, 00009)
	// fill tenant_usage as resources, holdings, KV entries, queue
	// messages, objects and parts are copied; Copy replaces those rows
	// with the source's, so the digests compare what the source holds.
	{"tenant_usage", "tenant"},
}

// Table is what was copied of one table.
type Table struct {
	Name   string
	Rows   int64
	Digest string // sha256 over the rows in key order, the same on both sides
}

// ErrTargetNotEmpty refuses a copy into a database that holds host data.
var ErrTargetNotEmpty = errors.New("the target database is not empty")

// Copy copies the SQLite file at from into the PostgreSQL database at to
// (migrated first, both to this binary's schema version) and returns what
// it copied, table by table. The target must hold no host rows
// (ErrTargetNotEmpty); nothing is written unless every table's row count
// and digest match. A source that is missing or no host's file
// (sqlite.OpenHostFile) and a target that holds tables but no schema
// version table (another program's database) are refused before either
// side is written; a target that does not open (unreachable, refused,
// newer) fails before the source is migrated. Errors name the database
// without its password.
func Copy(ctx context.Context, from, to string) (_ []Table, err error) {
	// A file that is no host's (empty, another program's) is refused
	// before anything writes to it.
	sdb, err := sqlite.OpenHostFile(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if err := sdb.Close(); err != nil {
		return nil, err
	}
	// So is a target that is no host's; the target is opened (and
	// migrated) before the source is, so a mistaken URL leaves the source
	// as it was.
	if err := refuseForeignTables(ctx, to); err != nil {
		return nil, err
	}
	dst, err := postgres.Open(ctx, to, postgres.Options{MaxConns: 2})
	if err != nil {
		return nil, err
	}
	defer store.JoinCleanup(&err, dst.Close)
	// Opening migrates the file to this binary's schema (as `host serve`
	// would); the copy then reads it read-only in one snapshot.
	src, err := sqlite.Open(ctx, from, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	if err := src.Close(); err != nil {
		return nil, err
	}
	if sdb, err = sqlite.OpenHostFile(ctx, from); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	defer store.JoinCleanup(&err, sdb.Close)

	stx, err := sdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", from, err)
	}
	defer store.JoinCleanup(&err, stx.Rollback) // ends the read snapshot
	ptx, err := dst.Pool().BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return nil, fmt.Errorf("begin on %s: %w", dst.URL(), err)
	}
	defer store.JoinCleanup(&err, func() error { return postgres.Rollback(context.WithoutCancel(ctx), ptx) })
	if err := checkTarget(ctx, ptx, dst.URL(), dst.Pool().Config().ConnConfig.User); err != nil {
		return nil, err
	}
	var out []Table
	for _, tb := range tables {
		cols, bytea, err := columns(ctx, ptx, tb.name)
		if err != nil {
			return nil, err
		}
		if tb.name == "tenant_usage" {
			if _, err := ptx.Exec(ctx, `DELETE FROM tenant_usage`); err != nil {
				return nil, fmt.Errorf("clear the usage the target's triggers derived: %w", err)
			}
		}
		got, err := copyTable(ctx, stx, ptx, tb.name, tb.order, cols, bytea)
		if err != nil {
			return nil, fmt.Errorf("copy table %s: %w", tb.name, err)
		}
		out = append(out, got)
	}
	if err := ptx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit the copy on %s: %w", dst.URL(), err)
	}
	return out, nil
}

// refuseForeignTables refuses, before postgres.Open migrates it, a target
// that holds tables but not goose's schema version table: no host's
// database (another program's), which is left as it was. A versioned
// target is left to postgres.Open (a newer schema is ErrTooNew) and
// checkTarget; one it cannot reach is left to postgres.Open, whose error
// names the cause with the password redacted.
func refuseForeignTables(ctx context.Context, to string) (err error) {
	cfg, err := pgx.ParseConfig(to)
	if err != nil {
		return nil
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil
	}
	defer store.JoinCleanup(&err, func() error { return conn.Close(context.WithoutCancel(ctx)) })
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() ORDER BY table_name`)
	if err != nil {
		return nil
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(have) == 0 || slices.Contains(have, "goose_db_version") {
		return nil
	}
	return fmt.Errorf("%w: %s holds tables (%s) and no Takoform schema version table, so it is no host's database; %s", ErrTargetNotEmpty, postgres.Redact(to), strings.Join(have, ", "), newDatabase(cfg.User))
}

// newDatabase is the repair of a target that is not empty, for the role
// the copy connects as.
func newDatabase(role string) string {
	if role == "" {
		role = "ROLE"
	}
	return fmt.Sprintf("copy into a new, empty database that no replica has started on, so nothing is merged or overwritten: CREATE DATABASE NAME OWNER %s (or createdb -O %s NAME), then give its URL to --to", postgres.QuoteIdent(role), role)
}

// checkTarget refuses a target whose tables are not exactly the schema's
// or that holds any row.
func checkTarget(ctx context.Context, tx pgx.Tx, url, role string) error {
	rows, err := tx.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version'
		ORDER BY table_name`)
	if err != nil {
		return fmt.Errorf("list tables of %s: %w", url, err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list tables of %s: %w", url, err)
	}
	var want []string
	for _, tb := range tables {
		want = append(want, tb.name)
	}
	slices.Sort(want)
	if !slices.Equal(have, want) {
		return fmt.Errorf("the tables of %s are %v; this binary copies %v (a table this copy does not know would be left behind)", url, have, want)
	}
	var nonEmpty []string
	for _, tb := range tables {
		var any bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+tb.name+`)`).Scan(&any); err != nil {
			return fmt.Errorf("inspect %s on %s: %w", tb.name, url, err)
		}
		if any {
			nonEmpty = append(nonEmpty, tb.name)
		}
	}
	if len(nonEmpty) > 0 {
		started := ""
		if slices.Contains(nonEmpty, "settings") {
			started = " (a host has started on it, or an earlier copy filled it: settings holds a host's keys)"
		}
		return fmt.Errorf("%w: %s has rows in %s%s; %s", ErrTargetNotEmpty, url, strings.Join(nonEmpty, ", "), started, newDatabase(role))
	}
	return nil
}

// columns lists a target table's columns in order and, for each, whether
// it is a NOT NULL bytea (whose empty values copyTable sends as empty
// bytes, never NULL).
func columns(ctx context.Context, tx pgx.Tx, table string) ([]string, []bool, error) {
	rows, err := tx.Query(ctx, `SELECT column_name, data_type = 'bytea' AND is_nullable = 'NO'
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, nil, fmt.Errorf("list columns of %s: %w", table, err)
	}
	var names []string
	var bytea []bool
	var name string
	var notNullBytea bool
	_, err = pgx.ForEachRow(rows, []any{&name, &notNullBytea}, func() error {
		names = append(names, name)
		bytea = append(bytea, notNullBytea)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list columns of %s: %w", table, err)
	}
	return names, bytea, nil
}

// copyTable streams one table with COPY and compares count and digest of
// both sides inside the target transaction. A zero-length BLOB scans as a
// nil value; in a NOT NULL bytea column (bytea[i]) it is sent as empty
// bytes, so an idempotency record of a 204 answer (empty body) copies.
func copyTable(ctx context.Context, stx *sql.Tx, ptx pgx.Tx, table, order string, cols []string, bytea []bool) (_ Table, err error) {
	query := `SELECT ` + strings.Join(cols, ", ") + ` FROM ` + table + ` ORDER BY ` + order
	rows, err := stx.QueryContext(ctx, query)
	if err != nil {
		return Table{}, fmt.Errorf("read the source: %w", err)
	}
	defer store.JoinCleanup(&err, rows.Close)
	src := newDigest()
	var readErr error
	n, err := ptx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
		if !rows.Next() {
			readErr = rows.Err()
			return nil, readErr
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if b, isBytes := v.([]byte); bytea[i] && (v == nil || isBytes && b == nil) {
				vals[i] = []byte{}
			}
		}
		src.row(vals)
		return vals, nil
	}))
	if err != nil {
		return Table{}, fmt.Errorf("write the target: %w", err)
	}
	if readErr != nil {
		return Table{}, fmt.Errorf("read the source: %w", readErr)
	}
	prow, err := ptx.Query(ctx, query)
	if err != nil {
		return Table{}, fmt.Errorf("read back the target: %w", err)
	}
	dst := newDigest()
	for prow.Next() {
		vals, err := prow.Values()
		if err != nil {
			prow.Close()
			return Table{}, fmt.Errorf("read back the target: %w", err)
		}
		dst.row(vals)
	}
	prow.Close()
	if err := prow.Err(); err != nil {
		return Table{}, fmt.Errorf("read back the target: %w", err)
	}
	if src.n != n || dst.n != n {
		return Table{}, fmt.Errorf("row counts differ: read %d from the source, wrote %d, read back %d; nothing was committed", src.n, n, dst.n)
	}
	if s, d := src.sum(), dst.sum(); s != d {
		return Table{}, fmt.Errorf("content digests differ: source %s, target %s; nothing was committed", s, d)
	}
	return Table{Name: table, Rows: n, Digest: src.sum()}, nil
}

// digest hashes rows of values as both drivers return them: integers of
// any width as int64, text as string, bytes as []byte; each value is
// tagged and length-prefixed, so no two rows encode alike.
type digest struct {
	h hash.Hash
	n int64
}

func newDigest() *digest { return &digest{h: sha256.New()} }

func (d *digest) row(vals []any) {
	d.n++
	for _, v := range vals {
		var tag byte
		var b []byte
		switch x := v.(type) {
		case nil:
			tag = 'n'
		case int64:
			tag, b = 'i', binary.BigEndian.AppendUint64(nil, uint64(x))
		case int32:
			tag, b = 'i', binary.BigEndian.AppendUint64(nil, uint64(int64(x)))
		case int16:
			tag, b = 'i', binary.BigEndian.AppendUint64(nil, uint64(int64(x)))
		case string:
			tag, b = 's', []byte(x)
		case []byte:
			tag, b = 'b', x
		default:
			tag, b = '?', fmt.Appendf(nil, "%T:%v", v, v)
		}
		d.h.Write([]byte{tag})
		d.h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		d.h.Write(b)
	}
	d.h.Write([]byte{'\n'})
}

func (d *digest) sum() string { return "sha256:" + hex.EncodeToString(d.h.Sum(nil)) }
