package gateway_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
)

func (f *fixture) addBucket(t *testing.T, tenant, uid string) {
	t.Helper()
	r := resource(tenant, gateway.KindBucket, uid, uid)
	if err := f.st.Update(context.Background(), func(tx store.Tx) error { return tx.CreateResource(r) }); err != nil {
		t.Fatal(err)
	}
}

func objPath(route, key string, extra ...string) string {
	p := "/objects/v1/" + route + "?key=" + url.QueryEscape(key)
	for _, e := range extra {
		p += "&" + e
	}
	return p
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// bodyFiles lists the body files of a bucket's directory.
func (f *fixture) bodyFiles(t *testing.T, bucket string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(f.dataDir, "objects", bucket))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestObjectsPutGetHeadDelete(t *testing.T) {
	f := newFixture(t)
	f.addBucket(t, "acme", "uid-b")
	f.addBucket(t, "globex", "uid-b-globex")
	a := f.do(t, "PUT", objPath("object", "dir/a.bin", "contentType=application%2Fx-test"), check11, nil, "uid-b")
	var put struct {
		ETag string
		Size int64
	}
	if a.status != 200 || json.Unmarshal(a.body, &put) != nil || put.ETag != sum(check11) || put.Size != 15 {
		t.Fatalf("put: %d %s; want etag %s", a.status, a.body, sum(check11))
	}
	a = f.do(t, "GET", objPath("object", "dir/a.bin"), nil, nil, "uid-b")
	meta, _ := base64.StdEncoding.DecodeString(a.header.Get(gateway.ObjectHeader))
	var m map[string]any
	_ = json.Unmarshal(meta, &m)
	if a.status != 200 || !bytes.Equal(a.body, check11) || m["etag"] != sum(check11) || m["contentType"] != "application/x-test" || m["partial"] != false || m["size"] != 15.0 {
		t.Errorf("get: %d %x %s", a.status, a.body, meta)
	}
	a = f.do(t, "GET", objPath("head", "dir/a.bin"), nil, nil, "uid-b")
	if a.status != 200 || !strings.Contains(string(a.body), `"size":15`) || !strings.Contains(string(a.body), `"uploadedAtMillis":`) {
		t.Errorf("head: %d %s", a.status, a.body)
	}
	a = f.do(t, "GET", objPath("object", "dir/a.bin", "offset=7", "length=4"), nil, nil, "uid-b")
	meta, _ = base64.StdEncoding.DecodeString(a.header.Get(gateway.ObjectHeader))
	if a.status != 200 || string(a.body) != "TAKO" || !strings.Contains(string(meta), `"partial":true,"range":{"length":4,"offset":7}`) {
		t.Errorf("ranged get: %d %q %s", a.status, a.body, meta)
	}
	if a := f.do(t, "GET", objPath("object", "dir/a.bin", "offset=11"), nil, nil, "uid-b"); string(a.body) != "FORM" {
		t.Errorf("get from an offset to the end: %q", a.body)
	}
	for name, tc := range map[string]struct {
		method, path string
		body         []byte
		code         string
	}{
		"an offset at the size":        {"GET", objPath("object", "dir/a.bin", "offset=15"), nil, "range_not_satisfiable"},
		"get ifMatch another etag":     {"GET", objPath("object", "dir/a.bin", "ifMatch=x"), nil, "precondition_failed"},
		"get ifNoneMatch its etag":     {"GET", objPath("object", "dir/a.bin", "ifNoneMatch="+put.ETag), nil, "precondition_failed"},
		"put ifNoneMatch * on a key":   {"PUT", objPath("object", "dir/a.bin", "ifNoneMatch=*"), []byte("new"), "precondition_failed"},
		"put ifMatch another etag":     {"PUT", objPath("object", "dir/a.bin", "ifMatch=x"), []byte("new"), "precondition_failed"},
		"a count unlike contentLength": {"PUT", objPath("object", "dir/a.bin", "contentLength=4"), []byte("new"), "invalid_body"},
		"contentLength over the limit": {"PUT", objPath("object", "dir/a.bin", "contentLength=314572801"), []byte("new"), "value_too_large"},
		"a 1025-byte key":              {"PUT", objPath("object", strings.Repeat("k", 1025)), []byte("new"), "invalid_key"},
		"another tenant's bucket":      {"GET", objPath("object", "dir/a.bin"), nil, "backend_unavailable"},
		"an unknown option":            {"PUT", objPath("object", "dir/a.bin", "storageClass=cold"), []byte("new"), "invalid_argument"},
	} {
		uid := "uid-b"
		if name == "another tenant's bucket" {
			uid = "uid-b-globex"
		}
		if a := f.do(t, tc.method, tc.path, tc.body, nil, uid); a.code() != tc.code {
			t.Errorf("%s: %d %s; want %s", name, a.status, a.body, tc.code)
		}
	}
	if a := f.do(t, "GET", objPath("object", "dir/a.bin"), nil, nil, "uid-b"); !bytes.Equal(a.body, check11) {
		t.Errorf("the refused writes changed the object: %x", a.body)
	}
	if files := f.bodyFiles(t, "uid-b"); len(files) != 1 {
		t.Errorf("body files after the refused writes: %v; want the one object's", files)
	}
	if a := f.do(t, "PUT", objPath("object", "dir/a.bin", "ifMatch="+put.ETag, "contentLength=3"), []byte("new"), nil, "uid-b"); a.status != 200 {
		t.Errorf("put ifMatch its etag: %d %s", a.status, a.body)
	}
	if a := f.do(t, "PUT", objPath("object", "fresh", "ifNoneMatch=*"), []byte{}, nil, "uid-b"); a.status != 200 {
		t.Errorf("put ifNoneMatch * of a new key: %d %s", a.status, a.body)
	}
	if files := f.bodyFiles(t, "uid-b"); len(files) != 2 {
		t.Errorf("body files after a replace: %v; want two (the replaced body removed)", files)
	}
	if a := f.do(t, "DELETE", objPath("object", "dir/a.bin"), nil, nil, "uid-b"); a.status != 204 {
		t.Errorf("delete: %d %s", a.status, a.body)
	}
	if a := f.do(t, "GET", objPath("object", "dir/a.bin"), nil, nil, "uid-b"); a.status != 404 || a.code() != "not_found" {
		t.Errorf("get after delete: %d %s", a.status, a.body)
	}
	if a := f.do(t, "GET", objPath("head", "dir/a.bin"), nil, nil, "uid-b"); a.status != 404 {
		t.Errorf("head after delete: %d %s", a.status, a.body)
	}
	if files := f.bodyFiles(t, "uid-b"); len(files) != 1 {
		t.Errorf("body files after the delete: %v; want one", files)
	}
}

func TestObjectsList(t *testing.T) {
	f := newFixture(t)
	f.addBucket(t, "acme", "uid-b")
	for _, k := range []string{"a/1", "a/2", "a/b/1", "a/b/2", "a/c/1", "a/\U0001F600", "b", "a/\uFFFD"} {
		if a := f.do(t, "PUT", objPath("object", k), []byte("v"), nil, "uid-b"); a.status != 200 {
			t.Fatalf("put %s: %d %s", k, a.status, a.body)
		}
	}
	type page struct {
		Objects []struct {
			Key  string
			Size int64
		}
		Prefixes  []string
		Truncated bool
		Cursor    string
	}
	list := func(q string) (page, answer) {
		a := f.do(t, "GET", "/objects/v1/list?"+q, nil, nil, "uid-b")
		var p page
		_ = json.Unmarshal(a.body, &p)
		return p, a
	}
	p, a := list("prefix=a%2F&delimiter=%2F")
	keys := func(p page) string {
		var ks []string
		for _, o := range p.Objects {
			ks = append(ks, o.Key)
		}
		return strings.Join(ks, " ")
	}
	if a.status != 200 || keys(p) != "a/1 a/2 a/\uFFFD a/\U0001F600" || strings.Join(p.Prefixes, " ") != "a/b/ a/c/" || p.Truncated {
		t.Errorf("list a/ by /: %d %s", a.status, a.body)
	}
	p, _ = list("prefix=a%2F&delimiter=%2F&limit=3")
	if keys(p) != "a/1 a/2" || strings.Join(p.Prefixes, " ") != "a/b/" || !p.Truncated || p.Cursor == "" {
		t.Fatalf("first page of 3: %+v", p)
	}
	next, _ := list("prefix=a%2F&delimiter=%2F&limit=3&cursor=" + url.QueryEscape(p.Cursor))
	if keys(next) != "a/\uFFFD a/\U0001F600" || strings.Join(next.Prefixes, " ") != "a/c/" || next.Truncated {
		t.Errorf("second page: %+v", next)
	}
	if _, a := list("prefix=b&cursor=" + url.QueryEscape(p.Cursor)); a.code() != "invalid_cursor" {
		t.Errorf("a cursor of another listing: %d %s", a.status, a.body)
	}
	if p, _ := list(""); len(p.Objects) != 8 || p.Truncated {
		t.Errorf("the whole bucket: %+v", p)
	}
	if _, a := list("delimiter=" + strings.Repeat("x", 17)); a.code() != "invalid_argument" {
		t.Errorf("a 17-character delimiter: %d %s", a.status, a.body)
	}
}

func TestObjectsMultipart(t *testing.T) {
	f := newFixture(t)
	f.addBucket(t, "acme", "uid-b")
	create := func(key string) string {
		a := f.do(t, "POST", objPath("uploads", key, "contentType=video%2Fmp4"), nil, nil, "uid-b")
		var u struct{ UploadID string }
		if a.status != 200 || json.Unmarshal(a.body, &u) != nil || u.UploadID == "" {
			t.Fatalf("create: %d %s", a.status, a.body)
		}
		return u.UploadID
	}
	part := func(key, id string, n int, body []byte) string {
		a := f.do(t, "PUT", objPath("part", key, "upload="+id, "part="+strconv.Itoa(n)), body, nil, "uid-b")
		var p struct {
			ETag       string
			PartNumber int
		}
		if a.status != 200 || json.Unmarshal(a.body, &p) != nil || p.PartNumber != n || p.ETag != sum(body) {
			t.Fatalf("part %d: %d %s", n, a.status, a.body)
		}
		return p.ETag
	}
	complete := func(key, id string, parts ...any) answer {
		b, _ := json.Marshal(map[string]any{"parts": parts})
		return f.do(t, "POST", objPath("complete", key, "upload="+id), b, nil, "uid-b")
	}
	first := bytes.Repeat([]byte{0xab}, gateway.MinObjectPartBytes)
	id := create("big")
	e1 := part("big", id, 1, first)
	part("big", id, 2, []byte("draft"))
	e2 := part("big", id, 2, []byte("tail")) // replaces the draft
	e3 := part("big", id, 3, []byte("unlisted"))
	if a := complete("big", id, map[string]any{"partNumber": 2, "etag": e2}, map[string]any{"partNumber": 1, "etag": e1}); a.code() != "invalid_part" {
		t.Errorf("parts out of order: %d %s", a.status, a.body)
	}
	if a := complete("big", id, map[string]any{"partNumber": 1, "etag": e2}); a.code() != "invalid_part" {
		t.Errorf("a wrong etag: %d %s", a.status, a.body)
	}
	if a := complete("big", id, map[string]any{"partNumber": 2, "etag": e2}, map[string]any{"partNumber": 3, "etag": e3}); a.code() != "invalid_part" {
		t.Errorf("a small part before the last: %d %s", a.status, a.body)
	}
	if a := complete("other", id, map[string]any{"partNumber": 1, "etag": e1}); a.code() != "upload_not_found" {
		t.Errorf("completing under another key: %d %s", a.status, a.body)
	}
	a := complete("big", id, map[string]any{"partNumber": 1, "etag": e1}, map[string]any{"partNumber": 2, "etag": e2})
	whole := append(append([]byte{}, first...), "tail"...)
	if a.status != 200 || !strings.Contains(string(a.body), sum(whole)) {
		t.Fatalf("complete: %d %s; want etag %s", a.status, a.body, sum(whole))
	}
	if g := f.do(t, "GET", objPath("object", "big"), nil, nil, "uid-b"); !bytes.Equal(g.body, whole) {
		t.Errorf("the completed object: %d bytes", len(g.body))
	}
	if files := f.bodyFiles(t, "uid-b"); len(files) != 1 {
		t.Errorf("body files after completion: %v; want only the object's (every part removed)", files)
	}
	if a := complete("big", id, map[string]any{"partNumber": 1, "etag": e1}); a.code() != "upload_not_found" {
		t.Errorf("completing twice: %d %s", a.status, a.body)
	}
	id2 := create("gone")
	part("gone", id2, 1, []byte("x"))
	if a := f.do(t, "PUT", objPath("part", "gone", "upload="+id2, "part=10001"), []byte("x"), nil, "uid-b"); a.code() != "invalid_part" {
		t.Errorf("part 10001: %d %s", a.status, a.body)
	}
	if a := f.do(t, "DELETE", objPath("upload", "gone", "upload="+id2), nil, nil, "uid-b"); a.status != 204 {
		t.Errorf("abort: %d %s", a.status, a.body)
	}
	if a := f.do(t, "DELETE", objPath("upload", "gone", "upload="+id2), nil, nil, "uid-b"); a.code() != "upload_not_found" {
		t.Errorf("abort twice: %d %s", a.status, a.body)
	}
	if files := f.bodyFiles(t, "uid-b"); len(files) != 1 {
		t.Errorf("body files after the abort: %v; want one", files)
	}
	if a := f.do(t, "GET", objPath("object", "gone"), nil, nil, "uid-b"); a.status != 404 {
		t.Errorf("an aborted upload made an object: %d", a.status)
	}
}

// Deleting the bucket deletes its rows at once and its bodies with the
// sweep.
func TestObjectsBucketDelete(t *testing.T) {
	f := newFixture(t, gateway.WithObjectStorageLimit(100))
	f.addBucket(t, "acme", "uid-b")
	if a := f.do(t, "PUT", objPath("object", "k"), bytes.Repeat([]byte("x"), 60), nil, "uid-b"); a.status != 200 {
		t.Fatalf("put: %d %s", a.status, a.body)
	}
	a := f.do(t, "PUT", objPath("object", "k2"), bytes.Repeat([]byte("x"), 60), nil, "uid-b")
	if a.code() != "value_too_large" || !strings.Contains(string(a.body), "limit of 100 bytes") {
		t.Errorf("over the tenant's object limit: %d %s", a.status, a.body)
	}
	if files := f.bodyFiles(t, "uid-b"); len(files) != 1 {
		t.Errorf("body files after the refused put: %v", files)
	}
	if err := f.st.Update(context.Background(), func(tx store.Tx) error { return tx.DeleteResource("uid-b") }); err != nil {
		t.Fatal(err)
	}
	swept, err := f.gw.Sweep(context.Background(), 10)
	if err != nil || swept["object_buckets"] != 1 {
		t.Errorf("Sweep: %v %v; want one bucket's bodies removed", swept, err)
	}
	if _, err := os.Stat(filepath.Join(f.dataDir, "objects", "uid-b")); !os.IsNotExist(err) {
		t.Errorf("the deleted bucket's directory: %v", err)
	}
}

// A staged (streamed) body is stored only when the put names it with the
// count the stream passed.
func TestObjectsStagedBody(t *testing.T) {
	f := newFixture(t)
	f.addBucket(t, "acme", "uid-b")
	f.addBucket(t, "globex", "uid-b-globex")
	stage := func() string {
		a := f.do(t, "PUT", "/objects/v1/stage", []byte("streamed"), nil, "uid-b")
		var s struct {
			Staged string
			Size   int64
		}
		if a.status != 200 || json.Unmarshal(a.body, &s) != nil || s.Size != 8 {
			t.Fatalf("stage: %d %s", a.status, a.body)
		}
		return s.Staged
	}
	s := stage()
	if a := f.do(t, "PUT", objPath("object", "k", "staged="+s, "size=7"), nil, nil, "uid-b"); a.code() != "invalid_body" {
		t.Errorf("a count unlike what arrived: %d %s", a.status, a.body)
	}
	if a := f.do(t, "PUT", objPath("object", "k", "staged="+s, "size=8"), nil, nil, "uid-b"); a.code() != "invalid_body" {
		t.Errorf("a staging refused once, named again: %d %s", a.status, a.body)
	}
	if a := f.do(t, "GET", objPath("head", "k"), nil, nil, "uid-b"); a.status != 404 {
		t.Errorf("a refused staged put stored an object: %d", a.status)
	}
	s = stage()
	if a := f.do(t, "PUT", objPath("object", "k", "staged="+s, "size=8"), nil, nil, "uid-b-globex"); a.code() != "backend_unavailable" && a.code() != "invalid_body" {
		t.Errorf("another tenant naming the staging: %d %s", a.status, a.body)
	}
	if a := f.do(t, "PUT", objPath("object", "k", "staged="+s, "size=8"), nil, nil, "uid-b"); a.status != 200 {
		t.Fatalf("the staged put: %d %s", a.status, a.body)
	}
	if a := f.do(t, "GET", objPath("object", "k"), nil, nil, "uid-b"); string(a.body) != "streamed" {
		t.Errorf("the staged object: %q", a.body)
	}
	if files := f.bodyFiles(t, "uid-b"); len(files) != 1 || !strings.HasPrefix(files[0], "o-") {
		t.Errorf("body files: %v; want the one object's (the refused staging removed)", files)
	}
}
