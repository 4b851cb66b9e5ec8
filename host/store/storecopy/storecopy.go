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
	"strconv"
	"strings"
	"unicode/utf8"

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
	{"migration_ledgers", "database"},
	{"migration_ledger_entries", "database, position"},
	{"cron_firings", "trigger_uid, minute"},
	{"leases", "name"}, // the epochs go on where they stood, above the copied claims'
	// Last: the target's triggers (migrations 00002, 00007, 00008, 00009)
	// fill tenant_usage as resources, holdings, KV entries, queue
	// messages, objects and parts are copied; Copy replaces those rows
	// with the source's, so the digests compare what the source holds.
	{"tenant_usage", "tenant"},
}

// targetOnly lists the tables only a PostgreSQL host has, which a SQLite
// source has no table for: object_chunks (object bodies, which a SQLite
// host keeps in its worker data directory; repo decision 0061), peer_keys
// (made by the first replica), and sql_databases and sql_pages (SQLite
// databases, which a SQLite host keeps as files in its worker data
// directory and copySQLDatabases copies; repo decision 0063). The target
// must hold them empty.
var targetOnly = []string{"object_chunks", "peer_keys", "sql_databases", "sql_pages"}

// Table is what was copied of one table.
type Table struct {
	Name   string
	Rows   int64
	Digest string // sha256 over the rows in key order, the same on both sides
	// Left lists the source rows left behind: rows of a table whose rows
	// the host can lose (leavable) holding text PostgreSQL cannot.
	Left []LeftRow
}

// LeftRow is one source row the copy could not carry: PostgreSQL's text
// holds only UTF-8 without NUL (U+0000), while an older host's SQLite
// file may hold other bytes (a host now refuses them before any store
// sees them).
type LeftRow struct {
	Key    string // the row's key columns, each name=quoted value, in key order
	Column string // the first column whose value PostgreSQL cannot hold
	Reason string // what that value holds: bytes that are not UTF-8, or a NUL
}

// leavable names the tables whose rows a host may lose without losing
// state, with what losing one means: an idempotency record only replays
// an answer, and a host refuses a key or space that is not UTF-8 text
// without NUL before looking for its record, so such a record can never
// replay.
var leavable = map[string]string{
	"idempotency": "a replay record no request can reach: a host refuses such a key or space before looking for its record",
}

// LeftMeans says what leaving a row of table behind loses ("" for a
// table whose rows are never left behind).
func LeftMeans(table string) string { return leavable[table] }

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
func Copy(ctx context.Context, from, to string) ([]Table, error) {
	return CopyWithWorkerData(ctx, from, from+".workers", to)
}

// CopyWithWorkerData is Copy of a host whose worker data directory is
// workerData (Copy: FILE.workers, the default beside the file): the file
// of each SQLiteDatabase under workerData/sql is copied too, as the pages
// a host on PostgreSQL keeps (rows of sql_databases and sql_pages in the
// result). Object bodies under it are not (repo decision 0061).
func CopyWithWorkerData(ctx context.Context, from, workerData, to string) (_ []Table, err error) {
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
		cols, bytea, text, err := columns(ctx, ptx, tb.name)
		if err != nil {
			return nil, err
		}
		if tb.name == "tenant_usage" {
			if _, err := ptx.Exec(ctx, `DELETE FROM tenant_usage`); err != nil {
				return nil, fmt.Errorf("clear the usage the target's triggers derived: %w", err)
			}
		}
		got, err := copyTable(ctx, stx, ptx, tb.name, tb.order, cols, bytea, text)
		if err != nil {
			return nil, fmt.Errorf("copy table %s: %w", tb.name, err)
		}
		out = append(out, got)
	}
	dbs, err := copySQLDatabases(ctx, stx, ptx, workerData)
	if err != nil {
		return nil, fmt.Errorf("copy the SQLite databases of %s: %w", workerData, err)
	}
	out = append(out, dbs...)
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
	want = append(want, targetOnly...)
	slices.Sort(want)
	if !slices.Equal(have, want) {
		return fmt.Errorf("the tables of %s are %v; this binary copies %v (a table this copy does not know would be left behind)", url, have, want)
	}
	var nonEmpty []string
	for _, name := range want {
		var any bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+name+`)`).Scan(&any); err != nil {
			return fmt.Errorf("inspect %s on %s: %w", name, url, err)
		}
		if any {
			nonEmpty = append(nonEmpty, name)
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
// bytes, never NULL) and whether it is text (whose values must be UTF-8
// without NUL).
func columns(ctx context.Context, tx pgx.Tx, table string) (names []string, bytea, text []bool, err error) {
	rows, err := tx.Query(ctx, `SELECT column_name, data_type = 'bytea' AND is_nullable = 'NO', data_type = 'text'
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list columns of %s: %w", table, err)
	}
	var name string
	var notNullBytea, isText bool
	_, err = pgx.ForEachRow(rows, []any{&name, &notNullBytea, &isText}, func() error {
		names = append(names, name)
		bytea = append(bytea, notNullBytea)
		text = append(text, isText)
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list columns of %s: %w", table, err)
	}
	return names, bytea, text, nil
}

// textFault says why PostgreSQL's text cannot hold v: "" when it can
// (or v is no string).
func textFault(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return ""
	}
	switch {
	case !utf8.ValidString(s):
		return "bytes that are not UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "a NUL (U+0000)"
	}
	return ""
}

// rowKey renders a row's key columns (order, as tables lists them) as
// name=quoted value, each value cut to 64 bytes.
func rowKey(order string, cols []string, vals []any) string {
	var parts []string
	for k := range strings.SplitSeq(order, ", ") {
		i := slices.Index(cols, k)
		if i < 0 {
			continue
		}
		v := fmt.Sprint(vals[i])
		if b, ok := vals[i].([]byte); ok {
			v = string(b)
		}
		if len(v) > 64 {
			v = v[:64]
		}
		parts = append(parts, k+"="+strconv.Quote(v))
	}
	return strings.Join(parts, " ")
}

// copyTable streams one table with COPY and compares count and digest of
// both sides inside the target transaction. A zero-length BLOB scans as a
// nil value; in a NOT NULL bytea column (bytea[i]) it is sent as empty
// bytes, so an idempotency record of a 204 answer (empty body) copies.
//
// A source row holding a text column value PostgreSQL cannot hold (not
// UTF-8, or a NUL) is left behind and listed in Table.Left when its table
// is leavable; in any other table it fails the copy, naming the row.
func copyTable(ctx context.Context, stx *sql.Tx, ptx pgx.Tx, table, order string, cols []string, bytea, text []bool) (_ Table, err error) {
	query := `SELECT ` + strings.Join(cols, ", ") + ` FROM ` + table + ` ORDER BY ` + order
	rows, err := stx.QueryContext(ctx, query)
	if err != nil {
		return Table{}, fmt.Errorf("read the source: %w", err)
	}
	defer store.JoinCleanup(&err, rows.Close)
	src := newDigest()
	var left []LeftRow
	var readErr error
	n, err := ptx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
		for {
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
			if l, bad := uncarriable(order, cols, text, vals); bad {
				if _, ok := leavable[table]; !ok {
					return nil, fmt.Errorf("the row %s holds %s in its column %s, which PostgreSQL's text cannot hold; nothing was committed: serve the file again, remove what holds that value through the host's API (a resource: delete it, then import it again with a value the host accepts), and copy again",
						l.Key, l.Reason, l.Column)
				}
				left = append(left, l)
				continue
			}
			for i, v := range vals {
				if b, isBytes := v.([]byte); bytea[i] && (v == nil || isBytes && b == nil) {
					vals[i] = []byte{}
				}
			}
			src.row(vals)
			return vals, nil
		}
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
	return Table{Name: table, Rows: n, Digest: src.sum(), Left: left}, nil
}

// uncarriable reports the first text column of a source row whose value
// PostgreSQL cannot hold.
func uncarriable(order string, cols []string, text []bool, vals []any) (LeftRow, bool) {
	for i, v := range vals {
		if !text[i] {
			continue
		}
		if f := textFault(v); f != "" {
			return LeftRow{Key: rowKey(order, cols, vals), Column: cols[i], Reason: f}, true
		}
	}
	return LeftRow{}, false
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
