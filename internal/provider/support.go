package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// contractAnswer is a support-route answer about one Interface or Binding.
type contractAnswer struct {
	digest string // the digest the host implements
	err    error
}

// contract asks the host, at most once per provider configuration and
// lane, whether it implements an Interface ("interface") or a Binding
// ("binding") contract on lane l.
func (d *Data) contract(ctx context.Context, l wire.Lane, kind, name, version string) contractAnswer {
	lc := d.laneConnOf(l)
	key := kind + " " + name + "@" + version
	if v, ok := lc.support.contracts.Load(key); ok {
		return mustContractAnswer(v)
	}
	if lc.client == nil {
		return contractAnswer{err: &laneUnavailableError{lane: l, err: lc.err}}
	}
	var p *wire.SupportProfile
	var err error
	if kind == "interface" {
		p, err = lc.client.SupportInterface(ctx, name, version)
	} else {
		p, err = lc.client.SupportBinding(ctx, name, version)
	}
	a := contractAnswer{err: err}
	switch {
	case err != nil:
	case p.InterfaceRef != nil:
		a.digest = p.InterfaceRef.SchemaDigest
	case p.BindingRef != nil:
		a.digest = p.BindingRef.SchemaDigest
	}
	v, _ := lc.support.contracts.LoadOrStore(key, a)
	return mustContractAnswer(v)
}

// mustContractAnswer: contracts holds only contractAnswer values (contract
// stores them).
func mustContractAnswer(v any) contractAnswer {
	a, ok := v.(contractAnswer)
	if !ok {
		panic(fmt.Sprintf("provider: support contracts hold a %T, not a contractAnswer", v))
	}
	return a
}

// explicitRefusal: only form_unknown or resource_not_found on a support
// route says no; anything else is silence (spec/host-api-v1alpha3.md §8.2).
func explicitRefusal(err error) bool {
	var we *wire.Error
	return errors.As(err, &we) && (we.Code == wire.FormUnknown || we.Code == wire.ResourceNotFound)
}

// planSupport checks, at plan time, what the host's support profiles say
// (spec/host-api-v1alpha3.md §8.2): the exact FormRef with the operations the type needs, each
// Interface the Form provides and each Binding contract the planned spec
// uses (at the digests the definition names), planned closed-enum values
// and integer ranges, collection sizes within maximum<Field> limits, and
// the local bundle's bytes within maximumBundleBytes before any upload.
// An unreadable support surface is a warning; only an explicit refusal is
// an error.
func (r *Resource) planSupport(ctx context.Context, c *Codec, spec, plan map[string]any, id identity) diag.Diagnostics {
	if r.data == nil {
		return nil
	}
	p, ok, err := r.data.profileOf(ctx, c.Ref)
	if d := laneDiag(err, id); d != nil {
		return d
	}
	if err != nil {
		return renderWarning("The host's support profiles could not be read; apply will decide", err, id)
	}
	if !ok {
		return renderError("The host does not support this Form", r.servedNeither(c), withCode(id, CodeHostDoesNotSupportForm))
	}
	need := []string{"create", "read", "delete"}
	if r.spec.HasUpdate {
		need = append(need, "update")
	}
	for _, op := range need {
		if !contains(p.Operations, op) {
			return renderError("The host does not support this Form's lifecycle", fmt.Errorf("its profile for %s lacks operation %s", c.Ref, op), withCode(id, CodeHostDoesNotSupportForm))
		}
	}
	d := r.planContracts(ctx, c, spec, id)
	for field, allowed := range p.SupportedEnums {
		for _, v := range enumValues(spec[field]) {
			if !contains(allowed, v) {
				id.Pointer = "/" + field
				d.Append(renderError("The host does not support this value", fmt.Errorf("%s %q is not among the values this host supports (%v)", field, v, allowed), withCode(id, CodeHostLimitExceeded))...)
			}
		}
	}
	for field, rg := range p.SupportedRanges {
		v, ok := integer(spec[field])
		if !ok {
			continue
		}
		minRaw, err1 := decodeRaw(rg.Minimum)
		maxRaw, err2 := decodeRaw(rg.Maximum)
		if err := errors.Join(err1, err2); err != nil {
			d.Append(renderWarning("The host's supported range of "+field+" could not be read; apply will decide", err, id)...)
			continue
		}
		lo, hasLo := integer(minRaw)
		hi, hasHi := integer(maxRaw)
		if (hasLo && v.Cmp(lo) < 0) || (hasHi && v.Cmp(hi) > 0) {
			id.Pointer = "/" + field
			d.Append(renderError("The host does not support this value", fmt.Errorf("%s %s is outside the range this host supports (%s)", field, v, rangeText(lo, hasLo, hi, hasHi)), withCode(id, CodeHostLimitExceeded))...)
		}
	}
	for name, limit := range p.Limits {
		if name == "maximumBundleBytes" {
			if total, ok := bundleBytes(plan); (r.spec.LocalModules || r.spec.FilesKind != "") && ok && total > limit {
				id.Pointer = "/manifestDigest"
				d.Append(renderError("The host limit is exceeded", fmt.Errorf("the bundle's local files hold %d bytes; the host accepts at most %d (maximumBundleBytes)", total, limit), withCode(id, CodeHostLimitExceeded))...)
			}
			continue
		}
		if len(name) <= len("maximum") || !strings.HasPrefix(name, "maximum") {
			continue
		}
		field := strings.ToLower(name[7:8]) + name[8:]
		if l, ok := spec[field].([]any); ok && int64(len(l)) > limit {
			id.Pointer = "/" + field
			d.Append(renderError("The host limit is exceeded", fmt.Errorf("%s has %d entries; the host accepts at most %d (%s)", field, len(l), limit, name), withCode(id, CodeHostLimitExceeded))...)
		}
	}
	return d
}

// planContracts checks the Interfaces the Form provides and the Binding
// contracts the planned spec uses.
func (r *Resource) planContracts(ctx context.Context, c *Codec, spec map[string]any, id identity) diag.Diagnostics {
	type want struct{ kind, name, version, digest string }
	var wants []want
	for _, i := range c.Def.ProvidedInterfaces() {
		wants = append(wants, want{"interface", i.Name, i.Version, c.contractDigest(i.SchemaDigest)})
	}
	used := map[string]bool{}
	for _, ref := range c.Def.References(jsonRoundTrip(spec)) {
		if b := ref.Relation.Binding; b != "" && !used[b] {
			used[b] = true
			for _, a := range c.Def.AcceptedBindings() {
				if a.Name == b {
					wants = append(wants, want{"binding", a.Name, a.Version, c.contractDigest(a.SchemaDigest)})
				}
			}
		}
	}
	var d diag.Diagnostics
	l := r.data.laneOf(ctx, c.Ref)
	for _, w := range wants {
		a := r.data.contract(ctx, l, w.kind, w.name, w.version)
		switch {
		case a.err != nil && explicitRefusal(a.err):
			d.Append(renderError("The host does not implement a contract this Form needs", fmt.Errorf("%s %s@%s: the host refuses it (%v)", w.kind, w.name, w.version, a.err), withCode(id, CodeHostDoesNotSupportForm))...)
		case a.err != nil:
			d.Append(renderWarning("The host's support for a contract could not be read; apply will decide", a.err, id)...)
		case a.digest != w.digest:
			d.Append(renderError("The host implements another revision of a contract this Form needs", fmt.Errorf("%s %s@%s: the host implements %s, the Form names %s", w.kind, w.name, w.version, a.digest, w.digest), withCode(id, CodeHostDoesNotSupportForm))...)
		}
	}
	return d
}

// integer reads a whole JSON number (json.Number, *big.Float, int64).
func integer(v any) (*big.Int, bool) {
	var s string
	switch n := v.(type) {
	case json.Number:
		s = n.String()
	case *big.Float:
		if !n.IsInt() {
			return nil, false
		}
		i, _ := n.Int(nil) // exact: n is an integer
		return i, true
	case int64:
		return big.NewInt(n), true
	default:
		return nil, false
	}
	i, ok := new(big.Int).SetString(s, 10)
	return i, ok
}

func rangeText(lo *big.Int, hasLo bool, hi *big.Int, hasHi bool) string {
	switch {
	case hasLo && hasHi:
		return lo.String() + ".." + hi.String()
	case hasLo:
		return "at least " + lo.String()
	}
	return "at most " + hi.String()
}

// bundleBytes sums the sizes of a planned local bundle's modules, or of a
// FilesKind type's files.
func bundleBytes(plan map[string]any) (int64, bool) {
	mods := asList(plan["modules"])
	if mods == nil {
		mods = asList(plan["files"])
	}
	if len(mods) == 0 {
		return 0, false
	}
	var total int64
	for _, m := range mods {
		n, ok := integer(mapOf(m)["size"])
		if !ok {
			return 0, false
		}
		total += n.Int64()
	}
	return total, true
}

func enumValues(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// jsonRoundTrip re-decodes a Go value the way the host reads JSON (exact
// numbers), for schema validation.
func jsonRoundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	out, err := ijson.Decode(b)
	if err != nil {
		return v
	}
	return out
}
