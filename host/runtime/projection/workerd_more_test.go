package projection_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/store"
)

func TestQueueProjectionInWorkerd(t *testing.T) {
	e := startEngine(t)
	payload := []byte("queue-round-trip-bytes\x00\xff")
	var got struct {
		Methods                                        []string
		Send, Batch, NotBytes, UnknownOption, TooLarge settled
		TooMany                                        settled
	}
	e.json(t, "POST", "/queue", payload, &got)
	if strings.Join(got.Methods, ",") != "send,sendBatch" {
		t.Errorf("methods: %v; want exactly send, sendBatch", got.Methods)
	}
	var id string
	var ids []string
	if !got.Send.OK || json.Unmarshal(got.Send.Value, &id) != nil || !strings.HasPrefix(id, "msg_") {
		t.Fatalf("send: %+v %s", got.Send, got.Send.Value)
	}
	if !got.Batch.OK || json.Unmarshal(got.Batch.Value, &ids) != nil || len(ids) != 2 {
		t.Fatalf("sendBatch: %+v %s", got.Batch, got.Batch.Value)
	}
	for name, tc := range map[string]struct {
		got  settled
		want string
	}{
		"a number as body": {got.NotBytes, "invalid_body"}, "an unknown option": {got.UnknownOption, "TypeError"},
		"131073 bytes": {got.TooLarge, "message_too_large"}, "101 messages": {got.TooMany, "batch_too_large"},
	} {
		if tc.got.OK || tc.got.Name != tc.want {
			t.Errorf("%s: %+v; want a rejection named %s", name, tc.got, tc.want)
		}
	}
	var msgs []*store.QueueMessage
	err := e.st.View(context.Background(), func(tx store.Tx) error {
		var err error
		msgs, err = tx.QueueMessages("uid-q", 10)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string][]byte{}
	for _, m := range msgs {
		byID[m.ID] = m.Body
	}
	if len(msgs) != 3 || !bytes.Equal(byID[id], payload) || string(byID[ids[0]]) != "one" || !bytes.Equal(byID[ids[1]], []byte{2}) {
		t.Errorf("stored messages %v; want the sent window's exact bytes under %s and the batch's two", byID, id)
	}
}

func TestObjectsProjectionInWorkerd(t *testing.T) {
	e := startEngine(t)
	var got struct {
		Methods                                                                    []string
		Put, Head, Get, Range, Absent, CreateOnly, BrokenStream, AfterBroken, List settled
		Multipart, BadPart, Deleted                                                settled
	}
	e.json(t, "GET", "/objects", nil, &got)
	if strings.Join(got.Methods, ",") != "abortMultipartUpload,completeMultipartUpload,createMultipartUpload,delete,get,head,list,put,uploadPart" {
		t.Errorf("methods: %v", got.Methods)
	}
	sum := sha256.Sum256([]byte("hello streamed world"))
	etag := hex.EncodeToString(sum[:])
	for name, tc := range map[string]struct {
		got  settled
		want string // the value's JSON, or a prefix of it ending in "…"
	}{
		"put of a stream":       {got.Put, `{"etag":"` + etag + `","size":20}`},
		"head":                  {got.Head, `{"size":20,"etag":"` + etag + `","contentType":"text/plain","uploadedAtMillis":…`},
		"get":                   {got.Get, `{"body":"hello streamed world","size":20,"etag":"` + etag + `","contentType":"text/plain","uploadedAtMillis":…`},
		"an absent key":         {got.Absent, `null`},
		"after a broken stream": {got.AfterBroken, `null`},
		"list":                  {got.List, `{"objects":[{"key":"docs/a.txt","size":20,"etag":"` + etag + `","uploadedAtMillis":…`},
		"multipart":             {got.Multipart, `{"size":5242883,"headSize":5242883,"etagsAgree":true}`},
		"after delete":          {got.Deleted, `null`},
	} {
		v := string(tc.got.Value)
		if pre, ok := strings.CutSuffix(tc.want, "…"); !tc.got.OK || (ok && !strings.HasPrefix(v, pre)) || (!ok && v != tc.want) {
			t.Errorf("%s: %+v %s\nwant %s", name, tc.got, v, tc.want)
		}
	}
	if !strings.Contains(string(got.Get.Value), `"body":"hello streamed world"`) || !strings.Contains(string(got.Get.Value), `"partial":false`) {
		t.Errorf("get body: %s", got.Get.Value)
	}
	if !strings.Contains(string(got.Range.Value), `"body":"streamed"`) || !strings.Contains(string(got.Range.Value), `"partial":true`) {
		t.Errorf("ranged get: %s", got.Range.Value)
	}
	for name, tc := range map[string]struct {
		got  settled
		want string
	}{
		"create-only over a key": {got.CreateOnly, "precondition_failed"},
		"a stream that errors":   {got.BrokenStream, "invalid_body"},
		"a part of no upload":    {got.BadPart, "upload_not_found"},
	} {
		if tc.got.OK || tc.got.Name != tc.want {
			t.Errorf("%s: %+v; want a rejection named %s", name, tc.got, tc.want)
		}
	}
}
