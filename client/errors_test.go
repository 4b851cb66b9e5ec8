package client

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/takoform/takoform/wire"
)

func testRequest() *request {
	return &request{op: "read", method: "GET", path: lanePath + "/resources/x"}
}

func offlineClient(t *testing.T) *Client {
	t.Helper()
	c, err := newClient("https://host.example", Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHostErrorDecodesValidEnvelopes(t *testing.T) {
	c := offlineClient(t)
	resp := &response{status: 404, body: []byte(`{"error":{"code":"resource_not_found","message":"no app","requestId":"req-1","retryable":false,"hostCode":"absent","details":{"pointer":"/worker","n":2}}}`)}
	we, retry, err := c.hostError(testRequest(), resp)
	if err != nil {
		t.Fatal(err)
	}
	if we.Code != wire.ResourceNotFound || we.Message != "no app" || we.RequestID != "req-1" || we.HostCode != "absent" || we.Details["pointer"] != "/worker" || retry {
		t.Fatalf("decoded %+v retry=%v", we, retry)
	}
	if !IsNotFound(we) || !IsNotFound(fmt.Errorf("read: %w", we)) {
		t.Fatal("a valid resource_not_found 404 is not absence")
	}

	resp = &response{status: 409, body: []byte(`{"error":{"code":"resource_busy","message":"m","requestId":"r","retryable":true,"details":[1,2]}}`)}
	we, retry, err = c.hostError(testRequest(), resp)
	if err != nil || !retry || we.Details["value"] == nil {
		t.Fatalf("busy: %+v retry=%v err=%v", we, retry, err)
	}
	// A retryable code the host did not mark retryable is not retried.
	resp = &response{status: 503, body: []byte(`{"error":{"code":"backend_unavailable","message":"m","requestId":"r","retryable":false}}`)}
	if _, retry, err = c.hostError(testRequest(), resp); err != nil || retry {
		t.Fatalf("unmarked backend_unavailable: retry=%v err=%v", retry, err)
	}
}

func TestHostErrorRefusesInvalidEnvelopes(t *testing.T) {
	c := offlineClient(t)
	cases := []struct {
		name   string
		status int
		body   string
	}{
		{"router 404 without a body", 404, ``},
		{"router 404 with text", 404, "404 page not found\n"},
		{"html error page", 502, "<html><body>Bad Gateway</body></html>"},
		{"unknown code", 409, `{"error":{"code":"already_exists","message":"m","requestId":"r","retryable":false}}`},
		{"wrong status for the code", 400, `{"error":{"code":"resource_not_found","message":"m","requestId":"r","retryable":false}}`},
		{"not found code on a 410", 410, `{"error":{"code":"resource_not_found","message":"m","requestId":"r","retryable":false}}`},
		{"retryable on a non-retryable code", 500, `{"error":{"code":"internal_error","message":"m","requestId":"r","retryable":true}}`},
		{"missing retryable", 404, `{"error":{"code":"resource_not_found","message":"m","requestId":"r"}}`},
		{"null retryable", 404, `{"error":{"code":"resource_not_found","message":"m","requestId":"r","retryable":null}}`},
		{"missing requestId", 404, `{"error":{"code":"resource_not_found","message":"m","retryable":false}}`},
		{"empty message", 404, `{"error":{"code":"resource_not_found","message":"","requestId":"r","retryable":false}}`},
		{"empty hostCode", 404, `{"error":{"code":"resource_not_found","message":"m","requestId":"r","retryable":false,"hostCode":""}}`},
		{"duplicate member", 404, `{"error":{"code":"resource_not_found","code":"resource_not_found","message":"m","requestId":"r","retryable":false}}`},
		{"unknown member", 404, `{"error":{"code":"resource_not_found","message":"m","requestId":"r","retryable":false,"hint":"x"}}`},
		{"unknown envelope member", 404, `{"error":{"code":"resource_not_found","message":"m","requestId":"r","retryable":false},"status":404}`},
		{"trailing data", 404, `{"error":{"code":"resource_not_found","message":"m","requestId":"r","retryable":false}} x`},
		{"error not an object", 404, `{"error":"resource_not_found"}`},
		{"redirect status", 304, `{"error":{"code":"resource_not_found","message":"m","requestId":"r","retryable":false}}`},
	}
	for _, k := range cases {
		we, retry, err := c.hostError(testRequest(), &response{status: k.status, body: []byte(k.body)})
		var pe *ProtocolError
		if !errors.As(err, &pe) || we != nil || retry {
			t.Errorf("%s: got %v, %v, %v; want a *ProtocolError", k.name, we, retry, err)
			continue
		}
		if pe.Status != k.status || IsNotFound(err) {
			t.Errorf("%s: %+v", k.name, pe)
		}
	}
}

func TestIsNotFoundIsExact(t *testing.T) {
	nf := &wire.Error{Code: wire.ResourceNotFound, Message: "m", RequestID: "r"}
	op := &wire.Operation{ID: "op_1", Done: true}
	for name, err := range map[string]error{
		"nil":                         nil,
		"form_unknown is not absence": &wire.Error{Code: wire.FormUnknown, Message: "m"},
		"operation_not_found":         &wire.Error{Code: wire.OperationNotFound, Message: "m"},
		"protocol error":              &ProtocolError{Op: "read", Status: 404, Reason: "no envelope"},
		"operation failed with resource_not_found": &OperationFailedError{Operation: op, Err: nf},
		"wait stopped on resource_not_found":       &OperationWaitError{ID: "op_1", Err: nf},
		"wrapped wait error":                       fmt.Errorf("apply: %w", &OperationWaitError{ID: "op_1", Err: nf}),
		"transport error":                          &TransportError{Op: "read", Err: errors.New("reset")},
		"plain error":                              errors.New("resource_not_found"),
	} {
		if IsNotFound(err) {
			t.Errorf("%s: IsNotFound = true", name)
		}
	}
}

func TestErrorTexts(t *testing.T) {
	te := &TransportError{Op: "apply", Method: "PUT", URL: "https://h/x", Mutation: true, IdempotencyKey: "takoform-abc", Err: errors.New("connection reset")}
	if !te.OutcomeUnknown() || !strings.Contains(te.Error(), "outcome is unknown") || !strings.Contains(te.Error(), "takoform-abc") {
		t.Errorf("mutation transport error text: %s", te)
	}
	te = &TransportError{Op: "read", Method: "GET", URL: "https://h/x", Err: errors.New("connection reset")}
	if te.OutcomeUnknown() || strings.Contains(te.Error(), "outcome") {
		t.Errorf("read transport error text: %s", te)
	}
	pe := &ProtocolError{Op: "read", Status: 404, Reason: "HTTP 404 carries no error envelope"}
	if !strings.Contains(pe.Error(), "protocol-invalid") || !strings.Contains(pe.Error(), "404") {
		t.Errorf("protocol error text: %s", pe)
	}
}

// TestReadAllIsIOReadAll: readAll reads what io.ReadAll reads, whatever
// length the answer declares.
func TestReadAllIsIOReadAll(t *testing.T) {
	for _, body := range []string{"", "x", strings.Repeat("a", 511), strings.Repeat("b", 513), strings.Repeat("c", 5000)} {
		for _, declared := range []int64{-1, 0, 1, int64(len(body)), int64(len(body)) + 7, 1 << 40} {
			want, _ := io.ReadAll(io.LimitReader(strings.NewReader(body), 4097))
			got, err := readAll(io.LimitReader(strings.NewReader(body), 4097), declared, 4096)
			if err != nil || string(got) != string(want) {
				t.Errorf("%d bytes declared %d: got %d bytes (%v), want %d", len(body), declared, len(got), err, len(want))
			}
		}
	}
}
