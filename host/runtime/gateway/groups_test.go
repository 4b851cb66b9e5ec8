package gateway_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
)

// addIn stores a resource of kind in the Edge group for tenant acme.
func (f *fixture) addIn(t *testing.T, group, kind, uid, spec string) {
	t.Helper()
	r := resourceIn(group, "acme", kind, uid, uid)
	r.Spec = []byte(spec)
	if err := f.st.Update(context.Background(), func(tx store.Tx) error { return tx.CreateResource(r) }); err != nil {
		t.Fatal(err)
	}
}

// TestBothEdgeGroupsEachUnderItsContract: a binding to a v1beta1
// EdgeKVNamespace, ObjectBucket or AtLeastOnceQueue is served like a
// v1alpha1 one, under the limits lane v1beta1 moved (spec/lane-v1beta1.md
// §7.1): keys of 467 and 979 bytes, messages of 127000 bytes. The v1alpha1
// resources keep 512, 1024 and 131072. A v1beta1 SQLiteDatabase is
// refused: its edge.sql is not served yet.
func TestBothEdgeGroupsEachUnderItsContract(t *testing.T) {
	f := newFixture(t)
	f.addIn(t, edge.GroupV1beta1, gateway.KindKV, "uid-kv-beta", `{}`)
	f.addIn(t, edge.GroupV1beta1, gateway.KindBucket, "uid-b-beta", `{}`)
	f.addIn(t, edge.GroupV1alpha1, gateway.KindBucket, "uid-b", `{}`)
	f.addIn(t, edge.GroupV1beta1, gateway.KindQueue, "uid-q-beta", `{"messageRetentionSeconds":60}`)
	f.addIn(t, edge.GroupV1alpha1, gateway.KindQueue, "uid-q", `{"messageRetentionSeconds":60}`)
	f.addIn(t, edge.GroupV1beta1, gateway.KindSQL, "uid-sql-beta", `{}`)

	kv := func(uid string, n int) answer {
		return f.do(t, "PUT", kvPath(strings.Repeat("k", n)), []byte("v"), nil, uid)
	}
	for _, c := range []struct {
		uid     string
		n, want int
	}{
		{"uid-kv-beta", gateway.MaxKVKeyBytesV1beta1, 204},
		{"uid-kv-beta", gateway.MaxKVKeyBytesV1beta1 + 1, 400},
		{"uid-kv", gateway.MaxKVKeyBytesV1beta1 + 1, 204},
		{"uid-kv", gateway.MaxKVKeyBytes + 1, 400},
	} {
		if a := kv(c.uid, c.n); a.status != c.want || (c.want == 400 && a.code() != "invalid_key") {
			t.Errorf("kv put of a %d-byte key to %s: %d %s, want %d", c.n, c.uid, a.status, a.body, c.want)
		}
	}
	if a := f.do(t, "GET", "/kv/v1/keys?prefix="+strings.Repeat("k", gateway.MaxKVKeyBytesV1beta1+1), nil, nil, "uid-kv-beta"); a.code() != "invalid_argument" {
		t.Errorf("kv list with a 468-character prefix in v1beta1: %d %s", a.status, a.body)
	}

	obj := func(uid string, n int) answer {
		return f.do(t, "PUT", "/objects/v1/object?key="+url.QueryEscape(strings.Repeat("o", n)), []byte("v"), nil, uid)
	}
	for _, c := range []struct {
		uid     string
		n, want int
	}{
		{"uid-b-beta", gateway.MaxObjectKeyBytesV1beta1, 200},
		{"uid-b-beta", gateway.MaxObjectKeyBytesV1beta1 + 1, 400},
		{"uid-b", gateway.MaxObjectKeyBytesV1beta1 + 1, 200},
		{"uid-b", gateway.MaxObjectKeyBytes + 1, 400},
	} {
		if a := obj(c.uid, c.n); a.status != c.want || (c.want == 400 && a.code() != "invalid_key") {
			t.Errorf("object put of a %d-byte key to %s: %d %s, want %d", c.n, c.uid, a.status, a.body, c.want)
		}
	}
	if a := f.do(t, "GET", "/objects/v1/list?prefix="+strings.Repeat("o", gateway.MaxObjectKeyBytesV1beta1+1), nil, nil, "uid-b-beta"); a.code() != "invalid_argument" {
		t.Errorf("object list with a 980-byte prefix in v1beta1: %d %s", a.status, a.body)
	}

	send := func(uid string, n int) answer {
		return f.do(t, "POST", "/queue/v1/send", bytes.Repeat([]byte("m"), n), nil, uid)
	}
	for _, c := range []struct {
		uid     string
		n, want int
	}{
		{"uid-q-beta", gateway.MaxQueueMessageBytesV1beta1, 200},
		{"uid-q-beta", gateway.MaxQueueMessageBytesV1beta1 + 1, 413},
		{"uid-q", gateway.MaxQueueMessageBytesV1beta1 + 1, 200},
	} {
		if a := send(c.uid, c.n); a.status != c.want || (c.want == 413 && a.code() != "message_too_large") {
			t.Errorf("queue send of %d bytes to %s: %d %s, want %d", c.n, c.uid, a.status, a.body, c.want)
		}
	}
	if got := len(f.messages(t, "uid-q-beta")); got != 1 {
		t.Errorf("the v1beta1 queue holds %d messages, want 1 (the refused send stores nothing)", got)
	}

	if a := f.do(t, "POST", "/sql/v1beta1/query", []byte(`{"sql":"SELECT 1 AS one"}`), nil, "uid-sql-beta"); a.status != 200 || strings.TrimSpace(string(a.body)) != `{"rows":[{"one":1}],"rowsWritten":0}` {
		t.Errorf("sql on a v1beta1 database: %d %s, want its untagged answer", a.status, a.body)
	}
}
