package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

// Support profile kinds (spec/host-api-v1alpha3.md §8.1).
const (
	FormSupport      = "FormSupport"
	InterfaceSupport = "InterfaceSupport"
	BindingSupport   = "BindingSupport"
)

var profileKeyPattern = regexp.MustCompile(`^[a-z][a-zA-Z0-9]{0,63}$`)

// SupportForms lists one profile per installed exact FormRef (route 18,
// GET {api}/support/forms; spec/host-api-v1alpha3.md §8.1); at most 1024, each a FormSupport
// profile.
func (c *Client) SupportForms(ctx context.Context) (*wire.SupportProfilesResponse, error) {
	r := &request{op: "support-forms", method: http.MethodGet, path: c.lane.APIBase + "/support/forms"}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var out wire.SupportProfilesResponse
	if err := c.decodeAnswer(r, resp, &out, "support profiles response", "/profiles"); err != nil {
		return nil, err
	}
	if len(out.Profiles) > wire.MaxSupportProfiles {
		return nil, c.protocolError(r, resp.status, fmt.Sprintf("%d profiles; at most %d", len(out.Profiles), wire.MaxSupportProfiles), nil)
	}
	for i := range out.Profiles {
		if err := checkProfile(&out.Profiles[i], FormSupport); err != nil {
			return nil, c.protocolError(r, resp.status, fmt.Sprintf("profiles[%d] is invalid", i), err)
		}
	}
	return &out, nil
}

// SupportForm reads the profile of the definition installed as
// apiVersion/kind at definitionVersion (route 19, GET
// {api}/support/forms/{formGroup}/{formVersion}/{kind}/{definitionVersion};
// spec/host-api-v1alpha3.md §8.1). The profile's formRef must name exactly that line and
// version. An unknown one is form_unknown.
func (c *Client) SupportForm(ctx context.Context, apiVersion, kind, definitionVersion string) (*wire.SupportProfile, error) {
	if err := form.ValidateKind(kind); err != nil {
		return nil, fmt.Errorf("takoform: support-form: %w", err)
	}
	g, err := groupPath(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("takoform: support-form: %w", err)
	}
	rest, err := joinSegments([2]string{"kind", kind}, [2]string{"definition version", definitionVersion})
	if err != nil {
		return nil, err
	}
	r := &request{op: "support-form", method: http.MethodGet, path: c.lane.APIBase + "/support/forms/" + g + rest}
	p, err := c.profile(ctx, r, FormSupport)
	if err != nil {
		return nil, err
	}
	if f := p.FormRef; f.APIVersion != apiVersion || f.Kind != kind || f.DefinitionVersion != definitionVersion {
		return nil, c.protocolError(r, http.StatusOK, fmt.Sprintf("the profile is about {%s}, not %s %s %s", *f, apiVersion, kind, definitionVersion), nil)
	}
	return p, nil
}

// SupportInterface reads an Interface profile (route 20, GET
// {api}/support/interfaces/{name}/{version}; spec/host-api-v1alpha3.md §8.1). Its interfaceRef
// must name exactly name and version. An unknown one is a refusal
// (resource_not_found at the reference host).
func (c *Client) SupportInterface(ctx context.Context, name, version string) (*wire.SupportProfile, error) {
	return c.contractProfile(ctx, "support-interface", "/support/interfaces", InterfaceSupport, name, version)
}

// SupportBinding reads a Binding profile (route 21, GET
// {api}/support/bindings/{name}/{version}; spec/host-api-v1alpha3.md §8.1). Its bindingRef
// must name exactly name and version.
func (c *Client) SupportBinding(ctx context.Context, name, version string) (*wire.SupportProfile, error) {
	return c.contractProfile(ctx, "support-binding", "/support/bindings", BindingSupport, name, version)
}

func (c *Client) contractProfile(ctx context.Context, op, prefix, kind, name, version string) (*wire.SupportProfile, error) {
	path, err := c.apiPath(prefix, [2]string{"name", name}, [2]string{"version", version})
	if err != nil {
		return nil, err
	}
	r := &request{op: op, method: http.MethodGet, path: path}
	p, err := c.profile(ctx, r, kind)
	if err != nil {
		return nil, err
	}
	gotName, gotVersion := "", ""
	if p.InterfaceRef != nil {
		gotName, gotVersion = p.InterfaceRef.Name, p.InterfaceRef.Version
	} else {
		gotName, gotVersion = p.BindingRef.Name, p.BindingRef.Version
	}
	if gotName != name || gotVersion != version {
		return nil, c.protocolError(r, http.StatusOK, fmt.Sprintf("the profile is about %s@%s, not %s@%s", gotName, gotVersion, name, version), nil)
	}
	return p, nil
}

func (c *Client) profile(ctx context.Context, r *request, kind string) (*wire.SupportProfile, error) {
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var p wire.SupportProfile
	if err := c.decodeAnswer(r, resp, &p, "support profile"); err != nil {
		return nil, err
	}
	if err := checkProfile(&p, kind); err != nil {
		return nil, c.protocolError(r, resp.status, "the support profile is invalid", err)
	}
	return &p, nil
}

// checkProfile checks a Host Support Profile (spec/host-api-v1alpha3.md §8.1): apiVersion,
// kind, exactly the one reference its kind names (valid), operations for
// FormSupport, and lowerCamel keys.
func checkProfile(p *wire.SupportProfile, kind string) error {
	if p.APIVersion != wire.SupportAPI || p.Kind != kind {
		return fmt.Errorf("apiVersion %q kind %q; want %q %q", p.APIVersion, p.Kind, wire.SupportAPI, kind)
	}
	n := 0
	for _, set := range []bool{p.FormRef != nil, p.InterfaceRef != nil, p.BindingRef != nil} {
		if set {
			n++
		}
	}
	var err error
	switch {
	case n != 1:
		return errors.New("a profile carries exactly one of formRef, interfaceRef and bindingRef")
	case kind == FormSupport && p.FormRef == nil, kind == InterfaceSupport && p.InterfaceRef == nil, kind == BindingSupport && p.BindingRef == nil:
		return fmt.Errorf("a %s profile carries the wrong reference", kind)
	case kind == FormSupport && p.Operations == nil:
		return errors.New("a FormSupport profile lists its operations")
	case p.FormRef != nil:
		err = p.FormRef.Validate()
	case p.InterfaceRef != nil:
		err = p.InterfaceRef.Validate()
	default:
		err = p.BindingRef.Validate()
	}
	if err != nil {
		return err
	}
	var keys []string
	for k := range p.SupportedEnums {
		keys = append(keys, k)
	}
	for k := range p.SupportedRanges {
		keys = append(keys, k)
	}
	for k := range p.Limits {
		keys = append(keys, k)
	}
	for _, k := range keys {
		if !profileKeyPattern.MatchString(k) {
			return fmt.Errorf("key %q is not lowerCamel ^[a-z][a-zA-Z0-9]{0,63}$", k)
		}
	}
	return nil
}
