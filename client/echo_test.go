package client

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

var appAddr = Address{Space: "Prod North", Ref: workerRef, Name: "app"}

func goodResource() *wire.Resource {
	return &wire.Resource{
		APIVersion: workerRef.APIVersion,
		Kind:       workerRef.Kind,
		Form:       wire.FormReference{FormRef: workerRef, PackageDigest: "sha256:" + strings.Repeat("a", 64)},
		Metadata:   wire.Metadata{Name: "app", Space: "Prod North", UID: "uid-19", Generation: "2", Revision: "4"},
		Spec:       json.RawMessage(`{"main":"x"}`),
		Status: wire.Status{ObservedGeneration: "2", Conditions: []wire.Condition{
			{Type: "Ready", Status: "True", Reason: "Available", LastTransitionTime: "2026-08-06T00:00:00Z"},
		}},
	}
}

func TestVerifyResourceAcceptsTheExactEcho(t *testing.T) {
	if err := VerifyResource(goodResource(), appAddr, ""); err != nil {
		t.Fatal(err)
	}
	if err := VerifyResource(goodResource(), appAddr, "uid-19"); err != nil {
		t.Fatal(err)
	}
	r := goodResource()
	r.Status.Conditions = []wire.Condition{}
	r.Form.PackageDigest = "" // audit evidence only, never required
	if err := VerifyResource(r, appAddr, ""); err != nil {
		t.Fatalf("empty condition list or absent package digest refused: %v", err)
	}
}

func TestVerifyResourceFailsClosedOnSubstitution(t *testing.T) {
	newer := workerRef
	newer.DefinitionVersion = "0.2.0"
	cases := map[string]func(r *wire.Resource){
		"apiVersion":        func(r *wire.Resource) { r.APIVersion = "edge.forms.takoform.com/v1alpha2" },
		"kind":              func(r *wire.Resource) { r.Kind = "WorkerVersion" },
		"definitionVersion": func(r *wire.Resource) { r.Form.FormRef = newer },
		"schemaDigest":      func(r *wire.Resource) { r.Form.FormRef.SchemaDigest = "sha256:" + strings.Repeat("b", 64) },
		"formRef kind":      func(r *wire.Resource) { r.Form.FormRef.Kind = "WorkerVersion" },
		"formRef apiVersion": func(r *wire.Resource) {
			r.Form.FormRef.APIVersion = "forms.example.com/v1alpha1"
		},
		"name":                 func(r *wire.Resource) { r.Metadata.Name = "app2" },
		"space trimmed":        func(r *wire.Resource) { r.Metadata.Space = "Prod  North" },
		"space case-folded":    func(r *wire.Resource) { r.Metadata.Space = "prod north" },
		"uid absent":           func(r *wire.Resource) { r.Metadata.UID = "" },
		"uid grammar":          func(r *wire.Resource) { r.Metadata.UID = "-u" },
		"generation absent":    func(r *wire.Resource) { r.Metadata.Generation = "" },
		"generation zero":      func(r *wire.Resource) { r.Metadata.Generation = "0" },
		"generation leading 0": func(r *wire.Resource) { r.Metadata.Generation = "02" },
		"revision overflow":    func(r *wire.Resource) { r.Metadata.Revision = "9223372036854775808" },
		"revision signed":      func(r *wire.Resource) { r.Metadata.Revision = "+4" },
		"packageDigest":        func(r *wire.Resource) { r.Form.PackageDigest = "sha256:XYZ" },
		"spec not an object":   func(r *wire.Resource) { r.Spec = json.RawMessage(`[1]`) },
		"spec absent":          func(r *wire.Resource) { r.Spec = nil },
		"observedGeneration":   func(r *wire.Resource) { r.Status.ObservedGeneration = "" },
		"conditions absent":    func(r *wire.Resource) { r.Status.Conditions = nil },
		"condition type":       func(r *wire.Resource) { r.Status.Conditions[0].Type = "Healthy" },
		"condition status":     func(r *wire.Resource) { r.Status.Conditions[0].Status = "true" },
		"condition reason":     func(r *wire.Resource) { r.Status.Conditions[0].Reason = "Ok" },
		"condition time":       func(r *wire.Resource) { r.Status.Conditions[0].LastTransitionTime = "yesterday" },
		"too many conditions": func(r *wire.Resource) {
			for len(r.Status.Conditions) <= wire.MaxConditions {
				r.Status.Conditions = append(r.Status.Conditions, r.Status.Conditions[0])
			}
		},
		"outputs not an object": func(r *wire.Resource) { r.Status.Outputs = json.RawMessage(`"x"`) },
	}
	for name, mut := range cases {
		r := goodResource()
		mut(r)
		var pe *ProtocolError
		if err := VerifyResource(r, appAddr, ""); !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a *ProtocolError", name, err)
		}
	}
	if err := VerifyResource(goodResource(), appAddr, "uid-18"); err == nil || !strings.Contains(err.Error(), "uid-18") {
		t.Errorf("another incarnation's UID accepted: %v", err)
	}
}

func TestCheckETag(t *testing.T) {
	h := func(v ...string) http.Header { return http.Header{"Etag": v} }
	if err := checkETag(h(`"4"`), "4", true); err != nil {
		t.Fatal(err)
	}
	if err := checkETag(http.Header{}, "4", false); err != nil {
		t.Fatalf("observe must tolerate an absent ETag: %v", err)
	}
	for name, hdr := range map[string]http.Header{
		"absent":   {},
		"unquoted": h(`4`),
		"weak":     h(`W/"4"`),
		"stale":    h(`"3"`),
		"padded":   h(`"04"`),
		"two":      h(`"4"`, `"4"`),
	} {
		if err := checkETag(hdr, "4", true); err == nil {
			t.Errorf("ETag %s accepted", name)
		}
	}
	if err := checkETag(h(`"3"`), "4", false); err == nil {
		t.Error("observe accepted a present but wrong ETag")
	}
}

func TestCanonicalPositiveAndGenerationRules(t *testing.T) {
	for s, want := range map[string]bool{
		"1": true, "42": true, "9223372036854775807": true,
		"": false, "0": false, "01": false, "+1": false, "-1": false, "1.0": false, " 1": false,
		"9223372036854775808": false, "99999999999999999999": false, "１": false,
	} {
		if CanonicalPositive(s) != want {
			t.Errorf("CanonicalPositive(%q) = %v", s, !want)
		}
	}
	cases := []struct {
		got, fence string
		rule       fenceRule
		ok         bool
	}{
		{"1", "", genCreated, true}, {"2", "", genCreated, false},
		{"3", "3", genAdvanced, true}, {"4", "3", genAdvanced, true}, {"5", "3", genAdvanced, false}, {"2", "3", genAdvanced, false},
		{"9223372036854775807", "9223372036854775807", genAdvanced, true},
		{"3", "3", genEqual, true}, {"4", "3", genEqual, false},
		{"17", "", genAny, true},
	}
	for _, c := range cases {
		if err := checkGeneration(c.got, c.fence, c.rule); (err == nil) != c.ok {
			t.Errorf("checkGeneration(%q, %q, %d) = %v", c.got, c.fence, c.rule, err)
		}
	}
}

func TestCheckOperation(t *testing.T) {
	valid := []string{
		`{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":false,"metadata":{"phase":"Provisioning","progress":40}}`,
		`{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":true,"target":{"uid":"u-1"},"result":{"deleted":true}}`,
		`{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":true,"error":{"code":"operation_cancelled","message":"cancelled","retryable":false}}`,
	}
	for _, v := range valid {
		var op wire.Operation
		if err := decodeStrict([]byte(v), &op, "/done"); err != nil {
			t.Fatal(err)
		}
		if err := checkOperation(&op, []byte(v), "", "op_12"); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	invalid := map[string]string{
		"wrong id":             `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_13","done":false}`,
		"id grammar":           `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"12","done":false}`,
		"wrong apiVersion":     `{"apiVersion":"operations.takoform.com/v1","kind":"Operation","id":"op_12","done":false}`,
		"pending with result":  `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":false,"result":{}}`,
		"settled with neither": `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":true}`,
		"settled with both":    `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":true,"result":{},"error":{"code":"internal_error","message":"m","retryable":false}}`,
		"null result":          `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":true,"result":null}`,
		"unknown error code":   `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":true,"error":{"code":"oops","message":"m","retryable":false}}`,
		"retryable internal":   `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":true,"error":{"code":"internal_error","message":"m","retryable":true}}`,
		"retryable absent":     `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":true,"error":{"code":"internal_error","message":"m"}}`,
		"progress 101":         `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":false,"metadata":{"progress":101}}`,
		"phase grammar":        `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12","done":false,"metadata":{"phase":"running"}}`,
	}
	for name, v := range invalid {
		var op wire.Operation
		if err := decodeStrict([]byte(v), &op, "/done"); err != nil {
			continue // refused while decoding: fine
		}
		if err := checkOperation(&op, []byte(v), "", "op_12"); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	var op wire.Operation
	if err := decodeStrict([]byte(`{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_12"}`), &op, "/done"); err == nil {
		t.Error("an operation without done decoded")
	}
}

func TestResourceResultVerifiesTheOperationResult(t *testing.T) {
	res, _ := json.Marshal(wire.ResourceEnvelope{Resource: *goodResource()})
	op := &wire.Operation{APIVersion: wire.OperationsAPI, Kind: wire.OperationKind, ID: "op_1", Done: true, Result: res}
	if got, err := ResourceResult(op, appAddr, "uid-19"); err != nil || got.Metadata.UID != "uid-19" {
		t.Fatalf("ResourceResult: %v", err)
	}
	other := appAddr
	other.Ref.DefinitionVersion = "0.2.0"
	if _, err := ResourceResult(op, other, ""); err == nil {
		t.Error("a result under another FormRef accepted")
	}
	if _, err := ResourceResult(op, appAddr, "uid-20"); err == nil {
		t.Error("a result of another incarnation accepted")
	}
	if _, err := resourceResult(op, expectation{addr: appAddr, rule: genCreated}); err == nil {
		t.Error("a create result at generation 2 accepted")
	}
	op.Result = json.RawMessage(`{"deleted":true}`)
	if _, err := ResourceResult(op, appAddr, ""); err == nil {
		t.Error("a result without a resource accepted")
	}
}

func TestCheckPrepared(t *testing.T) {
	spec := json.RawMessage(`{"b":1,"a":"x"}`)
	d, _ := ijson.Digest(spec)
	good := func() *wire.PrepareResponse {
		return &wire.PrepareResponse{
			Resource: wire.ResourceRequest{APIVersion: workerRef.APIVersion, Kind: workerRef.Kind, Form: wire.FormReference{FormRef: workerRef},
				Metadata: wire.Metadata{Name: "app", Space: "Prod North"}, Spec: spec},
			Review: wire.PrepareReview{PrepareDigest: "sha256:" + strings.Repeat("c", 64), SpecDigest: d},
		}
	}
	if err := checkPrepared(good(), appAddr); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(p *wire.PrepareResponse){
		"spec digest of another spec": func(p *wire.PrepareResponse) { p.Resource.Spec = json.RawMessage(`{"b":2,"a":"x"}`) },
		"other FormRef":               func(p *wire.PrepareResponse) { p.Resource.Form.FormRef.DefinitionVersion = "0.2.0" },
		"other space":                 func(p *wire.PrepareResponse) { p.Resource.Metadata.Space = "Prod" },
		"bad prepare digest":          func(p *wire.PrepareResponse) { p.Review.PrepareDigest = "abc" },
	} {
		p := good()
		mut(p)
		if err := checkPrepared(p, appAddr); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestCheckFormsAndProfiles(t *testing.T) {
	entry := `{"identity":{"formRef":` + mustJSON(workerRef) + `},"definitionKnown":true,"installed":true,"executable":true,"activated":true,"availableToPrincipal":true,"operations":["create","read"]}`
	for body, ok := range map[string]bool{
		`{"forms":[]}`:                            true,
		`{"forms":[` + entry + `]}`:               true,
		`{"forms":[` + entry + `,` + entry + `]}`: false,
		`{"forms":[` + strings.Replace(entry, `"installed":true,`, ``, 1) + `]}`: false,
		`{"forms":[` + strings.Replace(entry, `0.1.0`, `0.1.1`, 1) + `]}`:        false,
		`{"forms":[` + strings.Replace(entry, `"read"`, `"list"`, 1) + `]}`:      false,
	} {
		var out wire.FormsResponse
		err := decodeStrict([]byte(body), &out, "/forms")
		if err == nil {
			err = checkForms(&out, []byte(body), workerRef)
		}
		if (err == nil) != ok {
			t.Errorf("%s: %v", body, err)
		}
	}
	iref := form.InterfaceRef{APIVersion: "interfaces.takoform.com/v1alpha1", Name: "edge.kv", Version: "1.0.0", SchemaDigest: "sha256:" + strings.Repeat("d", 64)}
	good := wire.SupportProfile{APIVersion: wire.SupportAPI, Kind: InterfaceSupport, InterfaceRef: &iref, Limits: map[string]int64{"maximumKeys": 10}}
	if err := checkProfile(&good, InterfaceSupport); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		p   wire.SupportProfile
		ask string
	}{
		"wrong kind":       {wire.SupportProfile{APIVersion: wire.SupportAPI, Kind: BindingSupport, InterfaceRef: &iref}, InterfaceSupport},
		"wrong reference":  {wire.SupportProfile{APIVersion: wire.SupportAPI, Kind: BindingSupport, InterfaceRef: &iref}, BindingSupport},
		"two references":   {wire.SupportProfile{APIVersion: wire.SupportAPI, Kind: InterfaceSupport, InterfaceRef: &iref, FormRef: &workerRef}, InterfaceSupport},
		"form w/o ops":     {wire.SupportProfile{APIVersion: wire.SupportAPI, Kind: FormSupport, FormRef: &workerRef}, FormSupport},
		"bad limit key":    {wire.SupportProfile{APIVersion: wire.SupportAPI, Kind: InterfaceSupport, InterfaceRef: &iref, Limits: map[string]int64{"Max": 1}}, InterfaceSupport},
		"wrong apiVersion": {wire.SupportProfile{APIVersion: "support.takoform.com/v1", Kind: InterfaceSupport, InterfaceRef: &iref}, InterfaceSupport},
	} {
		if err := checkProfile(&c.p, c.ask); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
