package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "forms-exact-availability", Group: "discovery", Summary: "GET /forms answers exactly the asked 4-tuple, never a fallback to group and kind", Run: formsExactAvailability},
		Check{ID: "form-definition-exact", Group: "discovery", Summary: "form-definitions serves the installed definition's own desiredSchema bytes", Run: formDefinitionExact},
		Check{ID: "exact-form-ref-fails-closed-on-unknown-definition", Group: "discovery", Summary: "any one FormRef member altered is form_unknown on forms, form-definitions and resource routes", Run: exactRefFailsClosed},
		Check{ID: "two-definition-versions-answer-independently", Group: "discovery", Summary: "two installed definition versions of a kind answer only for their own resources but share names", Run: twoDefinitionVersions},
		Check{ID: "resource-answers-only-under-its-recorded-form-ref", Group: "discovery", Summary: "a resource is addressed only under the exact FormRef it was created under", Run: answersOnlyUnderRecordedRef},
		Check{ID: "same-kind-two-groups", Group: "discovery", Summary: "one kind in two groups is two independent resources under one name", Run: sameKindTwoGroups},
		Check{ID: "support-profiles-present", Group: "discovery", Summary: "one closed FormSupport profile per installed FormRef, each readable by its definition version", Run: supportProfilesPresent},
		Check{ID: "space-id-grammar-enforced", Group: "discovery", Summary: "one SpaceID rule on bodies and queries; spaces are opaque and case-sensitive", Run: spaceIDGrammar},
		Check{ID: "condition-reason-closed", Group: "discovery", Summary: "conditions use the closed vocabularies; ModuleWorker readiness follows its deployment", Run: conditionReasonClosed},
	)
}

func formsExactAvailability(ctx context.Context, e *Env) error {
	profiles, err := e.A1.SupportForms(ctx)
	if err != nil {
		return err
	}
	for _, p := range profiles.Profiles {
		ref := *p.FormRef
		r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, "/forms"+ExactQuery(e.Space, ref), nil, nil)
		if err != nil {
			return err
		}
		if r.Status != 200 {
			return fmt.Errorf("forms for %s answered HTTP %d: %s", ref, r.Status, abbreviate(r.Body))
		}
		var resp wire.FormsResponse
		if err := ijson.Unmarshal(r.Body, &resp); err != nil {
			return fmt.Errorf("forms for %s: not a closed formsResponse: %v", ref, err)
		}
		if len(resp.Forms) != 1 {
			return fmt.Errorf("forms for %s answered %d entries, want exactly one", ref, len(resp.Forms))
		}
		f := resp.Forms[0]
		if f.Identity.FormRef != ref {
			return fmt.Errorf("forms for %s answered about %s", ref, f.Identity.FormRef)
		}
		if !f.DefinitionKnown || !f.Installed || !f.Executable || !f.Activated || !f.AvailableToPrincipal {
			return fmt.Errorf("forms for a served %s: definitionKnown/installed/executable/activated/availableToPrincipal = %v/%v/%v/%v/%v",
				ref, f.DefinitionKnown, f.Installed, f.Executable, f.Activated, f.AvailableToPrincipal)
		}
		if err := fmCheckOperations(f.Operations); err != nil {
			return fmt.Errorf("forms for %s: %w", ref, err)
		}
		if def := fmFamilyDef(ref); def != nil && !fmSameSet(f.Operations, fmCaps(def)) {
			return fmt.Errorf("forms for %s lists operations %v; the definition declares %v", ref, f.Operations, fmCaps(def))
		}
	}
	ref, err := e.Ref("ModuleWorker")
	if err != nil {
		return err
	}
	near := ref
	near.SchemaDigest = fmFlip(ref.SchemaDigest)
	bad := []struct{ what, query string }{
		{"a query with packageDigest", ExactQuery(e.Space, ref) + "&packageDigest=" + queryEscape(ref.SchemaDigest)},
		{"a query without schemaDigest", "?space=" + queryEscape(e.Space) + "&group=" + queryEscape(ref.APIVersion) + "&kind=" + ref.Kind + "&definitionVersion=" + queryEscape(ref.DefinitionVersion)},
		{"a query naming group twice", ExactQuery(e.Space, ref) + "&group=" + queryEscape(ref.APIVersion)},
	}
	for _, b := range bad {
		r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, "/forms"+b.query, nil, nil)
		if err := lcExpect(r, err, wire.InvalidArgument, "forms with "+b.what+" (the exact query is space, group, kind, definitionVersion and schemaDigest, each exactly once, and nothing else; spec/host-api-v1alpha3.md §3.3)"); err != nil {
			return err
		}
	}
	r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, "/forms"+ExactQuery(e.Space, near), nil, nil)
	return lcExpect(r, err, wire.FormUnknown, "forms for a served group, kind and version under another digest")
}

func formDefinitionExact(ctx context.Context, e *Env) error {
	profiles, err := e.A1.SupportForms(ctx)
	if err != nil {
		return err
	}
	for _, p := range profiles.Profiles {
		ref := *p.FormRef
		r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, "/form-definitions/"+ref.APIVersion+"/"+ref.Kind+ExactQuery(e.Space, ref), nil, nil)
		if err != nil {
			return err
		}
		if r.Status != 200 {
			return fmt.Errorf("form-definition of %s answered HTTP %d: %s", ref, r.Status, abbreviate(r.Body))
		}
		var closed wire.FormDefinitionResponse
		if err := ijson.Unmarshal(r.Body, &closed); err != nil {
			return fmt.Errorf("form-definition of %s: not a closed formDefinitionResponse: %v", ref, err)
		}
		var resp wire.FormDefinitionResponse // encoding/json keeps the member's bytes
		if err := json.Unmarshal(r.Body, &resp); err != nil {
			return err
		}
		if resp.Identity.FormRef != ref {
			return fmt.Errorf("form-definition of %s answered identity %s", ref, resp.Identity.FormRef)
		}
		if def := fmFamilyDef(ref); def != nil {
			if !bytes.Equal(resp.DesiredSchema, def.DesiredSchemaJSON()) {
				return fmt.Errorf("form-definition of %s: desiredSchema is not byte-for-byte the definition's own (%d bytes served, %d installed)",
					ref, len(resp.DesiredSchema), len(def.DesiredSchemaJSON()))
			}
		}
		if err := fmSchemaAgrees(resp.DesiredSchema, p); err != nil {
			return fmt.Errorf("form-definition of %s: %w", ref, err)
		}
	}
	// The path's group and kind must be the query's.
	mw, err := e.Ref("ModuleWorker")
	if err != nil {
		return err
	}
	r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, "/form-definitions/"+mw.APIVersion+"/WorkerBundle"+ExactQuery(e.Space, mw), nil, nil)
	if err := lcExpect(r, err, wire.InvalidArgument, "form-definition whose path kind is not the query's"); err != nil {
		return err
	}
	return nil
}

// fmAltered is ref with each of its four members altered in turn.
func fmAltered(ref form.FormRef) map[string]form.FormRef {
	g, k, v, d := ref, ref, ref, ref
	g.APIVersion = "conformance-unknown.forms.example.com/v1alpha1"
	k.Kind = ref.Kind + "Unknown"
	v.DefinitionVersion = "999.0.0-conformance"
	d.SchemaDigest = fmFlip(ref.SchemaDigest)
	return map[string]form.FormRef{"apiVersion": g, "kind": k, "definitionVersion": v, "schemaDigest": d}
}

func exactRefFailsClosed(ctx context.Context, e *Env) error {
	ref, err := e.Ref("ModuleWorker")
	if err != nil {
		return err
	}
	served, err := e.lcServed(ctx)
	if err != nil {
		return err
	}
	name := e.Name("worker")
	res, err := e.Create(ctx, e.A1, "ModuleWorker", name, map[string]any{})
	if err != nil {
		return err
	}
	for member, alt := range fmAltered(ref) {
		if slices.Contains(served, alt) {
			return fmt.Errorf("the host serves the altered ref %s", alt)
		}
		req := e.RequestIn(e.Space, alt, name, map[string]any{})
		body, _ := json.Marshal(req)
		apply, _ := json.Marshal(lcApplyBody(req, fmZeroDigest))
		imp, _ := json.Marshal(wire.ImportRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, Spec: req.Spec, NativeID: "conformance-" + randomHex(6)})
		q := ExactQuery(e.Space, alt)
		for _, c := range []struct {
			route, method, path string
			headers             map[string]string
			body                []byte
		}{
			{"forms", http.MethodGet, "/forms" + q, nil, nil},
			{"form-definitions", http.MethodGet, "/form-definitions/" + alt.APIVersion + "/" + alt.Kind + q, nil, nil},
			{"read", http.MethodGet, ResourcePath(alt, name, q), nil, nil},
			{"validate", http.MethodPost, "/resources/validate", nil, body},
			{"prepare", http.MethodPost, "/resources/prepare", nil, body},
			{"apply", http.MethodPut, ResourcePath(alt, name, ""), lcUpdateHeaders(lcKey(), "1"), apply},
			{"import", http.MethodPost, ResourcePath(alt, name, "/import"), lcUpdateHeaders(lcKey(), "1"), imp},
			{"observe", http.MethodPost, ResourcePath(alt, name, "/observe") + q, lcUpdateHeaders(lcKey(), "1"), nil},
			{"delete", http.MethodDelete, ResourcePath(alt, name, q), lcUpdateHeaders(lcKey(), "1"), nil},
		} {
			r, err := e.Do(ctx, e.Creds.A1, c.method, c.path, c.headers, c.body)
			if err := lcExpect(r, err, wire.FormUnknown, fmt.Sprintf("%s with %s altered", c.route, member)); err != nil {
				return err
			}
		}
	}
	return e.lcUnchanged(ctx, res, "requests under altered refs")
}

// fmVersions finds a group and kind with two served definition versions
// that accept an empty spec, preferring the Edge group.
func (e *Env) fmVersions(ctx context.Context) (form.FormRef, form.FormRef, error) {
	served, err := e.lcServed(ctx)
	if err != nil {
		return form.FormRef{}, form.FormRef{}, err
	}
	slices.SortStableFunc(served, func(a, b form.FormRef) int {
		return fmBool(b.APIVersion == e.Group) - fmBool(a.APIVersion == e.Group)
	})
	for i, a := range served {
		for _, b := range served[i+1:] {
			if a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.DefinitionVersion != b.DefinitionVersion &&
				e.fmEmptyValid(ctx, a) && e.fmEmptyValid(ctx, b) {
				return a, b, nil
			}
		}
	}
	return form.FormRef{}, form.FormRef{}, skipf("the host serves no kind in two definition versions that accept an empty spec")
}

// fmOnlyUnder requires res to answer under its recorded ref and to be
// resource_not_found under other, on every name-addressed route.
func (e *Env) fmOnlyUnder(ctx context.Context, res *wire.Resource, other form.FormRef) error {
	got, err := e.A1.Read(ctx, Addr(res))
	if err != nil {
		return fmt.Errorf("read under the recorded ref: %w", err)
	}
	if got.Metadata.UID != res.Metadata.UID || got.Form.FormRef != res.Form.FormRef {
		return fmt.Errorf("read under the recorded ref answered uid %s form %s", got.Metadata.UID, got.Form.FormRef)
	}
	name, gen, q := res.Metadata.Name, res.Metadata.Generation, ExactQuery(res.Metadata.Space, other)
	req := e.RequestIn(res.Metadata.Space, other, name, map[string]any{})
	prep, _ := json.Marshal(req)
	apply, _ := json.Marshal(lcApplyBody(req, fmZeroDigest))
	imp, _ := json.Marshal(wire.ImportRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, Spec: req.Spec, NativeID: "conformance-" + randomHex(6)})
	for _, c := range []struct {
		route, method, path string
		headers             map[string]string
		body                []byte
	}{
		{"read", http.MethodGet, ResourcePath(other, name, q), nil, nil},
		{"observe", http.MethodPost, ResourcePath(other, name, "/observe") + q, lcUpdateHeaders(lcKey(), gen), nil},
		{"fenced prepare", http.MethodPost, "/resources/prepare", map[string]string{wire.HeaderGeneration: gen}, prep},
		{"update apply", http.MethodPut, ResourcePath(other, name, ""), lcUpdateHeaders(lcKey(), gen), apply},
		{"fenced import", http.MethodPost, ResourcePath(other, name, "/import"), lcUpdateHeaders(lcKey(), gen), imp},
		{"delete", http.MethodDelete, ResourcePath(other, name, q), lcUpdateHeaders(lcKey(), gen), nil},
	} {
		r, err := e.Do(ctx, e.Creds.A1, c.method, c.path, c.headers, c.body)
		if err := lcExpect(r, err, wire.ResourceNotFound, fmt.Sprintf("%s of %s %q (recorded under %s) under %s", c.route, res.Kind, name, res.Form.FormRef.DefinitionVersion, other.DefinitionVersion)); err != nil {
			return err
		}
	}
	return e.lcUnchanged(ctx, got, "requests under another definition version")
}

func twoDefinitionVersions(ctx context.Context, e *Env) error {
	v1, v2, err := e.fmVersions(ctx)
	if err != nil {
		return err
	}
	n1, n2 := e.Name("two"), e.Name("two")
	r1, err := e.fmCreate(ctx, e.A1, e.Space, v1, n1)
	if err != nil {
		return err
	}
	r2, err := e.fmCreate(ctx, e.A1, e.Space, v2, n2)
	if err != nil {
		return err
	}
	if err := e.fmOnlyUnder(ctx, r1, v2); err != nil {
		return err
	}
	if err := e.fmOnlyUnder(ctx, r2, v1); err != nil {
		return err
	}
	for _, ref := range []form.FormRef{v1, v2} {
		f, err := e.A1.Forms(ctx, e.Space, ref)
		if err != nil {
			return err
		}
		if len(f.Forms) != 1 || f.Forms[0].Identity.FormRef != ref {
			return fmt.Errorf("forms for %s answered %+v", ref, f.Forms)
		}
	}
	// The name space is shared across versions: n1 is taken under v2 too.
	_, err = e.Apply(ctx, e.A1, e.RequestIn(e.Space, v2, n1, map[string]any{}), nil)
	if err := ExpectCode(err, wire.GenerationConflict); err != nil {
		return fmt.Errorf("create under %s of a name held under %s: %w", v2.DefinitionVersion, v1.DefinitionVersion, err)
	}
	return e.lcUnchanged(ctx, r1, "a conflicting create under another version")
}

func answersOnlyUnderRecordedRef(ctx context.Context, e *Env) error {
	v1, v2, err := e.fmVersions(ctx)
	if errors.Is(err, ErrSkip) {
		// No second version: the resource must still never answer under
		// a ref the host does not serve.
		ref, err := e.Ref("ModuleWorker")
		if err != nil {
			return err
		}
		res, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
		if err != nil {
			return err
		}
		alt := fmAltered(ref)["schemaDigest"]
		_, err = e.A1.Read(ctx, client.Address{Space: e.Space, Ref: alt, Name: res.Metadata.Name})
		return ExpectCode(err, wire.FormUnknown)
	}
	if err != nil {
		return err
	}
	res, err := e.fmCreate(ctx, e.A1, e.Space, v1, e.Name("rec"))
	if err != nil {
		return err
	}
	// A spec-identical apply carries the recorded ref forward.
	if res, err = e.Apply(ctx, e.A1, e.RequestIn(e.Space, v1, res.Metadata.Name, map[string]any{}), res); err != nil {
		return fmt.Errorf("spec-identical apply: %w", err)
	}
	if res.Form.FormRef != v1 {
		return fmt.Errorf("an apply rewrote the recorded ref to %s", res.Form.FormRef)
	}
	return e.fmOnlyUnder(ctx, res, v2)
}

func sameKindTwoGroups(ctx context.Context, e *Env) error {
	served, err := e.lcServed(ctx)
	if err != nil {
		return err
	}
	var a, b form.FormRef
	found := false
	for i, x := range served {
		for _, y := range served[i+1:] {
			if !found && x.Kind == y.Kind && x.APIVersion != y.APIVersion && e.fmEmptyValid(ctx, x) && e.fmEmptyValid(ctx, y) {
				a, b, found = x, y, true
			}
		}
	}
	if !found {
		return skipf("the host serves no kind in two groups that accepts an empty spec")
	}
	name := e.Name("same")
	ra, err := e.fmCreate(ctx, e.A1, e.Space, a, name)
	if err != nil {
		return err
	}
	rb, err := e.fmCreate(ctx, e.A1, e.Space, b, name)
	if err != nil {
		return fmt.Errorf("the same name in another group: %w", err)
	}
	if ra.Metadata.UID == rb.Metadata.UID {
		return fmt.Errorf("%s %q in two groups share uid %s", a.Kind, name, ra.Metadata.UID)
	}
	if err := e.Delete(ctx, e.A1, rb); err != nil {
		return err
	}
	if err := e.lcAbsent(ctx, Addr(rb), "deleting it"); err != nil {
		return err
	}
	return e.lcUnchanged(ctx, ra, "deleting the same name in another group")
}

func spaceIDGrammar(ctx context.Context, e *Env) error {
	ref, err := e.Ref("ModuleWorker")
	if err != nil {
		return err
	}
	name := e.Name("worker")
	invalid := []string{
		"", " lead", "trail ", "\u00a0lead", "trail\u3000", "\ufefflead", "trail\ufeff", "a/b", "/", "a\x01b",
		"tab\tinside", "new\nline", "a\x7fb", "a\u0085b", strings.Repeat("x", 256),
	}
	for _, sp := range invalid {
		req := e.RequestIn(sp, ref, name, map[string]any{})
		body, _ := json.Marshal(req)
		apply, _ := json.Marshal(lcApplyBody(req, fmZeroDigest))
		for _, c := range []struct {
			route, method, path string
			headers             map[string]string
			body                []byte
		}{
			{"prepare body", http.MethodPost, "/resources/prepare", nil, body},
			{"apply body", http.MethodPut, ResourcePath(ref, name, ""), lcCreateHeaders(lcKey()), apply},
			{"read query", http.MethodGet, ResourcePath(ref, name, ExactQuery(sp, ref)), nil, nil},
		} {
			r, err := e.Do(ctx, e.Creds.A1, c.method, c.path, c.headers, c.body)
			if err := lcExpect(r, err, wire.InvalidArgument, fmt.Sprintf("%s with space %+q", c.route, sp)); err != nil {
				return err
			}
		}
	}
	r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, ResourcePath(ref, name, strings.Replace(ExactQuery("x", ref), "space=x", "space=a%FFb", 1)), nil, nil)
	if err := lcExpect(r, err, wire.InvalidArgument, "read query with a space that is not UTF-8"); err != nil {
		return err
	}
	// Valid spaces are opaque: never trimmed or case-folded.
	tag := randomHex(4)
	upper, lower := "Prod North "+tag, "prod north "+tag
	ru, err := e.fmCreateIn(ctx, upper, ref, name)
	if err != nil {
		return err
	}
	rl, err := e.fmCreateIn(ctx, lower, ref, name)
	if err != nil {
		return err
	}
	if ru.Metadata.UID == rl.Metadata.UID {
		return fmt.Errorf("%q and %q share one resource", upper, lower)
	}
	only := e.Name("worker")
	if _, err := e.fmCreateIn(ctx, upper, ref, only); err != nil {
		return err
	}
	for _, sp := range []string{lower, "Prod  North " + tag, "Prod\u00a0North " + tag, strings.Repeat("\u00e9", 255)} {
		if err := e.lcAbsent(ctx, client.Address{Space: sp, Ref: ref, Name: only}, "creating it in "+upper); err != nil {
			return fmt.Errorf("space %+q: %w", sp, err)
		}
	}
	// Percent-encoding decodes back to the same code points.
	q := strings.Replace(ExactQuery(upper, ref), "space="+queryEscape(upper), "space="+strings.ReplaceAll(upper, " ", "%20"), 1)
	r, err = e.Do(ctx, e.Creds.A1, http.MethodGet, ResourcePath(ref, only, q), nil, nil)
	if err != nil {
		return err
	}
	_, err = r.lcResource(200)
	return err
}

// fmConditions reads a resource raw and checks its conditions against
// the closed vocabularies (spec/host-api-v1alpha3.md §5.2); it returns the Ready condition.
func (e *Env) fmConditions(ctx context.Context, res *wire.Resource) (*wire.Condition, error) {
	r, err := e.lcRead(ctx, e.Creds.A1, Addr(res))
	if err != nil {
		return nil, err
	}
	got, err := r.lcResource(200)
	if err != nil {
		return nil, fmt.Errorf("read %s %q: %w", res.Kind, res.Metadata.Name, err)
	}
	conds := got.Status.Conditions
	if len(conds) > wire.MaxConditions {
		return nil, fmt.Errorf("%s %q has %d conditions", res.Kind, res.Metadata.Name, len(conds))
	}
	var ready *wire.Condition
	seen := map[string]bool{}
	for i, c := range conds {
		if !slices.Contains(wire.ConditionTypes, c.Type) || !slices.Contains(wire.ConditionStatuses, c.Status) || !slices.Contains(wire.ConditionReasons, c.Reason) || seen[c.Type] {
			return nil, fmt.Errorf("%s %q condition %+v is outside the closed vocabularies (or repeats its type)", res.Kind, res.Metadata.Name, c)
		}
		seen[c.Type] = true
		if _, err := time.Parse(time.RFC3339, c.LastTransitionTime); err != nil {
			return nil, fmt.Errorf("%s %q condition %s: lastTransitionTime %q is not RFC 3339", res.Kind, res.Metadata.Name, c.Type, c.LastTransitionTime)
		}
		if n, m := utf8.RuneCountInString(c.HostReason), utf8.RuneCountInString(c.Message); n > 256 || m > 4096 {
			return nil, fmt.Errorf("%s %q condition %s: hostReason is %d characters and message %d; the wire schema holds them to at most 256 and 4096 (spec/conformance-probe.md §4)", res.Kind, res.Metadata.Name, c.Type, n, m)
		}
		if c.Type == "Ready" {
			ready = &conds[i]
		}
	}
	return ready, nil
}

func conditionReasonClosed(ctx context.Context, e *Env) error {
	serving, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	cronOnly, err := e.DeployApp(ctx, e.A1, "scheduled")
	if err != nil {
		return err
	}
	idle, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		return err
	}
	queue, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
	if err != nil {
		return err
	}
	for _, res := range []*wire.Resource{serving.Bundle, serving.Version, serving.Deployment, cronOnly.Deployment, queue} {
		if _, err := e.fmConditions(ctx, res); err != nil {
			return err
		}
	}
	for _, w := range []struct {
		res            *wire.Resource
		status, reason string
	}{{serving.Worker, "True", "Available"}, {cronOnly.Worker, "False", "UnsupportedCapability"}, {idle, "False", "Provisioning"}} {
		ready, err := e.fmConditions(ctx, w.res)
		if err != nil {
			return err
		}
		if ready == nil || ready.Status != w.status || ready.Reason != w.reason {
			return fmt.Errorf("ModuleWorker %q: Ready condition %+v, want %s/%s", w.res.Metadata.Name, ready, w.status, w.reason)
		}
		if w.reason == "Provisioning" && !strings.Contains(ready.HostReason, w.res.Metadata.Name) {
			return fmt.Errorf("ModuleWorker %q without an active deployment renders hostReason %q; it must name the worker (spec/conformance-probe.md §4)", w.res.Metadata.Name, ready.HostReason)
		}
	}
	return nil
}
