package gateway_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
)

func (f *fixture) addQueue(t *testing.T, tenant, uid, spec string) {
	t.Helper()
	r := resource(tenant, gateway.KindQueue, uid, uid)
	r.Spec = []byte(spec)
	if err := f.st.Update(context.Background(), func(tx store.Tx) error { return tx.CreateResource(r) }); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) messages(t *testing.T, queue string) []*store.QueueMessage {
	t.Helper()
	var got []*store.QueueMessage
	err := f.st.View(context.Background(), func(tx store.Tx) error {
		var err error
		got, err = tx.QueueMessages(queue, 1000)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestQueueSendIsDurable(t *testing.T) {
	f := newFixture(t)
	f.addQueue(t, "acme", "uid-q", `{"deliveryDelaySeconds":30,"messageRetentionSeconds":3600}`)
	f.addQueue(t, "globex", "uid-q-globex", `{"messageRetentionSeconds":3600}`)
	a := f.do(t, "POST", "/queue/v1/send", check11, nil, "uid-q")
	var sent struct{ ID string }
	if a.status != 200 || json.Unmarshal(a.body, &sent) != nil || !strings.HasPrefix(sent.ID, "msg_") {
		t.Fatalf("send: %d %s", a.status, a.body)
	}
	a = f.do(t, "POST", "/queue/v1/send?delay=0", []byte("now"), nil, "uid-q")
	if a.status != 200 {
		t.Fatalf("send with delay 0: %d %s", a.status, a.body)
	}
	msgs := f.messages(t, "uid-q")
	if len(msgs) != 2 {
		t.Fatalf("stored %d messages; want 2", len(msgs))
	}
	// By deliverability: the delay-0 message first, then the one under the
	// queue's deliveryDelaySeconds (30 s).
	if !bytes.Equal(msgs[0].Body, []byte("now")) || !msgs[0].DeliverableAt.Equal(f.now) ||
		msgs[1].ID != sent.ID || !bytes.Equal(msgs[1].Body, check11) || !msgs[1].DeliverableAt.Equal(f.now.Add(30*time.Second)) ||
		msgs[1].Attempts != 0 || msgs[1].Tenant != "acme" {
		t.Errorf("stored messages: %+v, %+v", msgs[0], msgs[1])
	}
	for name, tc := range map[string]struct {
		path string
		body []byte
		uid  string
		code string
	}{
		"131073 bytes":              {"/queue/v1/send", bytes.Repeat([]byte("x"), 131073), "uid-q", "message_too_large"},
		"delay 43201":               {"/queue/v1/send?delay=43201", []byte("x"), "uid-q", "invalid_argument"},
		"an unknown option":         {"/queue/v1/send?retries=1", []byte("x"), "uid-q", "invalid_argument"},
		"another tenant's queue":    {"/queue/v1/send", []byte("x"), "uid-q-globex", "backend_unavailable"},
		"a KV namespace as a queue": {"/queue/v1/send", []byte("x"), "uid-kv", "backend_unavailable"},
	} {
		if a := f.do(t, "POST", tc.path, tc.body, nil, tc.uid); a.code() != tc.code {
			t.Errorf("%s: %d %s; want %s", name, a.status, a.body, tc.code)
		}
	}
	if a := f.do(t, "POST", "/queue/v1/send", bytes.Repeat([]byte("x"), 131072), nil, "uid-q"); a.status != 200 {
		t.Errorf("131072 bytes: %d %s", a.status, a.body)
	}
	if n := len(f.messages(t, "uid-q-globex")); n != 0 {
		t.Errorf("globex's queue holds %d messages after acme's refused send", n)
	}
}

func TestQueueSendBatchAllOrNothing(t *testing.T) {
	f := newFixture(t)
	f.addQueue(t, "acme", "uid-q", `{"messageRetentionSeconds":3600}`)
	batch := func(n int, body []byte) []byte {
		var ms []map[string]any
		for range n {
			ms = append(ms, map[string]any{"body": base64.StdEncoding.EncodeToString(body), "delaySeconds": 5})
		}
		b, _ := json.Marshal(map[string]any{"messages": ms})
		return b
	}
	a := f.do(t, "POST", "/queue/v1/batch", batch(100, []byte("m")), nil, "uid-q")
	var ids struct{ IDs []string }
	if a.status != 200 || json.Unmarshal(a.body, &ids) != nil || len(ids.IDs) != 100 {
		t.Fatalf("a batch of 100: %d %.200s", a.status, a.body)
	}
	if n := len(f.messages(t, "uid-q")); n != 100 {
		t.Errorf("stored %d messages; want 100", n)
	}
	if a := f.do(t, "POST", "/queue/v1/batch", batch(101, []byte("m")), nil, "uid-q"); a.code() != "batch_too_large" {
		t.Errorf("101 messages: %d %.200s", a.status, a.body)
	}
	mixed := []byte(`{"messages":[{"body":"bQ=="},{"body":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 131073)) + `"}]}`)
	if a := f.do(t, "POST", "/queue/v1/batch", mixed, nil, "uid-q"); a.code() != "message_too_large" {
		t.Errorf("a batch with one message too large: %d %.200s", a.status, a.body)
	}
	if n := len(f.messages(t, "uid-q")); n != 100 {
		t.Errorf("stored %d messages after the refused batches; want 100", n)
	}
}

func TestQueueTenantStorageLimit(t *testing.T) {
	f := newFixture(t, gateway.WithQueueStorageLimit(10))
	f.addQueue(t, "acme", "uid-q", `{"messageRetentionSeconds":3600}`)
	if a := f.do(t, "POST", "/queue/v1/send", []byte("12345678"), nil, "uid-q"); a.status != 200 {
		t.Fatalf("under the limit: %d %s", a.status, a.body)
	}
	if a := f.do(t, "POST", "/queue/v1/send", []byte("123"), nil, "uid-q"); a.code() != "message_too_large" || !strings.Contains(string(a.body), "limit of 10 bytes") {
		t.Errorf("over the limit: %d %s", a.status, a.body)
	}
	if n := len(f.messages(t, "uid-q")); n != 1 {
		t.Errorf("stored %d messages; want 1", n)
	}
}
