package client

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/spaceid"
)

// Address names one resource: the space, the exact FormRef it is recorded
// under, and its metadata.name (spec/host-api-v1alpha3.md §1.6). Every resource route
// addresses exactly this triple; nothing is trimmed or normalised.
type Address struct {
	Space string
	Ref   form.FormRef
	Name  string
}

// Validate checks the address before any HTTP call: spaceid.Validate on
// Space, the FormRef grammar, and form.ValidateName on Name. Errors are
// *spaceid.Error or *form.RefError.
func (a Address) Validate() error {
	if err := spaceid.Validate(a.Space); err != nil {
		return err
	}
	if err := a.Ref.Validate(); err != nil {
		return err
	}
	return form.ValidateName(a.Name)
}

// segment escapes one path segment with url.PathEscape, refusing a value
// that is empty, "." or "..", or contains '/': no segment ever carries a
// percent-encoded slash (spec/host-api-v1alpha3.md §2.2).
func segment(what, s string) (string, error) {
	switch {
	case s == "" || s == "." || s == "..":
		return "", fmt.Errorf("takoform: %s %q cannot be a path segment", what, s)
	case strings.Contains(s, "/"):
		return "", fmt.Errorf("takoform: %s %q contains '/'; a path segment never carries a slash", what, s)
	}
	return url.PathEscape(s), nil
}

// groupPath renders a Form apiVersion "group/version" as the two escaped
// path segments "{formGroup}/{formVersion}" (spec/host-api-v1alpha3.md §2.2).
func groupPath(apiVersion string) (string, error) {
	if err := form.ValidateAPIVersion(apiVersion); err != nil {
		return "", err
	}
	group, version, _ := strings.Cut(apiVersion, "/")
	g, err := segment("form group", group)
	if err != nil {
		return "", err
	}
	v, err := segment("form version", version)
	if err != nil {
		return "", err
	}
	return g + "/" + v, nil
}

// apiPath is the API base, a fixed prefix such as "/resources", and the
// escaped segments (each checked by segment), each led by '/'.
func (c *Client) apiPath(prefix string, segs ...[2]string) (string, error) {
	rest, err := joinSegments(segs...)
	return c.lane.APIBase + prefix + rest, err
}

// joinSegments renders {what, value} pairs as "/seg1/seg2…".
func joinSegments(segs ...[2]string) (string, error) {
	var b strings.Builder
	for _, s := range segs {
		e, err := segment(s[0], s[1])
		if err != nil {
			return "", err
		}
		b.WriteString("/" + e)
	}
	return b.String(), nil
}

// resourcePath is {api}/resources/{formGroup}/{formVersion}/{kind}/{name}
// followed by suffix ("", "/import" or "/observe").
func (c *Client) resourcePath(ref form.FormRef, name, suffix string) (string, error) {
	g, err := groupPath(ref.APIVersion)
	if err != nil {
		return "", err
	}
	k, err := segment("kind", ref.Kind)
	if err != nil {
		return "", err
	}
	n, err := segment("name", name)
	if err != nil {
		return "", err
	}
	return c.lane.APIBase + "/resources/" + g + "/" + k + "/" + n + suffix, nil
}

// exactQuery is the exact query of spec/host-api-v1alpha3.md §3.3: space, group, kind,
// definitionVersion and schemaDigest, each exactly once, in that order;
// group is the FormRef's full apiVersion. Values are percent-encoded
// (a space as %20, never '+') and decode to the identical string.
func exactQuery(space string, ref form.FormRef) string {
	return "space=" + queryEscape(space) +
		"&group=" + queryEscape(ref.APIVersion) +
		"&kind=" + queryEscape(ref.Kind) +
		"&definitionVersion=" + queryEscape(ref.DefinitionVersion) +
		"&schemaDigest=" + queryEscape(ref.SchemaDigest)
}

func queryEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") // a literal '+' is already %2B
}
