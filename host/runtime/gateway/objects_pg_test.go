package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// pgReplica is one gateway over its own Store on a shared PostgreSQL
// database and no data directory, as each replica of a host on
// PostgreSQL runs it (repo decision 0061).
func pgReplica(t *testing.T, url string) *fixture {
	t.Helper()
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := &fixture{st: st}
	f.gw = gateway.New(st, "", nil)
	t.Cleanup(func() { _ = f.gw.Close() })
	f.srv = httptest.NewServer(f.gw.ForTenant("acme"))
	t.Cleanup(f.srv.Close)
	return f
}

// chunkRows counts the stored chunks of bucket.
func chunkRows(t *testing.T, st store.Store, bucket string) int {
	t.Helper()
	var n int
	if err := st.(*postgres.Store).Pool().QueryRow(context.Background(), `SELECT count(*) FROM object_chunks WHERE bucket = $1`, bucket).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestObjectsOnPostgresServeEveryReplica: on PostgreSQL object bodies
// live in the database as 1 MiB chunks, so an object put through one
// replica's gateway — whole, staged (streamed) or by multipart — is read
// byte-identical, whole and by ranges across chunk edges, through
// another's; replacing, deleting and completing remove the bodies nothing
// names; create-only puts of one key through both at once create it once;
// and deleting the bucket deletes its chunks.
func TestObjectsOnPostgresServeEveryReplica(t *testing.T) {
	url := pgtest.URL(t)
	a, b := pgReplica(t, url), pgReplica(t, url)
	a.addBucket(t, "acme", "uid-b")
	big := make([]byte, 2*store.ObjectChunkBytes+12345)
	for i := range big {
		big[i] = byte(i*7 + i/store.ObjectChunkBytes)
	}
	if r := a.do(t, "PUT", objPath("object", "big.bin"), big, nil, "uid-b"); r.status != 200 || !strings.Contains(string(r.body), sum(big)) {
		t.Fatalf("put through A: %d %s", r.status, r.body)
	}
	if n := chunkRows(t, a.st, "uid-b"); n != 3 {
		t.Errorf("%d chunks stored for a body of %d bytes; want 3", n, len(big))
	}
	if r := b.do(t, "GET", objPath("object", "big.bin"), nil, nil, "uid-b"); r.status != 200 || !bytes.Equal(r.body, big) {
		t.Fatalf("get through B: %d, %d bytes; want the %d bytes put through A", r.status, len(r.body), len(big))
	}
	edge := int64(store.ObjectChunkBytes)
	for _, rg := range [][2]int64{{edge - 3, 10}, {0, edge}, {edge, edge}, {2*edge + 5, 100}, {2 * edge, 12345}} {
		r := b.do(t, "GET", objPath("object", "big.bin", "offset="+strconv.FormatInt(rg[0], 10), "length="+strconv.FormatInt(rg[1], 10)), nil, nil, "uid-b")
		if want := big[rg[0]:min(rg[0]+rg[1], int64(len(big)))]; r.status != 200 || !bytes.Equal(r.body, want) {
			t.Errorf("range %v through B: %d, %d bytes; want %d bytes", rg, r.status, len(r.body), len(want))
		}
	}
	if r := b.do(t, "PUT", objPath("object", "big.bin"), []byte("small"), nil, "uid-b"); r.status != 200 {
		t.Fatalf("replace through B: %d %s", r.status, r.body)
	}
	if n := chunkRows(t, a.st, "uid-b"); n != 1 {
		t.Errorf("%d chunks after the replace; want 1 (the replaced body removed)", n)
	}
	if r := a.do(t, "GET", objPath("object", "big.bin"), nil, nil, "uid-b"); string(r.body) != "small" {
		t.Errorf("get through A after B's replace: %q", r.body)
	}

	var staged struct {
		Staged string
		Size   int64
	}
	if r := a.do(t, "PUT", "/objects/v1/stage", []byte("streamed"), nil, "uid-b"); r.status != 200 || json.Unmarshal(r.body, &staged) != nil {
		t.Fatalf("stage through A: %d %s", r.status, r.body)
	}
	if r := a.do(t, "PUT", objPath("object", "s", "staged="+staged.Staged, "size=8"), nil, nil, "uid-b"); r.status != 200 {
		t.Fatalf("the staged put: %d %s", r.status, r.body)
	}
	if r := b.do(t, "GET", objPath("object", "s"), nil, nil, "uid-b"); string(r.body) != "streamed" {
		t.Errorf("the staged object through B: %q", r.body)
	}

	var up struct{ UploadID string }
	if r := a.do(t, "POST", objPath("uploads", "mp"), nil, nil, "uid-b"); r.status != 200 || json.Unmarshal(r.body, &up) != nil {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	first := bytes.Repeat([]byte{0xcd}, gateway.MinObjectPartBytes+1)
	e1 := a.do(t, "PUT", objPath("part", "mp", "upload="+up.UploadID, "part=1"), first, nil, "uid-b")
	e2 := b.do(t, "PUT", objPath("part", "mp", "upload="+up.UploadID, "part=2"), []byte("tail"), nil, "uid-b")
	var p1, p2 struct{ ETag string }
	if json.Unmarshal(e1.body, &p1) != nil || json.Unmarshal(e2.body, &p2) != nil {
		t.Fatalf("parts: %s %s", e1.body, e2.body)
	}
	parts, _ := json.Marshal(map[string]any{"parts": []any{map[string]any{"partNumber": 1, "etag": p1.ETag}, map[string]any{"partNumber": 2, "etag": p2.ETag}}})
	whole := append(append([]byte{}, first...), "tail"...)
	if r := b.do(t, "POST", objPath("complete", "mp", "upload="+up.UploadID), parts, nil, "uid-b"); r.status != 200 || !strings.Contains(string(r.body), sum(whole)) {
		t.Fatalf("complete through B of parts through A and B: %d %s", r.status, r.body)
	}
	if r := a.do(t, "GET", objPath("object", "mp"), nil, nil, "uid-b"); !bytes.Equal(r.body, whole) {
		t.Errorf("the completed object through A: %d bytes, want %d", len(r.body), len(whole))
	}
	// small + streamed + the completed object's 6 chunks; the parts removed
	if n := chunkRows(t, a.st, "uid-b"); n != 1+1+6 {
		t.Errorf("%d chunks after the completion; want 8 (every part removed)", n)
	}
	if r := b.do(t, "DELETE", objPath("object", "mp"), nil, nil, "uid-b"); r.status != 204 {
		t.Errorf("delete through B: %d %s", r.status, r.body)
	}
	if n := chunkRows(t, a.st, "uid-b"); n != 2 {
		t.Errorf("%d chunks after the delete; want 2", n)
	}

	// create-only puts of one new key through both replicas at once:
	// exactly one creates it (store.Objects.LockObject across replicas)
	results := make(chan answer, 8)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := []*fixture{a, b}[i%2]
			results <- f.do(t, "PUT", objPath("object", "once", "ifNoneMatch=*"), []byte("writer "+strconv.Itoa(i)), nil, "uid-b")
		}()
	}
	wg.Wait()
	close(results)
	created := 0
	for r := range results {
		switch {
		case r.status == 200:
			created++
		case r.code() != "precondition_failed":
			t.Errorf("a concurrent create-only put: %d %s", r.status, r.body)
		}
	}
	if created != 1 {
		t.Errorf("%d of 8 concurrent create-only puts through two replicas created the key; want exactly 1", created)
	}
	if n := chunkRows(t, a.st, "uid-b"); n != 3 {
		t.Errorf("%d chunks after the create-only puts; want 3 (the refused bodies removed)", n)
	}

	if err := a.st.Update(context.Background(), func(tx store.Tx) error { return tx.DeleteResource("uid-b") }); err != nil {
		t.Fatal(err)
	}
	if n := chunkRows(t, a.st, "uid-b"); n != 0 {
		t.Errorf("%d chunks of a deleted bucket; want none", n)
	}
	if swept, err := b.gw.Sweep(context.Background(), 10); err != nil {
		t.Errorf("Sweep on a host with no data directory: %v %v", swept, err)
	}
}

// TestObjectsOnPostgresReadBodiesFromBefore: a replica on PostgreSQL
// given --worker-data serves a body written there before bodies moved
// into the database (or copied with a SQLite host's directory) from its
// file, and removes the file with the object; a replica without the
// directory says the body is missing rather than answering other bytes.
func TestObjectsOnPostgresReadBodiesFromBefore(t *testing.T) {
	url := pgtest.URL(t)
	dir := t.TempDir()
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := &fixture{st: st, dataDir: dir}
	f.gw = gateway.New(st, dir, nil)
	f.srv = httptest.NewServer(f.gw.ForTenant("acme"))
	t.Cleanup(f.srv.Close)
	f.addBucket(t, "acme", "uid-b")
	if err := os.MkdirAll(filepath.Join(dir, "objects", "uid-b"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := []byte("a body from before")
	if err := os.WriteFile(filepath.Join(dir, "objects", "uid-b", "o-legacy"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	o := &store.Object{Tenant: "acme", Bucket: "uid-b", Key: "old", File: "o-legacy", Size: int64(len(old)), ETag: sum(old)}
	if err := st.Update(context.Background(), func(tx store.Tx) error { return tx.PutObject(o) }); err != nil {
		t.Fatal(err)
	}
	if r := f.do(t, "GET", objPath("object", "old", "offset=2", "length=4"), nil, nil, "uid-b"); r.status != 200 || string(r.body) != "body" {
		t.Errorf("a ranged get of a body from before: %d %q", r.status, r.body)
	}
	other := pgReplica(t, url)
	if r := other.do(t, "GET", objPath("object", "old"), nil, nil, "uid-b"); r.status == 200 {
		t.Errorf("a replica without the directory answered 200 %q for a body it does not hold", r.body)
	}
	if r := f.do(t, "DELETE", objPath("object", "old"), nil, nil, "uid-b"); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if files := f.bodyFiles(t, "uid-b"); len(files) != 0 {
		t.Errorf("body files after the delete: %v; want none", files)
	}
}
