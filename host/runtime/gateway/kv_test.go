package gateway_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
)

// The 15 bytes of runtime check 11 (spec/runtime-v1.md §8.3).
var check11 = []byte{0x00, 0x01, 0x02, 0x7f, 0x7f, 0xfe, 0xff, 'T', 'A', 'K', 'O', 'F', 'O', 'R', 'M'}

func kvPath(key string, extra ...string) string {
	p := "/kv/v1/value?key=" + url.QueryEscape(key)
	for _, e := range extra {
		p += "&" + e
	}
	return p
}

func metaHeader(json string) http.Header {
	return http.Header{gateway.KVMetadataHeader: {base64.StdEncoding.EncodeToString([]byte(json))}}
}

func TestKVRoundTripsBytesAndMetadata(t *testing.T) {
	f := newFixture(t)
	if a := f.do(t, "PUT", kvPath("runtime-abi:kv-round-trip"), check11, nil, "uid-kv"); a.status != 204 {
		t.Fatalf("put: %d %s", a.status, a.body)
	}
	a := f.do(t, "GET", kvPath("runtime-abi:kv-round-trip"), nil, nil, "uid-kv")
	if a.status != 200 || !bytes.Equal(a.body, check11) || a.header.Get(gateway.KVMetadataHeader) != "" {
		t.Fatalf("get: %d %x metadata %q; want 200 %x and none", a.status, a.body, a.header.Get(gateway.KVMetadataHeader), check11)
	}
	if a := f.do(t, "GET", kvPath("never-written"), nil, nil, "uid-kv"); a.status != 404 || a.code() != "not_found" {
		t.Errorf("get of an absent key: %d %s", a.status, a.body)
	}
	if a := f.do(t, "PUT", kvPath("m"), []byte{}, metaHeader(`{"z":"1","a":"é"}`), "uid-kv"); a.status != 204 {
		t.Fatalf("put with metadata: %d %s", a.status, a.body)
	}
	a = f.do(t, "GET", kvPath("m"), nil, nil, "uid-kv")
	meta, _ := base64.StdEncoding.DecodeString(a.header.Get(gateway.KVMetadataHeader))
	if a.status != 200 || len(a.body) != 0 || string(meta) != `{"a":"é","z":"1"}` {
		t.Errorf("get with metadata: %d %q metadata %s; want an empty value and canonical metadata", a.status, a.body, meta)
	}
	if a := f.do(t, "DELETE", kvPath("m"), nil, nil, "uid-kv"); a.status != 204 {
		t.Errorf("delete: %d %s", a.status, a.body)
	}
	if a := f.do(t, "DELETE", kvPath("m"), nil, nil, "uid-kv"); a.status != 204 {
		t.Errorf("delete of an absent key: %d %s", a.status, a.body)
	}
	if a := f.do(t, "GET", kvPath("m"), nil, nil, "uid-kv"); a.status != 404 {
		t.Errorf("get after delete: %d %s", a.status, a.body)
	}
}

// A request reaches only a live resource of its tenant and route kind,
// named by exactly one binding header; a refusal writes nothing.
func TestKVBindingIdentity(t *testing.T) {
	f := newFixture(t)
	globex := httptestServer(t, f.gw.ForTenant("globex"))
	for name, uids := range map[string][]string{
		"no binding header":          nil,
		"two binding headers":        {"uid-kv", "uid-kv"},
		"another tenant's namespace": {"uid-kv-globex"},
		"a database on the KV route": {"uid-sql"},
		"an unknown UID":             {"uid-nothing"},
		"a list of UIDs":             {"uid-kv, uid-kv-globex"},
	} {
		a := f.do(t, "PUT", kvPath("k"), []byte("x"), nil, uids...)
		if a.status != 403 || a.code() != "backend_unavailable" || strings.Contains(string(a.body), "globex") {
			t.Errorf("%s: put answered %d %s; want 403 backend_unavailable naming nothing", name, a.status, a.body)
		}
	}
	if a := globex.do(t, "GET", kvPath("k"), nil, nil, "uid-kv-globex"); a.status != 404 {
		t.Errorf("globex's namespace after acme's refused put: %d %s; want 404", a.status, a.body)
	}
	if a := f.do(t, "GET", kvPath("k"), nil, nil, "uid-kv"); a.status != 404 {
		t.Errorf("acme's namespace after refused puts: %d %s; want 404", a.status, a.body)
	}
}

func httptestServer(t *testing.T, h http.Handler) *fixture {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{srv: srv}
}

func TestKVKeyRules(t *testing.T) {
	f := newFixture(t)
	for name, tc := range map[string]struct {
		rawKey string // already query-escaped
		code   string
	}{
		"empty":                         {"", "invalid_key"},
		"513 ASCII bytes":               {strings.Repeat("a", 513), "invalid_key"},
		"171 three-byte characters":     {url.QueryEscape(strings.Repeat("€", 171)), "invalid_key"},
		"a lone surrogate (WTF-8)":      {"%ED%A0%80", "invalid_key"},
		"bytes that are not UTF-8":      {"%FF", "invalid_key"},
		"512 ASCII bytes":               {strings.Repeat("a", 512), ""},
		"128 astral characters":         {url.QueryEscape(strings.Repeat("😀", 128)), ""},
		"129 astral characters":         {url.QueryEscape(strings.Repeat("😀", 129)), "invalid_key"},
		"a NUL and a surrogate pair ok": {"%00" + url.QueryEscape("😀"), ""},
	} {
		a := f.do(t, "PUT", "/kv/v1/value?key="+tc.rawKey, []byte("v"), nil, "uid-kv")
		switch {
		case tc.code == "" && a.status != 204:
			t.Errorf("%s: put answered %d %s; want 204", name, a.status, a.body)
		case tc.code != "" && (a.status != 400 || a.code() != tc.code):
			t.Errorf("%s: put answered %d %s; want 400 %s", name, a.status, a.body, tc.code)
		}
		if g := f.do(t, "GET", "/kv/v1/value?key="+tc.rawKey, nil, nil, "uid-kv"); tc.code != "" && g.code() != tc.code {
			t.Errorf("%s: get answered %d %s; want %s", name, g.status, g.body, tc.code)
		}
	}
}

func TestKVValueAndMetadataLimits(t *testing.T) {
	f := newFixture(t)
	max := bytes.Repeat([]byte{0xfe}, gateway.MaxKVValueBytes)
	if a := f.do(t, "PUT", kvPath("big"), max, nil, "uid-kv"); a.status != 204 {
		t.Fatalf("put of %d bytes: %d %s", len(max), a.status, a.body)
	}
	if a := f.do(t, "GET", kvPath("big"), nil, nil, "uid-kv"); !bytes.Equal(a.body, max) {
		t.Errorf("get of the largest value: %d bytes back", len(a.body))
	}
	if a := f.do(t, "PUT", kvPath("big"), append(max, 0), nil, "uid-kv"); a.status != 413 || a.code() != "value_too_large" {
		t.Errorf("put of one byte more: %d %s", a.status, a.body)
	}
	entries := map[string]string{}
	for i := range 65 {
		entries[fmt.Sprintf("%02d", i)] = ""
	}
	many, _ := json.Marshal(entries)
	// 1024 bytes exactly: {"k":"<1016 x>"} is 8 + 1016.
	exact := `{"k":"` + strings.Repeat("x", 1016) + `"}`
	for name, tc := range map[string]struct {
		meta, code string
	}{
		"65 entries":                {string(many), "metadata_too_large"},
		"1025 bytes":                {`{"k":"` + strings.Repeat("x", 1017) + `"}`, "metadata_too_large"},
		"a value that is no string": {`{"k":1}`, "invalid_argument"},
		"not an object":             {`["k"]`, "invalid_argument"},
		"1024 bytes":                {exact, ""},
		"a 257-character name":      {`{"` + strings.Repeat("n", 257) + `":""}`, "metadata_too_large"},
	} {
		a := f.do(t, "PUT", kvPath("meta"), []byte("v"), metaHeader(tc.meta), "uid-kv")
		if (tc.code == "" && a.status != 204) || (tc.code != "" && a.code() != tc.code) {
			t.Errorf("%s: put answered %d %s; want %q", name, a.status, a.body, tc.code)
		}
	}
}

func TestKVTTL(t *testing.T) {
	f := newFixture(t)
	for _, ttl := range []string{"59", "315360001", "1.5", "x"} {
		if a := f.do(t, "PUT", kvPath("k", "ttl="+ttl), []byte("v"), nil, "uid-kv"); a.code() != "invalid_argument" {
			t.Errorf("ttl %s: %d %s; want invalid_argument", ttl, a.status, a.body)
		}
	}
	if a := f.do(t, "PUT", kvPath("k", "ttl=60"), []byte("v"), nil, "uid-kv"); a.status != 204 {
		t.Fatalf("put with ttl 60: %d %s", a.status, a.body)
	}
	f.now = f.now.Add(59 * time.Second)
	if a := f.do(t, "GET", kvPath("k"), nil, nil, "uid-kv"); a.status != 200 {
		t.Errorf("get 59 s after: %d", a.status)
	}
	f.now = f.now.Add(time.Second)
	if a := f.do(t, "GET", kvPath("k"), nil, nil, "uid-kv"); a.status != 404 {
		t.Errorf("get 60 s after: %d; want 404", a.status)
	}
	swept, err := f.gw.Sweep(context.Background(), 100)
	if n := swept["kv_entries"]; err != nil || n != 1 {
		t.Errorf("Sweep removed %d expired entries (%v); want 1", n, err)
	}
}

type listAnswer struct {
	Keys         []struct{ Name string }
	ListComplete bool
	Cursor       string
}

func (f *fixture) list(t *testing.T, query string) (listAnswer, answer) {
	t.Helper()
	a := f.do(t, "GET", "/kv/v1/keys?"+query, nil, nil, "uid-kv")
	var l listAnswer
	if a.status == 200 {
		if err := json.Unmarshal(a.body, &l); err != nil {
			t.Fatal(err)
		}
	}
	return l, a
}

func TestKVList(t *testing.T) {
	f := newFixture(t)
	err := f.st.Update(context.Background(), func(tx store.Tx) error {
		for i := range 1001 {
			if err := tx.KVPut(&store.KVEntry{Tenant: "acme", Namespace: "uid-kv", Key: fmt.Sprintf("n%04d", i), Value: []byte("v")}); err != nil {
				return err
			}
		}
		for _, k := range []string{"a\uFFFD", "a\U0001F600", "ab"} {
			if err := tx.KVPut(&store.KVEntry{Tenant: "acme", Namespace: "uid-kv", Key: k, Value: []byte("v")}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	l, a := f.list(t, "prefix=a")
	if a.status != 200 || !l.ListComplete || l.Cursor != "" || len(l.Keys) != 3 ||
		l.Keys[0].Name != "ab" || l.Keys[1].Name != "a\uFFFD" || l.Keys[2].Name != "a\U0001F600" {
		t.Errorf("list under a: %d %s; want ab, a\\uFFFD, a😀 (UTF-8 byte order), complete", a.status, a.body)
	}
	l, a = f.list(t, "prefix=n")
	if a.status != 200 || l.ListComplete || len(l.Keys) != 1000 || l.Cursor == "" {
		t.Fatalf("list under n: %d, %d keys, complete %v; want the default page of 1000 and a cursor", a.status, len(l.Keys), l.ListComplete)
	}
	next, a := f.list(t, "prefix=n&cursor="+url.QueryEscape(l.Cursor))
	if a.status != 200 || !next.ListComplete || len(next.Keys) != 1 || next.Keys[0].Name != "n1000" || next.Cursor != "" {
		t.Errorf("the second page: %d %s", a.status, a.body)
	}
	for name, q := range map[string]string{
		"a cursor for another prefix": "prefix=m&cursor=" + url.QueryEscape(l.Cursor),
		"an altered cursor":           "prefix=n&cursor=" + url.QueryEscape(l.Cursor[:len(l.Cursor)-2]+"AA"),
		"a cursor never issued":       "prefix=n&cursor=n0999",
	} {
		if _, a := f.list(t, q); a.code() != "invalid_cursor" {
			t.Errorf("%s: %d %s; want invalid_cursor", name, a.status, a.body)
		}
	}
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "other=1"} {
		if _, a := f.list(t, q); a.code() != "invalid_argument" {
			t.Errorf("list?%s: %d %s; want invalid_argument", q, a.status, a.body)
		}
	}
	l, _ = f.list(t, "prefix=n&limit=2")
	if len(l.Keys) != 2 || l.Keys[1].Name != "n0001" || l.ListComplete {
		t.Errorf("list with limit 2: %+v", l)
	}
}

func TestKVTenantStorageLimit(t *testing.T) {
	f := newFixture(t, gateway.WithKVStorageLimit(100))
	if a := f.do(t, "PUT", kvPath("k1"), bytes.Repeat([]byte("x"), 50), nil, "uid-kv"); a.status != 204 {
		t.Fatalf("put under the limit: %d %s", a.status, a.body)
	}
	a := f.do(t, "PUT", kvPath("k2"), bytes.Repeat([]byte("x"), 60), nil, "uid-kv")
	if a.status != 413 || a.code() != "value_too_large" || !strings.Contains(string(a.body), "limit of 100 bytes") {
		t.Errorf("put over the tenant's limit: %d %s", a.status, a.body)
	}
	if a := f.do(t, "GET", kvPath("k2"), nil, nil, "uid-kv"); a.status != 404 {
		t.Errorf("the refused put was stored: %d", a.status)
	}
	if a := f.do(t, "PUT", kvPath("k1"), bytes.Repeat([]byte("x"), 90), nil, "uid-kv"); a.status != 204 {
		t.Errorf("replacing within the limit: %d %s", a.status, a.body)
	}
}

// Deleting the namespace resource deletes its entries; the binding is
// refused from then on.
func TestKVNamespaceDeleteDeletesData(t *testing.T) {
	f := newFixture(t)
	f.do(t, "PUT", kvPath("k"), []byte("v"), nil, "uid-kv")
	if err := f.st.Update(context.Background(), func(tx store.Tx) error { return tx.DeleteResource("uid-kv") }); err != nil {
		t.Fatal(err)
	}
	if a := f.do(t, "GET", kvPath("k"), nil, nil, "uid-kv"); a.status != 403 {
		t.Errorf("get through the deleted namespace's binding: %d %s", a.status, a.body)
	}
	err := f.st.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.KVGet("uid-kv", "k", f.now)
		if err == nil {
			t.Error("the deleted namespace's entry is still stored")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
