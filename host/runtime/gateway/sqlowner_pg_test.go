package gateway_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/wire"
)

// ownerReplica is one replica's gateway on a shared PostgreSQL database
// serving SQLiteDatabases with one owner each (repo decision 0063): its
// tenant routes on srv, its peer routes on peer, its lease short so a
// test sees a takeover quickly.
type ownerReplica struct {
	*fixture
	peer   *httptest.Server
	holder string
	copies string // where it keeps its copies of the databases it owns
}

const testLease = time.Second

func pgOwnerReplica(t testing.TB, url string) *ownerReplica {
	return pgOwnerReplicaLease(t, url, testLease)
}

func pgOwnerReplicaLease(t testing.TB, url string, lease time.Duration) *ownerReplica {
	t.Helper()
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	peer := httptest.NewUnstartedServer(nil)
	r := &ownerReplica{fixture: &fixture{st: st}, peer: peer, holder: "http://" + peer.Listener.Addr().String(), copies: t.TempDir()}
	r.gw = gateway.New(st, "", nil, gateway.WithSQLOwnership(gateway.SQLOwnership{Holder: r.holder, Dir: r.copies, Lease: lease}))
	t.Cleanup(func() { _ = r.gw.Close() })
	peer.Config.Handler = r.gw.PeerHandler()
	peer.Start()
	t.Cleanup(peer.Close)
	r.srv = httptest.NewServer(r.gw.ForTenant("acme"))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *ownerReplica) count(t *testing.T, table string) string {
	t.Helper()
	res := r.sql(t, "query", "SELECT count(*) AS n FROM "+table)
	if len(res.Rows) != 1 {
		t.Fatalf("count %s: %+v", table, res)
	}
	return fmt.Sprint(res.Rows[0]["n"]["value"])
}

func pageRows(t *testing.T, st store.Store, uid string) (pages, leases int) {
	t.Helper()
	pool := st.(*postgres.Store).Pool()
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM sql_pages WHERE uid = $1`, uid).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM leases WHERE name = $1`, store.SQLDatabaseLease(uid)).Scan(&leases); err != nil {
		t.Fatal(err)
	}
	return pages, leases
}

// TestSQLOnReplicasOneOwnerForwardingFailover: on PostgreSQL a database
// is served through every replica: calls and migrations through B are
// forwarded to A, which took the database first; once A is gone (its
// peer listener closed, its lease left to lapse), B takes the database
// over and rebuilds it from the store's pages with every acknowledged
// write and the migration ledger; A, back, forwards to B; deleting the
// resource deletes the pages and the lease.
func TestSQLOnReplicasOneOwnerForwardingFailover(t *testing.T) {
	url := pgtest.URL(t)
	a, b := pgOwnerReplica(t, url), pgOwnerReplica(t, url)
	ctx := context.Background()
	if err := a.st.Update(ctx, func(tx store.Tx) error {
		return tx.CreateResource(resource("acme", gateway.KindSQL, "db", "uid-sql"))
	}); err != nil {
		t.Fatal(err)
	}
	a.sql(t, "execute", "CREATE TABLE t (n INTEGER)")
	for i := range 5 {
		a.sql(t, "execute", "INSERT INTO t (n) VALUES (?1)", tagged("integer", fmt.Sprint(i)))
	}
	for i := 5; i < 10; i++ {
		b.sql(t, "execute", "INSERT INTO t (n) VALUES (?1)", tagged("integer", fmt.Sprint(i)))
	}
	if n := b.count(t, "t"); n != "10" {
		t.Fatalf("count through B: %s, want 10", n)
	}
	if n := a.count(t, "t"); n != "10" {
		t.Fatalf("count through A: %s, want 10", n)
	}
	var l store.Lease
	if err := a.st.View(ctx, func(tx store.Tx) (err error) { l, err = tx.Lease(store.SQLDatabaseLease("uid-sql")); return err }); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.Holder, a.holder+" ") {
		t.Fatalf("the lease is held by %q; want A (%s), which served the first call", l.Holder, a.holder)
	}
	mig := []gateway.MigrationFile{{Path: "0001.sql", Digest: "sha256:01", SQL: "CREATE TABLE m (x TEXT); INSERT INTO m VALUES ('one');"}}
	ledger, err := b.gw.ApplyMigrations(ctx, "uid-sql", mig)
	if err != nil || len(ledger) != 1 || ledger[0].Path != "0001.sql" {
		t.Fatalf("migrations through B: %+v, %v", ledger, err)
	}
	_, err = b.gw.ApplyMigrations(ctx, "uid-sql", []gateway.MigrationFile{{Path: "0009.sql", Digest: "sha256:09", SQL: "SELECT 1"}})
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.MigrationRequired {
		t.Fatalf("a changed migration set through B: %v; want the owner's migration_required carried back", err)
	}
	if pages, _ := pageRows(t, a.st, "uid-sql"); pages == 0 {
		t.Fatal("no pages stored for the database")
	}

	// A transaction of more pages than one store statement carries (about
	// 2 MiB: repo decision 0063).
	a.sql(t, "execute", "CREATE TABLE big (b BLOB)")
	a.sql(t, "execute", "INSERT INTO big VALUES (randomblob(2100000))")
	sample := func(r *ownerReplica) string {
		res := r.sql(t, "query", "SELECT length(b) AS n, substr(hex(b), 4000001, 64) AS s FROM big")
		return fmt.Sprint(res.Rows)
	}
	before := sample(a)

	a.peer.Close() // A is gone: its peer routes refuse connections, its lease lapses
	start := time.Now()
	b.sql(t, "execute", "INSERT INTO t (n) VALUES (?1)", tagged("integer", "10"))
	if took := time.Since(start); took > 3*testLease {
		t.Errorf("the takeover took %s; the lease is %s", took, testLease)
	}
	if n := b.count(t, "t"); n != "11" {
		t.Fatalf("after the takeover B counts %s rows; want the 10 acknowledged + 1", n)
	}
	if n := b.count(t, "m"); n != "1" {
		t.Fatalf("after the takeover the migrated table holds %s rows; want 1", n)
	}
	if after := sample(b); after != before {
		t.Fatalf("the 2 MiB row after the takeover reads %s; before it %s", after, before)
	}
	if ledger, err := b.gw.Ledger(ctx, "uid-sql"); err != nil || len(ledger) != 1 {
		t.Fatalf("ledger after the takeover: %+v, %v", ledger, err)
	}
	// A, back (a paused owner whose lease lapsed), forwards to B.
	a.peer = httptest.NewUnstartedServer(a.gw.PeerHandler())
	if n := a.count(t, "t"); n != "11" {
		t.Fatalf("A after the takeover counts %s; want B's 11", n)
	}

	if err := a.st.Update(ctx, func(tx store.Tx) error { return tx.DeleteResource("uid-sql") }); err != nil {
		t.Fatal(err)
	}
	if pages, leases := pageRows(t, a.st, "uid-sql"); pages != 0 || leases != 0 {
		t.Fatalf("after the delete %d pages and %d leases remain", pages, leases)
	}
	copyPath := filepath.Join(b.copies, "uid-sql.sqlite")
	if _, err := os.Stat(copyPath); err != nil {
		t.Fatalf("B, the owner, has no copy at %s before the sweep: %v", copyPath, err)
	}
	if swept, err := b.gw.Sweep(ctx, 10); err != nil || swept["sql_databases"] != 1 {
		t.Fatalf("B's sweep after the delete: %v, %v; want its copy removed", swept, err)
	}
	if _, err := os.Stat(copyPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("B's copy of the deleted database is still there: %v", err)
	}
}

// TestPeerRoutesRefuseUnsignedAndReplayed: the peer routes answer only a
// request signed with the store's key, once.
func TestPeerRoutesRefuseUnsignedAndReplayed(t *testing.T) {
	url := pgtest.URL(t)
	a := pgOwnerReplica(t, url)
	if err := a.st.Update(context.Background(), func(tx store.Tx) error {
		return tx.CreateResource(resource("acme", gateway.KindSQL, "db", "uid-sql"))
	}); err != nil {
		t.Fatal(err)
	}
	key, err := a.st.(store.SQLPages).PeerKey(context.Background())
	if err != nil || len(key) != 32 {
		t.Fatalf("peer key: %d bytes, %v", len(key), err)
	}
	uri := gateway.PeerPathPrefix + "sql/uid-sql/execute?family=v1alpha1"
	body := []byte(`{"sql":"CREATE TABLE x (y)"}`)
	digest := fmt.Sprintf("%x", sha256.Sum256(body))
	send := func(sig string, tampered ...byte) int {
		req, err := http.NewRequest("POST", a.peer.URL+uri, bytes.NewReader(append(bytes.Clone(body), tampered...)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Takoform-Peer-Body-Digest", digest)
		if sig != "" {
			req.Header.Set("Takoform-Peer-Signature", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	sign := func(k []byte, t int64) string {
		const nonce = "0123456789abcdef"
		m := hmac.New(sha256.New, k)
		fmt.Fprintf(m, "POST\n%s\n%d\n%s\n%s", uri, t, nonce, digest)
		return fmt.Sprintf("t=%d,n=%s,s=%s", t, nonce, hex.EncodeToString(m.Sum(nil)))
	}
	now := time.Now().UnixMilli()
	for name, sig := range map[string]string{
		"unsigned":    "",
		"another key": sign(bytes.Repeat([]byte{1}, 32), now),
		"stale":       sign(key, now-int64(2*time.Minute/time.Millisecond)),
		"malformed":   "s=" + strings.Repeat("0", 64),
		"no nonce":    strings.Replace(sign(key, now), "n=0123456789abcdef,", "", 1),
	} {
		if got := send(sig); got != http.StatusUnauthorized {
			t.Errorf("%s: %d; want 401", name, got)
		}
	}
	if got := send(sign(key, now+1), ' '); got != http.StatusUnauthorized {
		t.Errorf("a body other than the signed digest's: %d; want 401", got)
	}
	good := sign(key, now)
	if got := send(good); got != http.StatusOK {
		t.Fatalf("signed: %d; want 200", got)
	}
	if got := send(good); got != http.StatusUnauthorized {
		t.Fatalf("replayed: %d; want 401", got)
	}
}

// TestSQLOwnerHandsOverOnACleanStop: an owner that stops cleanly releases
// its lease, and the other replica, finding it gone, reads the lease
// again and takes the database over at once, well inside the lease it
// would otherwise wait out.
func TestSQLOwnerHandsOverOnACleanStop(t *testing.T) {
	url := pgtest.URL(t)
	const long = 30 * time.Second
	a, b := pgOwnerReplicaLease(t, url, long), pgOwnerReplicaLease(t, url, long)
	ctx := context.Background()
	if err := a.st.Update(ctx, func(tx store.Tx) error {
		return tx.CreateResource(resource("acme", gateway.KindSQL, "db", "uid-sql"))
	}); err != nil {
		t.Fatal(err)
	}
	a.sql(t, "execute", "CREATE TABLE t (n INTEGER)")
	b.sql(t, "execute", "INSERT INTO t VALUES (1)") // forwarded: B remembers A as the owner
	if err := a.gw.Close(); err != nil {            // the clean stop releases the lease
		t.Fatal(err)
	}
	a.peer.Close()
	start := time.Now()
	if n := b.count(t, "t"); n != "1" {
		t.Fatalf("B after A's clean stop counts %s; want 1", n)
	}
	if took := time.Since(start); took > long/3 {
		t.Errorf("B took the database over %s after A's clean stop; the released lease should not be waited out (%s)", took, long)
	}
}

// TestSQLOwnerRestartedAtItsURL: an owner killed and started again at the
// same peer URL within its lease answers the forwarded calls 421 (the
// lease names the dead process); the other replica, seeing the same
// holder again, waits for the lease to lapse and takes the database over
// rather than failing, and the restarted process forwards to it.
func TestSQLOwnerRestartedAtItsURL(t *testing.T) {
	url := pgtest.URL(t)
	a, b := pgOwnerReplica(t, url), pgOwnerReplica(t, url)
	ctx := context.Background()
	if err := a.st.Update(ctx, func(tx store.Tx) error {
		return tx.CreateResource(resource("acme", gateway.KindSQL, "db", "uid-sql"))
	}); err != nil {
		t.Fatal(err)
	}
	a.sql(t, "execute", "CREATE TABLE t (n INTEGER)")
	a.sql(t, "execute", "INSERT INTO t VALUES (1)")
	addr := a.peer.Listener.Addr().String()
	a.peer.Close() // killed: its lease is not released
	restarted := gateway.New(a.st, "", nil, gateway.WithSQLOwnership(gateway.SQLOwnership{Holder: a.holder, Dir: t.TempDir(), Lease: testLease}))
	t.Cleanup(func() { _ = restarted.Close() })
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the dead owner's address %s could not be listened on again: %v", addr, err)
	}
	peer := &httptest.Server{Listener: ln, Config: &http.Server{Handler: restarted.PeerHandler()}}
	peer.Start()
	t.Cleanup(peer.Close)
	if n := b.count(t, "t"); n != "1" {
		t.Fatalf("B while the owner's URL serves a restarted process counts %s; want 1", n)
	}
	r := &fixture{st: a.st, gw: restarted, srv: httptest.NewServer(restarted.ForTenant("acme"))}
	t.Cleanup(r.srv.Close)
	if res := r.sql(t, "query", "SELECT count(*) AS n FROM t"); fmt.Sprint(res.Rows[0]["n"]["value"]) != "1" {
		t.Fatalf("the restarted process reads %+v; want 1 row through B", res)
	}
}
