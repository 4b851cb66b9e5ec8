package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// profiles returns the host's support profiles, fetched at most once per
// provider configuration (brief §8.2).
func (d *Data) profiles(ctx context.Context) (map[string]wire.SupportProfile, error) {
	d.support.once.Do(func() {
		resp, err := d.Client.SupportForms(ctx)
		if err != nil {
			d.support.err = err
			return
		}
		d.support.profiles = map[string]wire.SupportProfile{}
		for _, p := range resp.Profiles {
			if p.FormRef != nil {
				d.support.profiles[p.FormRef.String()] = p
			}
		}
	})
	return d.support.profiles, d.support.err
}

// planSupport checks, at plan time, that the host supports the exact
// FormRef with the operations the type needs, the planned closed-enum
// values and the named limits. An unreadable support surface is a
// warning; only an explicit refusal is an error.
func (r *Resource) planSupport(ctx context.Context, c *Codec, spec map[string]any, id identity) diag.Diagnostics {
	if r.data == nil {
		return nil
	}
	profiles, err := r.data.profiles(ctx)
	if err != nil {
		return renderWarning("The host's support profiles could not be read; apply will decide", err, id)
	}
	p, ok := profiles[c.Ref.String()]
	if !ok {
		return renderError("The host does not support this Form", fmt.Errorf("no support profile for %s", c.Ref), withCode(id, "takoform.provider/host-does-not-support-form"))
	}
	need := []string{"create", "read", "delete"}
	if r.spec.HasUpdate {
		need = append(need, "update")
	}
	for _, op := range need {
		if !contains(p.Operations, op) {
			return renderError("The host does not support this Form's lifecycle", fmt.Errorf("its profile for %s lacks operation %s", c.Ref, op), withCode(id, "takoform.provider/host-does-not-support-form"))
		}
	}
	var d diag.Diagnostics
	for field, allowed := range p.SupportedEnums {
		for _, v := range enumValues(spec[field]) {
			if !contains(allowed, v) {
				id.Pointer = "/" + field
				d.Append(renderError("The host does not support this value", fmt.Errorf("%s %q is not among the values this host supports (%v)", field, v, allowed), withCode(id, "takoform.provider/host-limit-exceeded"))...)
			}
		}
	}
	for name, limit := range p.Limits {
		if name == "maximumBundleBytes" || len(name) <= len("maximum") || name[:7] != "maximum" {
			continue
		}
		field := string(name[7]+('a'-'A')) + name[8:]
		if l, ok := spec[field].([]any); ok && int64(len(l)) > limit {
			id.Pointer = "/" + field
			d.Append(renderError("The host limit is exceeded", fmt.Errorf("%s has %d entries; the host accepts at most %d (%s)", field, len(l), limit, name), withCode(id, "takoform.provider/host-limit-exceeded"))...)
		}
	}
	return d
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

var _ = errors.New
