package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "import-adopts-native-resource", Group: "import", Summary: "a new adoption mints generation 1 with the materialised spec; a fenced re-import answers the same incarnation", Run: importAdopts},
		Check{ID: "import-validates-like-apply", Group: "import", Summary: "import runs apply's gauntlet (schema, relations, artifacts, nativeId) and a refused import stores and claims nothing", Run: importValidates},
		Check{ID: "import-claims-its-native-identity", Group: "import", Summary: "a nativeId is claimed once per tenant across spaces and kinds, until its holder is deleted", Run: importClaims},
		Check{ID: "import-records-its-native-identity", Group: "import", Summary: "a recorded nativeId never changes and is never echoed", Run: importRecords},
	)
}

// rxImport sends an import as token: a new adoption (If-None-Match: *)
// when gen is "", else fenced on gen; a fresh Idempotency-Key.
func rxImport(ctx context.Context, e *Env, token, space string, ref form.FormRef, name string, spec any, nativeID, gen string) (*Raw, error) {
	s, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(wire.ImportRequest{APIVersion: ref.APIVersion, Kind: ref.Kind, Form: wire.FormReference{FormRef: ref},
		Metadata: wire.Metadata{Name: name, Space: space}, Spec: s, NativeID: nativeID})
	if err != nil {
		return nil, err
	}
	h := map[string]string{wire.HeaderIdempotency: "import-" + randomHex(8)}
	if gen == "" {
		h["If-None-Match"] = "*"
	} else {
		h[wire.HeaderGeneration] = gen
	}
	return e.Do(ctx, token, http.MethodPost, ResourcePath(ref, name, "/import"), h, body)
}

// rxResourceAnswer decodes a synchronous resource answer with status
// want (or a 202 it waits out as token), checks it is the resource at a
// and its ETag, and that its body never carries secret.
func rxResourceAnswer(ctx context.Context, e *Env, token string, r *Raw, want int, a client.Address, secret string) (*wire.Resource, error) {
	if secret != "" && strings.Contains(string(r.Body), secret) {
		return nil, fmt.Errorf("the answer echoes the nativeId: %s", abbreviate(r.Body))
	}
	if r.Status == http.StatusAccepted {
		op, final, err := rxPoll(ctx, e, token, r)
		if err != nil {
			return nil, err
		}
		if secret != "" && strings.Contains(string(final.Body), secret) {
			return nil, fmt.Errorf("the operation echoes the nativeId: %s", abbreviate(final.Body))
		}
		return rxResultResource(op, a, "")
	}
	if r.Status != want {
		if env, err := r.Envelope(); err == nil {
			return nil, fmt.Errorf("answered %s (HTTP %d): %s; want HTTP %d", env.Code, r.Status, env.Message, want)
		}
		return nil, fmt.Errorf("answered HTTP %d, want %d: %s", r.Status, want, abbreviate(r.Body))
	}
	var res wire.Resource
	if err := rxStrict(r.Body, &res); err != nil {
		return nil, fmt.Errorf("the answer is not a resource: %w", err)
	}
	if err := client.VerifyResource(&res, a, ""); err != nil {
		return nil, err
	}
	if got := r.Header.Get("ETag"); got != `"`+res.Metadata.Revision+`"` {
		return nil, fmt.Errorf("ETag %q is not the quoted revision %q", got, res.Metadata.Revision)
	}
	return &res, nil
}

// rxImportOK imports as token and expects success with status want.
func rxImportOK(ctx context.Context, e *Env, token, space string, ref form.FormRef, name string, spec any, nativeID, gen string, want int) (*wire.Resource, error) {
	r, err := rxImport(ctx, e, token, space, ref, name, spec, nativeID, gen)
	if err != nil {
		return nil, err
	}
	res, err := rxResourceAnswer(ctx, e, token, r, want, client.Address{Space: space, Ref: ref, Name: name}, nativeID)
	if err != nil {
		return nil, fmt.Errorf("import %s %q: %w", ref.Kind, name, err)
	}
	return res, nil
}

// rxImportRefused imports as token expecting code and that name stays
// absent (or, when it exists, unchanged: pass it as cur).
func rxImportRefused(ctx context.Context, e *Env, token, space string, ref form.FormRef, name string, spec any, nativeID, gen string, code wire.Code, cur *wire.Resource) error {
	r, err := rxImport(ctx, e, token, space, ref, name, spec, nativeID, gen)
	if err != nil {
		return err
	}
	if err := r.ExpectCode(code); err != nil {
		return fmt.Errorf("import %s %q: %w", ref.Kind, name, err)
	}
	c := e.A1
	if token == e.Creds.B {
		c = e.B
	}
	got, err := c.Read(ctx, client.Address{Space: space, Ref: ref, Name: name})
	switch {
	case cur == nil && err == nil:
		return fmt.Errorf("a refused import of %s %q stored it", ref.Kind, name)
	case cur == nil:
		return ExpectCode(err, wire.ResourceNotFound)
	case err != nil:
		return fmt.Errorf("%s %q after a refused import: %w", ref.Kind, name, err)
	case got.Metadata.UID != cur.Metadata.UID || got.Metadata.Generation != cur.Metadata.Generation || got.Metadata.Revision != cur.Metadata.Revision:
		return fmt.Errorf("a refused import moved %s %q from %s/%s/%s to %s/%s/%s", ref.Kind, name, cur.Metadata.UID, cur.Metadata.Generation,
			cur.Metadata.Revision, got.Metadata.UID, got.Metadata.Generation, got.Metadata.Revision)
	}
	return nil
}

func importAdopts(ctx context.Context, e *Env) error {
	ref, err := e.Ref("AtLeastOnceQueue")
	if err != nil {
		return err
	}
	name, native := e.Name("queue"), "native-queue-"+randomHex(8)
	// The defaulted deliveryDelaySeconds is materialised, as on apply.
	res, err := rxImportOK(ctx, e, e.Creds.A1, e.Space, ref, name, map[string]any{"messageRetentionSeconds": 3600}, native, "", http.StatusCreated)
	if err != nil {
		return err
	}
	if res.Metadata.Generation != "1" || res.Metadata.Revision != "1" {
		return fmt.Errorf("a new adoption is at generation %s revision %s, want 1 and 1", res.Metadata.Generation, res.Metadata.Revision)
	}
	var spec map[string]json.Number
	if err := json.Unmarshal(res.Spec, &spec); err != nil || spec["deliveryDelaySeconds"] != "0" || spec["messageRetentionSeconds"] != "3600" {
		return fmt.Errorf("the adopted spec %s is not the materialised desired state", res.Spec)
	}
	read, err := e.A1.Read(ctx, Addr(res))
	if err != nil {
		return err
	}
	if read.Metadata.UID != res.Metadata.UID || string(read.Spec) != string(res.Spec) {
		return fmt.Errorf("the adopted resource reads uid %s spec %s", read.Metadata.UID, read.Spec)
	}
	// A fenced re-import under the same nativeId is the same incarnation.
	again, err := rxImportOK(ctx, e, e.Creds.A1, e.Space, ref, name, map[string]any{"messageRetentionSeconds": 3600, "deliveryDelaySeconds": 0}, native, "1", http.StatusOK)
	if err != nil {
		return err
	}
	if again.Metadata.UID != res.Metadata.UID || again.Metadata.Generation != "1" {
		return fmt.Errorf("the fenced re-import answered uid %s generation %s, want %s at 1", again.Metadata.UID, again.Metadata.Generation, res.Metadata.UID)
	}
	// A second new adoption of the taken name is a create conflict.
	r, err := rxImport(ctx, e, e.Creds.A1, e.Space, ref, name, map[string]any{"messageRetentionSeconds": 3600}, "native-other-"+randomHex(8), "")
	if err != nil {
		return err
	}
	if err := r.ExpectCode(wire.GenerationConflict); err != nil {
		return fmt.Errorf("a new adoption (If-None-Match: *) of a taken name: %w", err)
	}
	// A host-created resource is adopted by a fenced import.
	created, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), map[string]any{"messageRetentionSeconds": 3600})
	if err != nil {
		return err
	}
	adopted, err := rxImportOK(ctx, e, e.Creds.A1, e.Space, ref, created.Metadata.Name, map[string]any{"messageRetentionSeconds": 3600}, "native-queue-"+randomHex(8), created.Metadata.Generation, http.StatusOK)
	if err != nil {
		return fmt.Errorf("adopting a host-created resource: %w", err)
	}
	if adopted.Metadata.UID != created.Metadata.UID || adopted.Metadata.Generation != created.Metadata.Generation {
		return fmt.Errorf("adopting a host-created resource answered uid %s generation %s, want %s at %s", adopted.Metadata.UID,
			adopted.Metadata.Generation, created.Metadata.UID, created.Metadata.Generation)
	}
	return nil
}

func importValidates(ctx context.Context, e *Env) error {
	qref, err := e.Ref("AtLeastOnceQueue")
	if err != nil {
		return err
	}
	vref, err := e.Ref("WorkerVersion")
	if err != nil {
		return err
	}
	bref, err := e.Ref("WorkerBundle")
	if err != nil {
		return err
	}
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	native := "native-" + randomHex(8)
	absentWorker := e.rxVersionSpec(a)
	absentWorker["worker"] = e.Rel("ModuleWorker", e.Name("absent"))
	undeclared := e.rxVersionSpec(a)
	undeclared["handlers"] = []any{"fetch", "scheduled"}
	cases := []struct {
		what string
		ref  form.FormRef
		spec any
		id   string
		code wire.Code
	}{
		{"an unknown spec member", qref, map[string]any{"messageRetentionSeconds": 3600, "region": "x"}, native, wire.InvalidArgument},
		{"a value below the schema minimum", qref, map[string]any{"messageRetentionSeconds": 1}, native, wire.InvalidArgument},
		{"no nativeId", qref, map[string]any{"messageRetentionSeconds": 3600}, "", wire.InvalidArgument},
		{"a blank nativeId", qref, map[string]any{"messageRetentionSeconds": 3600}, "   ", wire.InvalidArgument},
		{"a relation to an absent target", vref, absentWorker, native, wire.ResourceNotFound},
		{"a handler the bundle does not export", vref, undeclared, native, wire.InvalidArgument},
		{"a manifest the tenant does not hold", bref, map[string]any{"manifestDigest": "sha256:" + strings.Repeat("ab", 32)}, native, wire.ArtifactMissing},
	}
	for _, c := range cases {
		if err := rxImportRefused(ctx, e, e.Creds.A1, e.Space, c.ref, e.Name("imp"), c.spec, c.id, "", c.code, nil); err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
	}
	// No refused import took the claim: it is still free.
	if _, err := rxImportOK(ctx, e, e.Creds.A1, e.Space, qref, e.Name("queue"), map[string]any{"messageRetentionSeconds": 3600}, native, "", http.StatusCreated); err != nil {
		return fmt.Errorf("the nativeId of refused imports: %w", err)
	}
	return nil
}

func importClaims(ctx context.Context, e *Env) error {
	qref, err := e.Ref("AtLeastOnceQueue")
	if err != nil {
		return err
	}
	wref, err := e.Ref("ModuleWorker")
	if err != nil {
		return err
	}
	spec := map[string]any{"messageRetentionSeconds": 3600}
	native := "native-claim-" + randomHex(8)
	holder, err := rxImportOK(ctx, e, e.Creds.A1, e.Space, qref, e.Name("queue"), spec, native, "", http.StatusCreated)
	if err != nil {
		return err
	}
	other := e.Space + " other"
	conflicts := func(when string) error {
		for _, c := range []struct {
			what, space string
			ref         form.FormRef
			spec        any
		}{
			{"another name of the same kind", e.Space, qref, spec},
			{"another kind", e.Space, wref, map[string]any{}},
			{"another space", other, qref, spec},
		} {
			if err := rxImportRefused(ctx, e, e.Creds.A1, c.space, c.ref, e.Name("imp"), c.spec, native, "", wire.ImportConflict, nil); err != nil {
				return fmt.Errorf("%s, the same nativeId under %s: %w", when, c.what, err)
			}
		}
		// The second principal of the tenant shares the claim space.
		if err := rxImportRefused(ctx, e, e.Creds.A2, e.Space, qref, e.Name("imp"), spec, native, "", wire.ImportConflict, nil); err != nil {
			return fmt.Errorf("%s, the second principal: %w", when, err)
		}
		return nil
	}
	if err := conflicts("while claimed"); err != nil {
		return err
	}
	// Another tenant's claims are its own.
	if _, err := rxImportOK(ctx, e, e.Creds.B, e.Space, qref, e.Name("queue"), spec, native, "", http.StatusCreated); err != nil {
		return fmt.Errorf("another tenant adopting the same nativeId: %w", err)
	}
	// An update never releases it.
	updated, err := e.Update(ctx, e.A1, holder, map[string]any{"messageRetentionSeconds": 7200})
	if err != nil {
		return err
	}
	if err := conflicts("after the holder was updated"); err != nil {
		return err
	}
	// Deleting the holder releases it.
	if err := rxDelete(ctx, e, e.Creds.A1, updated); err != nil {
		return err
	}
	if _, err := rxImportOK(ctx, e, e.Creds.A1, other, wref, e.Name("worker"), map[string]any{}, native, "", http.StatusCreated); err != nil {
		return fmt.Errorf("after its holder was deleted the nativeId is free: %w", err)
	}
	return nil
}

func importRecords(ctx context.Context, e *Env) error {
	qref, err := e.Ref("AtLeastOnceQueue")
	if err != nil {
		return err
	}
	spec := map[string]any{"messageRetentionSeconds": 3600}
	name, first := e.Name("queue"), "native-rec-"+randomHex(8)
	res, err := rxImportOK(ctx, e, e.Creds.A1, e.Space, qref, name, spec, first, "", http.StatusCreated)
	if err != nil {
		return err
	}
	second := "native-rec-" + randomHex(8)
	if err := rxImportRefused(ctx, e, e.Creds.A1, e.Space, qref, name, spec, second, res.Metadata.Generation, wire.ImportConflict, res); err != nil {
		return fmt.Errorf("re-importing under another nativeId: %w", err)
	}
	// The refused nativeId was not claimed; the recorded one still is.
	if _, err := rxImportOK(ctx, e, e.Creds.A1, e.Space, qref, e.Name("queue"), spec, second, "", http.StatusCreated); err != nil {
		return fmt.Errorf("the nativeId of a refused re-import: %w", err)
	}
	again, err := rxImportOK(ctx, e, e.Creds.A1, e.Space, qref, name, spec, first, res.Metadata.Generation, http.StatusOK)
	if err != nil {
		return fmt.Errorf("re-importing under the recorded nativeId: %w", err)
	}
	if again.Metadata.UID != res.Metadata.UID || again.Metadata.Generation != res.Metadata.Generation {
		return fmt.Errorf("the re-import answered uid %s generation %s, want %s at %s", again.Metadata.UID, again.Metadata.Generation, res.Metadata.UID, res.Metadata.Generation)
	}
	// Never echoed: not on read or observe either.
	r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, ResourcePath(qref, name, "")+ExactQuery(e.Space, qref), nil, nil)
	if err != nil {
		return err
	}
	o, err := e.Do(ctx, e.Creds.A1, http.MethodPost, ResourcePath(qref, name, "/observe")+ExactQuery(e.Space, qref),
		map[string]string{wire.HeaderIdempotency: "observe-" + randomHex(8), wire.HeaderGeneration: again.Metadata.Generation}, nil)
	if err != nil {
		return err
	}
	for _, x := range []*Raw{r, o} {
		if x.Status != http.StatusOK || strings.Contains(string(x.Body), first) {
			return fmt.Errorf("read/observe answered HTTP %d and must never echo the nativeId: %s", x.Status, abbreviate(x.Body))
		}
	}
	// A host-created resource records its claim at its first import.
	created, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), spec)
	if err != nil {
		return err
	}
	claim := "native-rec-" + randomHex(8)
	adopted, err := rxImportOK(ctx, e, e.Creds.A1, e.Space, qref, created.Metadata.Name, spec, claim, created.Metadata.Generation, http.StatusOK)
	if err != nil {
		return err
	}
	return rxImportRefused(ctx, e, e.Creds.A1, e.Space, qref, created.Metadata.Name, spec, "native-rec-"+randomHex(8), adopted.Metadata.Generation, wire.ImportConflict, adopted)
}
