package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "validate-accepts-canonical", Group: "lifecycle", Summary: "every canonical Edge fixture validates valid:true without resolving relations", Run: validateAcceptsCanonical},
		Check{ID: "validate-rejects-negative-fixtures", Group: "lifecycle", Summary: "every negative Edge fixture answers 200 valid:false with an error diagnostic", Run: validateRejectsNegative},
		Check{ID: "prepare-binds-exact-spec", Group: "lifecycle", Summary: "prepare echoes the materialised spec and its digest; the review binds exactly that desired state", Run: prepareBindsExactSpec},
		Check{ID: "prepare-substitution-rejected", Group: "lifecycle", Summary: "a review spent on another spec, name, generation, incarnation or tenant is invalid_argument", Run: prepareSubstitutionRejected},
		Check{ID: "prepare-requires-update-fence", Group: "lifecycle", Summary: "prepare on an existing resource needs the current generation fence; on an absent one it allows none", Run: prepareRequiresUpdateFence},
		Check{ID: "stale-prepare-rejected", Group: "lifecycle", Summary: "a review minted before the resource moved cannot be applied", Run: stalePrepareRejected},
	)
}

// lcFixture is one Edge fixture document and the host ref it is sent under.
type lcFixture struct {
	ref  form.FormRef
	name string
	doc  json.RawMessage
}

// lcFixtures reads the fixtures of the lane's Edge family (our edition
// of e.Group) for every kind the host serves (by group and kind: the fixtures are the public contract's own);
// canonical when negative is false, desired-stage negative ones otherwise.
func (e *Env) lcFixtures(ctx context.Context, negative bool) ([]lcFixture, error) {
	served, err := e.lcServed(ctx)
	if err != nil {
		return nil, err
	}
	fsys, ok := edge.FamilyOf(e.Group)
	if !ok {
		return nil, skipf("the lane's Edge group %s has no built-in family to take fixtures from", e.Group)
	}
	fam, findings := form.LoadFamily(fsys)
	if len(findings) > 0 {
		return nil, fmt.Errorf("the built-in Edge family does not load: %v", findings[0])
	}
	var out []lcFixture
	for _, ff := range fam.Forms {
		def := ff.Definition
		ref, ok := lcPick(served, def.Ref())
		if !ok {
			continue
		}
		var paths, names []string
		if negative {
			for _, n := range def.NegativeFixtures() {
				if n.Stage == "desired" {
					paths, names = append(paths, n.InputPath), append(names, n.Name)
				}
			}
		} else {
			for _, f := range def.Fixtures() {
				paths, names = append(paths, f.DesiredPath), append(names, f.Name)
			}
		}
		for i, p := range paths {
			b, err := fs.ReadFile(fsys, path.Join(path.Dir(ff.Path), p))
			if err != nil {
				return nil, fmt.Errorf("fixture %s of %s: %w", p, def.Ref().Kind, err)
			}
			out = append(out, lcFixture{ref: ref, name: def.Ref().Kind + "/" + names[i], doc: b})
		}
	}
	if len(out) == 0 {
		return nil, skipf("the host serves no Edge kind with fixtures")
	}
	return out, nil
}

// lcServed lists every FormRef the host's support profiles name.
func (e *Env) lcServed(ctx context.Context) ([]form.FormRef, error) {
	p, err := e.A1.SupportForms(ctx)
	if err != nil {
		return nil, fmt.Errorf("read support profiles: %w", err)
	}
	out := make([]form.FormRef, 0, len(p.Profiles))
	for _, pr := range p.Profiles {
		if pr.FormRef != nil {
			out = append(out, *pr.FormRef)
		}
	}
	return out, nil
}

// lcPick is want itself when served, else a served ref of its group and
// kind (another authoring of the same public contract).
func lcPick(served []form.FormRef, want form.FormRef) (form.FormRef, bool) {
	var alt form.FormRef
	found := false
	for _, r := range served {
		if r == want {
			return r, true
		}
		if r.APIVersion == want.APIVersion && r.Kind == want.Kind && !found {
			alt, found = r, true
		}
	}
	return alt, found
}

func validateAcceptsCanonical(ctx context.Context, e *Env) error {
	fxs, err := e.lcFixtures(ctx, false)
	if err != nil {
		return err
	}
	for _, fx := range fxs {
		resp, err := e.A1.Validate(ctx, e.RequestIn(e.Space, fx.ref, e.Name("fixture"), fx.doc))
		if err != nil {
			return fmt.Errorf("validate canonical fixture %s: %w", fx.name, err)
		}
		if !resp.Valid {
			return fmt.Errorf("canonical fixture %s answered valid:false: %+v", fx.name, resp.Diagnostics)
		}
		for _, d := range resp.Diagnostics {
			if d.Severity != "warning" {
				return fmt.Errorf("canonical fixture %s is valid but carries a %q diagnostic: %+v", fx.name, d.Severity, d)
			}
		}
	}
	return nil
}

func validateRejectsNegative(ctx context.Context, e *Env) error {
	fxs, err := e.lcFixtures(ctx, true)
	if err != nil {
		return err
	}
	for _, fx := range fxs {
		body, err := json.Marshal(e.RequestIn(e.Space, fx.ref, e.Name("fixture"), fx.doc))
		if err != nil {
			return err
		}
		r, err := e.Do(ctx, e.Creds.A1, "POST", "/resources/validate", nil, body)
		if err != nil {
			return err
		}
		if r.Status != 200 {
			return fmt.Errorf("negative fixture %s: validate answered HTTP %d (spec problems are a 200 valid:false): %s", fx.name, r.Status, abbreviate(r.Body))
		}
		var resp wire.ValidateResponse
		if err := json.Unmarshal(r.Body, &resp); err != nil {
			return fmt.Errorf("negative fixture %s: %v", fx.name, err)
		}
		if resp.Valid {
			return fmt.Errorf("negative fixture %s answered valid:true", fx.name)
		}
		if len(resp.Diagnostics) == 0 || len(resp.Diagnostics) > wire.MaxDiagnostics {
			return fmt.Errorf("negative fixture %s: %d diagnostics, want 1..%d", fx.name, len(resp.Diagnostics), wire.MaxDiagnostics)
		}
		errs := 0
		for _, d := range resp.Diagnostics {
			if d.Severity != "error" && d.Severity != "warning" || d.Message == "" || (d.Field != "" && !strings.HasPrefix(d.Field, "/")) {
				return fmt.Errorf("negative fixture %s: malformed diagnostic %+v", fx.name, d)
			}
			if d.Severity == "error" {
				errs++
			}
		}
		if errs == 0 {
			return fmt.Errorf("negative fixture %s: valid:false without an error diagnostic", fx.name)
		}
	}
	return nil
}

func prepareBindsExactSpec(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	explicit, err := e.Request("AtLeastOnceQueue", name, map[string]any{"messageRetentionSeconds": 3600, "deliveryDelaySeconds": 0})
	if err != nil {
		return err
	}
	omitted, _ := e.Request("AtLeastOnceQueue", name, lcQueue(3600))
	other, _ := e.Request("AtLeastOnceQueue", name, lcQueue(7200))
	var ps [3]*wire.PrepareResponse
	for i, req := range []wire.ResourceRequest{explicit, omitted, other} {
		if ps[i], err = e.A1.Prepare(ctx, req, ""); err != nil {
			return fmt.Errorf("prepare create %d: %w", i, err)
		}
		if !ijson.ValidDigest(ps[i].Review.PrepareDigest) {
			return fmt.Errorf("prepareDigest %q is not sha256:<64 hex>", ps[i].Review.PrepareDigest)
		}
		d, err := ijson.Digest(ps[i].Resource.Spec)
		if err != nil || d != ps[i].Review.SpecDigest {
			return fmt.Errorf("review.specDigest %s is not the JCS digest %s of the echoed spec %s", ps[i].Review.SpecDigest, d, ps[i].Resource.Spec)
		}
	}
	var echoed map[string]any
	if err := json.Unmarshal(ps[1].Resource.Spec, &echoed); err != nil {
		return err
	}
	if v, ok := echoed["deliveryDelaySeconds"].(float64); !ok || v != 0 || len(echoed) != 2 {
		return fmt.Errorf("prepare echoed %s; want the materialised spec with deliveryDelaySeconds 0", ps[1].Resource.Spec)
	}
	if ps[0].Review.SpecDigest != ps[1].Review.SpecDigest {
		return fmt.Errorf("an omitted default and its written value digest differently: %s vs %s", ps[1].Review.SpecDigest, ps[0].Review.SpecDigest)
	}
	if ps[2].Review.SpecDigest == ps[1].Review.SpecDigest || ps[2].Review.PrepareDigest == ps[1].Review.PrepareDigest {
		return fmt.Errorf("two different specs were bound by the same digests")
	}
	// The 3600 review spent on the 7200 spec binds nothing.
	_, err = e.A1.Apply(ctx, lcApplyBody(other, ps[1].Review.PrepareDigest), client.Precondition{})
	if err := ExpectCode(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("apply of another spec under a review: %w", err)
	}
	if err := e.lcAbsent(ctx, client.Address{Space: e.Space, Ref: omitted.Form.FormRef, Name: name}, "a refused apply"); err != nil {
		return err
	}
	// The same desired state, default omitted, is what the review bound.
	res, err := e.A1.ApplyAndWait(ctx, lcApplyBody(omitted, ps[0].Review.PrepareDigest), client.Precondition{})
	if err != nil {
		return fmt.Errorf("apply of the reviewed desired state with its default omitted: %w", err)
	}
	if d, _ := ijson.Digest(res.Spec); d != ps[0].Review.SpecDigest {
		return fmt.Errorf("the stored spec %s is not the reviewed one (digest %s, reviewed %s)", res.Spec, d, ps[0].Review.SpecDigest)
	}
	return nil
}

func prepareSubstitutionRejected(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	res, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	ref, pre := res.Form.FormRef, client.Precondition{Generation: "1", UID: res.Metadata.UID}
	req := func(n string, retention int) wire.ResourceRequest {
		return e.RequestIn(e.Space, ref, n, lcQueue(retention))
	}
	refused := func(what string, body wire.ApplyRequest, pre client.Precondition) error {
		_, err := e.A1.Apply(ctx, body, pre)
		if err := ExpectCode(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("a review prepared for %s: %w", what, err)
		}
		return nil
	}
	// Another spec.
	b, err := lcPrepared(ctx, e.A1, req(name, 7200), "1")
	if err != nil {
		return err
	}
	b.Spec = req(name, 8000).Spec
	if err := refused("another spec", b, pre); err != nil {
		return err
	}
	// Another name.
	x, y := e.Name("queue"), e.Name("queue")
	if b, err = lcPrepared(ctx, e.A1, req(x, 3600), ""); err != nil {
		return err
	}
	b.Metadata.Name = y
	if err := refused("another name", b, client.Precondition{}); err != nil {
		return err
	}
	if err := e.lcAbsent(ctx, client.Address{Space: e.Space, Ref: ref, Name: y}, "a refused create"); err != nil {
		return err
	}
	// Another generation: reviewed at 1, applied at 2 with a current fence.
	stale, err := lcPrepared(ctx, e.A1, req(name, 7200), "1")
	if err != nil {
		return err
	}
	if res, err = e.Update(ctx, e.A1, res, lcQueue(9000)); err != nil {
		return err
	}
	if err := refused("another generation", stale, client.Precondition{Generation: "2", UID: res.Metadata.UID}); err != nil {
		return err
	}
	if err := e.lcUnchanged(ctx, res, "a refused apply"); err != nil {
		return err
	}
	// Another incarnation: reviewed on uid1 at generation 2, applied to uid2 at generation 2.
	oldUID := res.Metadata.UID
	other, err := lcPrepared(ctx, e.A1, req(name, 5000), "2")
	if err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, res); err != nil {
		return err
	}
	if res, err = e.Create(ctx, e.A1, "AtLeastOnceQueue", name, lcQueue(3600)); err != nil {
		return err
	}
	if res, err = e.Update(ctx, e.A1, res, lcQueue(9000)); err != nil {
		return err
	}
	if res.Metadata.UID == oldUID || res.Metadata.Generation != "2" {
		return fmt.Errorf("the re-created resource is uid %s generation %s; want a new uid at generation 2", res.Metadata.UID, res.Metadata.Generation)
	}
	if err := refused("another incarnation", other, client.Precondition{Generation: "2", UID: res.Metadata.UID}); err != nil {
		return err
	}
	// Another exact Form, the spec digest equal: the FormRef is bound too.
	if err := e.lcOtherFormRefused(ctx); err != nil {
		return err
	}
	// Another tenant: B's review is not A's; A2 may spend A1's.
	z := e.Name("queue")
	if b, err = lcPrepared(ctx, e.B, req(z, 3600), ""); err != nil {
		return err
	}
	if err := refused("another tenant", b, client.Precondition{}); err != nil {
		return err
	}
	if b, err = lcPrepared(ctx, e.A1, req(z, 3600), ""); err != nil {
		return err
	}
	if _, err := e.A2.ApplyAndWait(ctx, b, client.Precondition{}); err != nil {
		return fmt.Errorf("a second principal of the tenant spending its review: %w", err)
	}
	return nil
}

func prepareRequiresUpdateFence(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	req, err := e.Request("AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	if _, err := e.A1.Prepare(ctx, req, "1"); ExpectCode(err, wire.ResourceNotFound) != nil {
		return fmt.Errorf("prepare fenced on an absent resource: %w", ExpectCode(err, wire.ResourceNotFound))
	}
	res, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	upd := e.RequestIn(e.Space, res.Form.FormRef, name, lcQueue(7200))
	for _, c := range []struct {
		fence string
		code  wire.Code
	}{{"", wire.InvalidArgument}, {"2", wire.GenerationConflict}} {
		_, err := e.A1.Prepare(ctx, upd, c.fence)
		if err := ExpectCode(err, c.code); err != nil {
			return fmt.Errorf("prepare of an existing resource with fence %q: %w", c.fence, err)
		}
	}
	b, err := lcPrepared(ctx, e.A1, upd, "1")
	if err != nil {
		return fmt.Errorf("prepare with the current fence: %w", err)
	}
	got, err := e.A1.ApplyAndWait(ctx, b, client.Precondition{Generation: "1", UID: res.Metadata.UID})
	if err != nil {
		return fmt.Errorf("apply of the fenced review: %w", err)
	}
	if got.Metadata.Generation != "2" {
		return fmt.Errorf("the update answered generation %s, want 2", got.Metadata.Generation)
	}
	return nil
}

func stalePrepareRejected(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	res, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	stale, err := lcPrepared(ctx, e.A1, e.RequestIn(e.Space, res.Form.FormRef, name, lcQueue(7200)), "1")
	if err != nil {
		return err
	}
	if res, err = e.Update(ctx, e.A1, res, lcQueue(9000)); err != nil {
		return err
	}
	_, err = e.A1.Apply(ctx, stale, client.Precondition{Generation: "1", UID: res.Metadata.UID})
	if err := ExpectCode(err, wire.GenerationConflict); err != nil {
		return fmt.Errorf("a stale review with its stale fence: %w", err)
	}
	_, err = e.A1.Apply(ctx, stale, client.Precondition{Generation: "2", UID: res.Metadata.UID})
	if err := ExpectCode(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("a stale review with the current fence: %w", err)
	}
	if err := e.lcUnchanged(ctx, res, "stale reviews"); err != nil {
		return err
	}
	// A create review goes stale when the name is taken meanwhile.
	x := e.Name("queue")
	b, err := lcPrepared(ctx, e.A1, e.RequestIn(e.Space, res.Form.FormRef, x, lcQueue(3600)), "")
	if err != nil {
		return err
	}
	if _, err := e.Create(ctx, e.A2, "AtLeastOnceQueue", x, lcQueue(3600)); err != nil {
		return err
	}
	_, err = e.A1.Apply(ctx, b, client.Precondition{})
	if err := ExpectCode(err, wire.GenerationConflict); err != nil {
		return fmt.Errorf("a create review spent after the name was taken: %w", err)
	}
	return nil
}

// lcOtherFormRefused spends a create review of one exact Form on another
// whose empty spec digests the same (when the host serves such a pair).
func (e *Env) lcOtherFormRefused(ctx context.Context) error {
	served, err := e.lcServed(ctx)
	if err != nil {
		return err
	}
	name := e.Name("other")
	digests := map[string]wire.ApplyRequest{}
	for _, ref := range served {
		if !e.fmEmptyValid(ctx, ref) {
			continue
		}
		b, err := lcPrepared(ctx, e.A1, e.RequestIn(e.Space, ref, name, map[string]any{}), "")
		if err != nil {
			return err
		}
		d, _ := ijson.Digest(b.Spec)
		first, ok := digests[d]
		if !ok {
			digests[d] = b
			continue
		}
		b.Review = first.Review
		_, err = e.A1.Apply(ctx, b, client.Precondition{})
		if err := ExpectCode(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("a review prepared under %s spent under %s: %w", first.Form.FormRef, b.Form.FormRef, err)
		}
		return e.lcAbsent(ctx, client.Address{Space: e.Space, Ref: b.Form.FormRef, Name: name}, "a review spent under another Form")
	}
	return nil
}
