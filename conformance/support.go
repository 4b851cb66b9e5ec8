package conformance

// The support-profiles-present check (spec/host-api-v1alpha3.md §8.1;
// on lane v1beta1 also the bundle limits of spec/lane-v1beta1.md §8.1,
// §14).

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

var fmProfileKey = regexp.MustCompile(`^[a-z][a-zA-Z0-9]{0,63}$`)

func supportProfilesPresent(ctx context.Context, e *Env) error {
	r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, "/support/forms", nil, nil)
	if err != nil {
		return err
	}
	if r.Status != 200 {
		return fmt.Errorf("support/forms answered HTTP %d", r.Status)
	}
	var resp wire.SupportProfilesResponse
	if err := ijson.Unmarshal(r.Body, &resp); err != nil {
		return fmt.Errorf("support/forms is not a closed profile list: %v", err)
	}
	if n := len(resp.Profiles); n == 0 || n > wire.MaxSupportProfiles {
		return fmt.Errorf("support/forms lists %d profiles, want 1..%d", n, wire.MaxSupportProfiles)
	}
	refs, lines := map[form.FormRef]bool{}, map[string]bool{}
	for _, p := range resp.Profiles {
		if p.APIVersion != wire.SupportAPI || p.Kind != client.FormSupport || p.FormRef == nil || p.InterfaceRef != nil || p.BindingRef != nil {
			return fmt.Errorf("profile %s %s is not a FormSupport profile with exactly a formRef", p.APIVersion, p.Kind)
		}
		ref := *p.FormRef
		if err := ref.Validate(); err != nil {
			return fmt.Errorf("profile formRef %s: %v", ref, err)
		}
		line := ref.APIVersion + " " + ref.Kind + " " + ref.DefinitionVersion
		if refs[ref] || lines[line] {
			return fmt.Errorf("two profiles for %s", line)
		}
		refs[ref], lines[line] = true, true
		if err := fmCheckOperations(p.Operations); err != nil {
			return fmt.Errorf("profile %s: %w", ref, err)
		}
		if def := fmFamilyDef(ref); def != nil && !fmSameSet(p.Operations, fmCaps(def)) {
			return fmt.Errorf("profile %s lists operations %v; the definition declares %v", ref, p.Operations, fmCaps(def))
		}
		for k := range p.SupportedEnums {
			if !fmProfileKey.MatchString(k) {
				return fmt.Errorf("profile %s: supportedEnums key %q", ref, k)
			}
		}
		for k := range p.SupportedRanges {
			if !fmProfileKey.MatchString(k) {
				return fmt.Errorf("profile %s: supportedRanges key %q", ref, k)
			}
		}
		for k := range p.Limits {
			if !fmProfileKey.MatchString(k) {
				return fmt.Errorf("profile %s: limits key %q", ref, k)
			}
		}
		one, err := e.A2.SupportForm(ctx, ref.APIVersion, ref.Kind, ref.DefinitionVersion)
		if err != nil {
			return fmt.Errorf("support-form of %s: %w", line, err)
		}
		if *one.FormRef != ref || !fmSameSet(one.Operations, p.Operations) {
			return fmt.Errorf("support-form of %s answered %s with operations %v; the list says %s %v", line, *one.FormRef, one.Operations, ref, p.Operations)
		}
	}
	if len(e.refs) == 0 {
		return fmt.Errorf("no profile names a %s Form", e.Group)
	}
	if e.Lane == wire.V1beta1 {
		if err := bundleLimitsAdvertised(r.Body, e.Group); err != nil {
			return err
		}
	}
	ref, err := e.Ref("ModuleWorker")
	if err != nil {
		return err
	}
	r, err = e.Do(ctx, e.Creds.A1, http.MethodGet, "/support/forms/"+ref.APIVersion+"/"+ref.Kind+"/999.0.0-conformance", nil, nil)
	return lcExpect(r, err, wire.FormUnknown, "support-form of an unknown definition version")
}

// bundleLimits are the limits lane v1beta1's artifact-backed Forms
// advertise, as the integer text of their JSON (spec/lane-v1beta1.md §8.1,
// §14 "support-profiles-present").
var bundleLimits = map[string]map[string]string{
	"WorkerBundle":       {"maximumBundleBytes": "10485760", "maximumBundleFiles": "4096"},
	"StaticAssetBundle":  {"maximumBundleBytes": "10485760", "maximumBundleFiles": "16384"},
	"SQLiteMigrationSet": {"maximumBundleBytes": "10485760", "maximumBundleFiles": "16384"},
}

// bundleLimitsAdvertised checks that the support/forms answer body lists,
// for each artifact-backed Form of group, a profile whose limits are
// exactly bundleLimits' integers, compared as JSON text.
func bundleLimitsAdvertised(body []byte, group string) error {
	var raw struct {
		Profiles []struct {
			FormRef *form.FormRef              `json:"formRef"`
			Limits  map[string]json.RawMessage `json:"limits"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return fmt.Errorf("support/forms: %v", err)
	}
	seen := map[string]bool{}
	for _, p := range raw.Profiles {
		if p.FormRef == nil || p.FormRef.APIVersion != group {
			continue
		}
		want, ok := bundleLimits[p.FormRef.Kind]
		if !ok {
			continue
		}
		seen[p.FormRef.Kind] = true
		for k, v := range want {
			if got := string(p.Limits[k]); got != v {
				return fmt.Errorf("profile %s: limits.%s is %q, want the integer %s (spec/lane-v1beta1.md §8.1)", p.FormRef, k, got, v)
			}
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(bundleLimits)) {
		if !seen[kind] {
			return fmt.Errorf("support/forms lists no %s %s profile; lane v1beta1 advertises the bundle limits of each artifact-backed Form (spec/lane-v1beta1.md §8.1)", group, kind)
		}
	}
	return nil
}
