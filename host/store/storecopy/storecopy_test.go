package storecopy_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/sqlite"
	"github.com/takoform/takoform/host/store/storecopy"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

func kvRequest(t *testing.T, c *client.Client, name string) wire.ResourceRequest {
	t.Helper()
	profiles, err := c.SupportForms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles.Profiles {
		if p.FormRef != nil && p.FormRef.Kind == "EdgeKVNamespace" {
			return wire.ResourceRequest{APIVersion: p.FormRef.APIVersion, Kind: p.FormRef.Kind, Form: wire.FormReference{FormRef: *p.FormRef},
				Metadata: wire.Metadata{Name: name, Space: "copy test"}, Spec: json.RawMessage(`{}`)}
		}
	}
	t.Fatal("no EdgeKVNamespace")
	return wire.ResourceRequest{}
}

func connect(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.New(context.Background(), url, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A host's resources, idempotency records (a delete's 204 among them, its
// empty body a zero-length BLOB that must arrive as empty bytea, not NULL),
// prepare key and sequences come across: the PostgreSQL host reads every
// resource as the SQLite host did,
// a create's retry replays, and sequences continue past the source's.
func TestCopyMovesAHost(t *testing.T) {
	target := pgtest.URL(t)
	h := hosttest.Start(t, hosttest.Options{})
	c := connect(t, h.URL)
	names := []string{"cache", "sessions", "flags"}
	before := map[string]*wire.Resource{}
	for _, name := range names {
		req := kvRequest(t, c, name)
		p, err := c.Prepare(context.Background(), req, "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.ApplyAndWait(context.Background(), wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form,
			Metadata: req.Metadata, Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
		if err != nil {
			t.Fatal(err)
		}
		before[name] = res
	}
	// a delete answers 204 and records an empty body (a zero-length BLOB)
	gone := kvRequest(t, c, "scratch")
	p, err := c.Prepare(context.Background(), gone, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ApplyAndWait(context.Background(), wire.ApplyRequest{APIVersion: gone.APIVersion, Kind: gone.Kind, Form: gone.Form,
		Metadata: gone.Metadata, Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteAndWait(context.Background(), client.Address{Space: "copy test", Ref: gone.Form.FormRef, Name: "scratch"},
		client.Precondition{Generation: res.Metadata.Generation, UID: res.Metadata.UID}); err != nil {
		t.Fatal(err)
	}
	// edge.kv entries and queue messages of the data plane: bytes of
	// every value (NUL, 0xFE, 0xFF) come across exactly, keys by bytes.
	kvValue := []byte{0x00, 0x01, 0x02, 0x7f, 0x7f, 0xfe, 0xff, 'T', 'A', 'K', 'O', 'F', 'O', 'R', 'M'}
	cacheUID := before["cache"].Metadata.UID
	err = h.Store.Update(context.Background(), func(tx store.Tx) error {
		for range 3 {
			if _, err := tx.Next("uid"); err != nil {
				return err
			}
		}
		for _, k := range []string{"k\x00é", "k\uFFFD"} {
			if err := tx.KVPut(&store.KVEntry{Tenant: "tenant-a", Namespace: cacheUID, Key: k, Value: kvValue, Metadata: []byte(`{"a":"b"}`)}); err != nil {
				return err
			}
		}
		if err := tx.SecretPut(&store.Secret{Tenant: "tenant-a", Space: "copy test", Worker: "uid-worker", Name: "API_TOKEN",
			Sealed: kvValue, KeyID: "0123456789abcdef", UpdatedAt: time.UnixMilli(3000)}); err != nil {
			return err
		}
		if _, err := tx.LockMigrationLedger("tenant-a", "uid-database"); err != nil {
			return err
		}
		if err := tx.AppendMigrationLedger("tenant-a", "uid-database", 0, []store.MigrationEntry{{Path: "0001.sql", Digest: "sha256:6bba7147e303c69ca15b2870b7a2c43d2893c1ec76bb50c622e7d35157d2b858"}}); err != nil {
			return err
		}
		if err := tx.RecordFiring(&store.Firing{Trigger: "uid-trigger", Minute: time.UnixMilli(60000), Tenant: "tenant-a",
			State: store.FiringOK, Version: "uid-version", UpdatedAt: time.UnixMilli(61000)}, store.Fence{}); err != nil {
			return err
		}
		lease, err := tx.AcquireLease(store.EventsLease, "host-a", time.UnixMilli(1000), time.Minute) // the epochs go on
		if err != nil {
			return err
		}
		if err := tx.QueueSend([]*store.QueueMessage{{Tenant: "tenant-a", Queue: "uid-queue", ID: "msg_1", Body: kvValue,
			AcceptedAt: time.UnixMilli(1000), DeliverableAt: time.UnixMilli(2000)}}); err != nil {
			return err
		}
		_, err = tx.QueueClaim("uid-queue", "batch_1", time.UnixMilli(2000), time.UnixMilli(5000), 10, lease.Fence()) // a claim comes across too
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ref := kvRequest(t, c, "x").Form.FormRef
	h.Stop()
	db, err := sql.Open("sqlite", "file:"+h.Path)
	if err != nil {
		t.Fatal(err)
	}
	var empty int
	if err := db.QueryRow(`SELECT count(*) FROM idempotency WHERE status = 204 AND length(body) = 0`).Scan(&empty); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if empty != 1 {
		t.Fatalf("the source holds %d idempotency records of a 204 with an empty body, want the delete's 1", empty)
	}

	tables, err := storecopy.Copy(context.Background(), h.Path, target)
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	rows := map[string]int64{}
	for _, tb := range tables {
		rows[tb.Name] = tb.Rows
	}
	for table, want := range map[string]int64{"resources": 3, "idempotency": 4, "settings": 1, "sequences": 1, "kv_entries": 2, "queue_messages": 1, "worker_secrets": 1,
		"migration_ledgers": 1, "migration_ledger_entries": 1, "cron_firings": 1, "leases": 1} {
		if rows[table] != want {
			t.Errorf("copied %d rows of %s, want %d", rows[table], table, want)
		}
	}
	if len(tables) != 25 {
		t.Errorf("copied %d tables, want all 23 and the SQLite databases' 2", len(tables))
	}

	pg := hosttest.Start(t, hosttest.Options{Data: target})
	pc := connect(t, pg.URL)
	for _, name := range names {
		got, err := pc.Read(context.Background(), client.Address{Space: "copy test", Ref: ref, Name: name})
		if err != nil {
			t.Fatalf("read %s from the PostgreSQL host: %v", name, err)
		}
		if !reflect.DeepEqual(got, before[name]) {
			t.Errorf("%s on PostgreSQL:\n got  %+v\n want %+v", name, got, before[name])
		}
	}
	err = pg.Store.View(context.Background(), func(tx store.Tx) error {
		keys, err := tx.KVList(cacheUID, "", "", time.Now(), 10)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(keys, []string{"k\x00é", "k\uFFFD"}) {
			t.Errorf("KV keys on PostgreSQL: %q", keys)
		}
		e, err := tx.KVGet(cacheUID, "k\x00é", time.Now())
		if err != nil || !bytes.Equal(e.Value, kvValue) || string(e.Metadata) != `{"a":"b"}` {
			t.Errorf("KV entry on PostgreSQL: %+v %v", e, err)
		}
		msgs, err := tx.QueueMessages("uid-queue", 10)
		if err != nil || len(msgs) != 1 || !bytes.Equal(msgs[0].Body, kvValue) || !msgs[0].DeliverableAt.Equal(time.UnixMilli(5000)) ||
			msgs[0].Claim != "batch_1" || msgs[0].Attempts != 1 {
			t.Errorf("queue messages on PostgreSQL: %+v %v", msgs, err)
		}
		f, err := tx.Firing("uid-trigger", time.UnixMilli(60000))
		if err != nil || f.State != store.FiringOK || f.Version != "uid-version" || !f.UpdatedAt.Equal(time.UnixMilli(61000)) {
			t.Errorf("the cron firing on PostgreSQL: %+v %v", f, err)
		}
		u, err := tx.Usage("tenant-a")
		if err == nil && (u.KVBytes != 2*int64(len("k\x00é")+len(kvValue)+9) || u.QueueBytes != int64(len(kvValue))) {
			t.Errorf("tenant-a usage on PostgreSQL: %+v", u)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The stored answers came across (the reads above were served from them).
	var answered int
	if err := pg.Store.(*postgres.Store).Pool().QueryRow(context.Background(), `SELECT count(*) FROM resources WHERE answer IS NOT NULL`).Scan(&answered); err != nil {
		t.Fatal(err)
	}
	if answered != len(names) {
		t.Errorf("%d copied resources hold a stored answer, want all %d", answered, len(names))
	}
	if err := pc.DeleteAndWait(context.Background(), client.Address{Space: "copy test", Ref: ref, Name: "scratch"},
		client.Precondition{Generation: res.Metadata.Generation, UID: res.Metadata.UID}); err != nil {
		t.Errorf("the delete's retry on the PostgreSQL host (a replay of the copied 204): %v", err)
	}
	err = pg.Store.Update(context.Background(), func(tx store.Tx) error {
		n, err := tx.Next("uid")
		if err == nil && n != 4 {
			t.Errorf("Next(uid) after the copy = %d, want 4 (past the source's 3)", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	_, err = storecopy.Copy(context.Background(), h.Path, target)
	if !errors.Is(err, storecopy.ErrTargetNotEmpty) || !strings.Contains(err.Error(), "a host has started on it, or an earlier copy filled it") {
		t.Fatalf("second Copy into the same database: got %v, want ErrTargetNotEmpty saying a host or a copy has filled it", err)
	}
	// The refusal's repair, as it says it: a new database, owned by the
	// role the copy connects as, then the copy into it.
	stmt := err.Error()[strings.Index(err.Error(), "CREATE DATABASE NAME"):]
	stmt, _, _ = strings.Cut(stmt, " (or createdb")
	fresh := fmt.Sprintf("takoform_copy_repair_%d", time.Now().UnixNano())
	server := pgtest.ServerURL(t)
	pgtest.Exec(t, server, strings.Replace(stmt, "NAME", fresh, 1))
	t.Cleanup(func() { pgtest.Exec(t, server, "DROP DATABASE IF EXISTS "+fresh+" WITH (FORCE)") })
	if _, err := storecopy.Copy(context.Background(), h.Path, pgtest.WithDatabase(t, server, fresh)); err != nil {
		t.Errorf("Copy into the new database the refusal names (%s): %v", strings.Replace(stmt, "NAME", fresh, 1), err)
	}
}

// A row the target refuses (here an operation whose done flag is 2, which
// the PostgreSQL schema's CHECK forbids) fails the copy after earlier
// tables were written: the target is left empty, and the error never
// shows the URL's password.
func TestCopyFailureLeavesTargetEmpty(t *testing.T) {
	target := pgtest.URL(t)
	path := filepath.Join(t.TempDir(), "host.db")
	oneResource(t, path)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO operations (id, tenant, principal, action, done, request, document, target_uid,
		target_tenant, target_space, target_api_version, target_kind, target_name, not_before, created_at, updated_at)
		VALUES ('op_1', 'acme', 'p', 'apply', 2, x'', x'', '', '', '', '', '', '', 0, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	_, err = storecopy.Copy(context.Background(), path, target)
	if err == nil {
		t.Fatal("Copy of a row the target refuses succeeded")
	}
	if !strings.Contains(err.Error(), "operations") {
		t.Errorf("error %q does not name the table that failed", err)
	}
	pgtest.NoPassword(t, target, "the copy's error", err.Error())
	st, err := postgres.Open(context.Background(), target, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM resources`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the failed copy left %d resources in the target, want 0", n)
	}
}

// A source no host wrote (another program's SQLite database) is refused
// before either side is written: the file keeps its bytes and the target
// gets no table.
func TestCopyRefusesAFileNoHostWrote(t *testing.T) {
	target := pgtest.URL(t)
	path := filepath.Join(t.TempDir(), "notes.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('hello')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = storecopy.Copy(context.Background(), path, target)
	if err == nil || !strings.Contains(err.Error(), "not a Takoform host database") {
		t.Fatalf("Copy from another program's database: %v; want a refusal naming it", err)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
		t.Errorf("the refused Copy changed its source (%v)", err)
	}
	conn, err := pgx.Connect(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var tables int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("the refused Copy created %d tables in the target, want none", tables)
	}
}

// A host file whose name holds '#' is copied from that file (a file: URI
// would otherwise end its path at the '#').
func TestCopyFromAPathWithHash(t *testing.T) {
	target := pgtest.URL(t)
	path := filepath.Join(t.TempDir(), "host#1.db")
	oneResource(t, path)
	tables, err := storecopy.Copy(context.Background(), path, target)
	if err != nil {
		t.Fatalf("Copy from %s: %v", path, err)
	}
	if tables[0].Name != "resources" || tables[0].Rows != 1 {
		t.Errorf("copied %+v first, want the source's 1 resource", tables[0])
	}
}

// oneResource writes a host file at path holding one resource.
func oneResource(t *testing.T, path string) {
	t.Helper()
	src, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	err = src.Update(context.Background(), func(tx store.Tx) error {
		return tx.CreateResource(&store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "n"},
			UID: "u-1", Generation: 1, Revision: 1, Spec: []byte(`{}`), Status: []byte(`{}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A target that holds another program's tables, and no schema version
// table, is refused before it is migrated — also when a table's name is a
// host's — and keeps exactly the tables it had.
func TestCopyRefusesAnotherProgramsDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	oneResource(t, path)
	for _, table := range []string{"notes", "resources"} {
		named := "holds tables (" + table + ") and no Takoform schema version table"
		target := pgtest.URL(t)
		conn, err := pgx.Connect(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `CREATE TABLE `+table+` (x text)`); err != nil {
			t.Fatal(err)
		}
		_, err = storecopy.Copy(context.Background(), path, target)
		if !errors.Is(err, storecopy.ErrTargetNotEmpty) || !strings.Contains(err.Error(), named) {
			t.Errorf("Copy into a database holding %s: %v; want ErrTargetNotEmpty saying it holds tables %s", table, err, named)
		}
		if err != nil {
			pgtest.NoPassword(t, target, "the refusal", err.Error())
		}
		rows, err := conn.Query(context.Background(), `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
		if err != nil {
			t.Fatal(err)
		}
		have, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(have, []string{table}) {
			t.Errorf("after the refused Copy the target holds %v, want only its own %s", have, table)
		}
	}
}

// A target a newer host migrated (a schema version and a table this binary
// does not know) is refused as newer, naming the versions, not as another
// program's database.
func TestCopyIntoANewerHostsDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	oneResource(t, path)
	target := pgtest.URL(t)
	st, err := postgres.Open(context.Background(), target, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Pool().Exec(context.Background(), `CREATE TABLE future_table (x text);
		INSERT INTO goose_db_version (version_id, is_applied) VALUES (1000, true)`); err != nil {
		t.Fatal(err)
	}
	_, err = storecopy.Copy(context.Background(), path, target)
	if !errors.Is(err, store.ErrTooNew) || !strings.Contains(err.Error(), "schema version 1000") {
		t.Errorf("Copy into a newer host's database: %v; want ErrTooNew naming schema version 1000", err)
	}
}
