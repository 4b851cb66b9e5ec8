package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/storetest"
)

func openTest(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openTest(t, filepath.Join(t.TempDir(), "host.db"), Options{})
	})
}

// One write per batch must behave the same (MaxBatch 1 turns group commit off).
func TestStoreWithoutBatching(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openTest(t, filepath.Join(t.TempDir(), "host.db"), Options{MaxBatch: 1})
	})
}

func testResource(name, uid string) *store.Resource {
	return &store.Resource{
		Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "KVNamespace", Name: name},
		UID: uid,
		FormRef: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "KVNamespace", DefinitionVersion: "0.1.0",
			SchemaDigest: "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		Generation: 1,
		Revision:   1,
		Spec:       []byte(`{"title":"` + name + `"}`),
		SpecDigest: "sha256:5555555555555555555555555555555555555555555555555555555555555555",
		Status:     []byte(`{}`),
		CreatedAt:  time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		UpdatedAt:  time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
	}
}

func TestOpenCreatesFileInWALMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", "host.db")
	s := openTest(t, path, Options{})
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not created: %v", err)
	}
	if s.Path() != path {
		t.Fatalf("Path() = %q, want %q", s.Path(), path)
	}
	var mode string
	if err := s.rdb.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// Everything committed is found after Close and Open.
func TestReopenFindsCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := testResource("sessions", "uid-1")
	want.NativeID = "ns-1"
	err = s.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Next("uid"); err != nil {
			return err
		}
		if err := tx.CreateResource(want); err != nil {
			return err
		}
		if err := tx.PutBlob("sha256:aa", []byte("blob")); err != nil {
			return err
		}
		_, err := tx.PutSetting("prepare-key", []byte("secret"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, path, Options{})
	err = s.Update(t.Context(), func(tx store.Tx) error {
		got, err := tx.ResourceByNativeID("acme", "ns-1")
		if err != nil {
			return err
		}
		if got.UID != want.UID || string(got.Spec) != string(want.Spec) || !got.CreatedAt.Equal(want.CreatedAt) {
			return fmt.Errorf("reopened resource = %+v, want %+v", got, want)
		}
		if b, err := tx.Blob("sha256:aa"); err != nil || string(b) != "blob" {
			return fmt.Errorf("reopened blob = %q, %v", b, err)
		}
		if v, err := tx.Setting("prepare-key"); err != nil || string(v) != "secret" {
			return fmt.Errorf("reopened setting = %q, %v", v, err)
		}
		if n, err := tx.Next("uid"); err != nil || n != 2 {
			return fmt.Errorf("Next after reopen = %d, %v; want 2", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A file migrated by a newer binary is refused, naming both versions.
func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	known, err := knownVersion()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)`, known+1); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path, Options{})
	if err == nil {
		s.Close()
		t.Fatal("Open of a newer database succeeded")
	}
	if !errors.Is(err, store.ErrTooNew) {
		t.Fatalf("Open error %v does not wrap store.ErrTooNew", err)
	}
	for _, want := range []string{fmt.Sprintf("schema version %d", known+1), fmt.Sprintf("knows up to %d", known)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error %q does not say %q", err, want)
		}
	}
}

func knownVersion() (int64, error) {
	entries, err := migrations.ReadDir("migrations")
	if err != nil {
		return 0, err
	}
	var v int64
	for _, e := range entries {
		var n int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &n); err == nil {
			v = max(v, n)
		}
	}
	return v, nil
}

// Every statement is served by a primary key or index: no table scan, no
// temporary sort.
var numberedParam = regexp.MustCompile(`\?([0-9]+)`)

func TestQueryPlans(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "host.db"), Options{})
	for q, text := range queries {
		n := strings.Count(text, "?")
		if ms := numberedParam.FindAllStringSubmatch(text, -1); len(ms) > 0 { // ?NNN: as many as the highest
			n = 0
			for _, m := range ms {
				k, _ := strconv.Atoi(m[1])
				n = max(n, k)
			}
		}
		args := make([]any, n)
		for i := range args {
			args[i] = "x"
		}
		rows, err := s.wdb.Query("EXPLAIN QUERY PLAN "+text, args...)
		if err != nil {
			t.Fatalf("query %d: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, d := range plan {
			if strings.HasPrefix(d, "SCAN") || strings.Contains(d, "TEMP B-TREE") {
				t.Errorf("query %d is not served by an index: %q\n%s", q, plan, text)
			}
		}
	}
}

func TestPanicInUpdateKeepsWriter(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "host.db"), Options{})
	err := s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.CreateResource(testResource("a", "uid-1")); err != nil {
			return err
		}
		panic("boom")
	})
	if !errors.Is(err, errPanic) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Update of a panicking fn = %v, want errPanic with the value", err)
	}
	// Concurrent with panics: the others commit.
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.Update(t.Context(), func(tx store.Tx) error {
				if err := tx.CreateResource(testResource(fmt.Sprintf("r%d", i), fmt.Sprintf("uid-r%d", i))); err != nil {
					return err
				}
				if i%2 == 0 {
					panic(i)
				}
				return nil
			})
		})
	}
	wg.Wait()
	err = s.View(t.Context(), func(tx store.Tx) error {
		if _, err := tx.ResourceByUID("uid-1"); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("resource of the panicking fn: %v", err)
		}
		for i, uerr := range errs {
			_, err := tx.ResourceByUID(fmt.Sprintf("uid-r%d", i))
			if i%2 == 0 && (!errors.Is(uerr, errPanic) || !errors.Is(err, store.ErrNotFound)) {
				return fmt.Errorf("panicking caller %d: Update %v, resource %v", i, uerr, err)
			}
			if i%2 == 1 && (uerr != nil || err != nil) {
				return fmt.Errorf("caller %d: Update %v, resource %v", i, uerr, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A caller that gives up while queued gets its context's error and its fn
// never runs; one already taken by the writer gets the commit's answer.
func TestCancelWhileQueued(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "host.db"), Options{})
	running, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(context.Background(), func(tx store.Tx) error {
			close(running)
			<-release
			return tx.CreateResource(testResource("first", "uid-1"))
		})
	}()
	<-running
	ctx, cancel := context.WithCancel(t.Context())
	var ran atomic.Bool
	second := make(chan error, 1)
	go func() {
		second <- s.Update(ctx, func(tx store.Tx) error {
			ran.Store(true)
			return tx.CreateResource(testResource("second", "uid-2"))
		})
	}()
	for len(s.queue) == 0 { // wait until it is queued behind the first
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled queued Update = %v, want context.Canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first Update: %v", err)
	}
	if err := s.Update(t.Context(), func(store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Fatal("the canceled Update's fn ran")
	}
	err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.ResourceByUID("uid-2")
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("resource of the canceled Update: %v", err)
	}
}

func TestClosed(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "host.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Update(t.Context(), func(store.Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Update after Close = %v, want ErrClosed", err)
	}
	if err := s.View(t.Context(), func(store.Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("View after Close = %v, want ErrClosed", err)
	}
}

// A Tx kept past its fn cannot write into a later caller's transaction.
func TestTxUnusableAfterFn(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "host.db"), Options{})
	var kept store.Tx
	if err := s.Update(t.Context(), func(tx store.Tx) error { kept = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := kept.CreateResource(testResource("late", "uid-1")); !errors.Is(err, errTxDone) {
		t.Fatalf("CreateResource on a finished Tx = %v, want errTxDone", err)
	}
	if _, err := kept.ResourceByUID("uid-1"); !errors.Is(err, errTxDone) {
		t.Fatalf("ResourceByUID on a finished Tx = %v, want errTxDone", err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/var/lib/xdg")
	if got := DefaultPath(); got != "/var/lib/xdg/takoform/host.db" {
		t.Errorf("DefaultPath with XDG_DATA_HOME = %q", got)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/tako")
	if got := DefaultPath(); got != "/home/tako/.local/share/takoform/host.db" {
		t.Errorf("DefaultPath without XDG_DATA_HOME = %q", got)
	}
}
