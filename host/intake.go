package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/spaceid"
	"github.com/takoform/takoform/wire"
)

var (
	counterPattern = regexp.MustCompile(`^[1-9][0-9]{0,18}$`)
)

// core is the resourceCore every resource request carries.
type core struct {
	APIVersion string
	Kind       string
	Form       wire.FormReference
	Metadata   wire.Metadata
	Spec       json.RawMessage
}

// intake is a request's resolved identity and materialised spec.
type intake struct {
	key        store.Key
	ref        form.FormRef
	pkg        string
	def        *form.Definition
	spec       map[string]any
	canonical  []byte
	specDigest string
	diags      []form.Diagnostic
}

// decodeBody strictly decodes a closed request body into v; a failure is
// invalid_argument naming the JSON pointer.
func decodeBody(body []byte, v any) error { return bodyError(ijson.Unmarshal(body, v)) }

// decodeRequest is decodeBody for a request whose body bodySpace already
// checked (repo decision 0019: the body is parsed for the replay namespace
// and then strictly, not checked twice).
func decodeRequest(r *request, v any) error {
	if !r.bodyChecked {
		return decodeBody(r.body, v)
	}
	return bodyError(ijson.UnmarshalChecked(r.body, v))
}

func bodyError(err error) error {
	if err != nil {
		var je *ijson.Error
		if errors.As(err, &je) {
			return wire.Errorf(wire.InvalidArgument, "request body %s: %s", pointerOrRoot(je.Pointer), je.Detail).
				WithHostCode("json_"+strings.ReplaceAll(string(je.Rule), "-", "_")).WithDetail("pointer", je.Pointer)
		}
		return wire.Errorf(wire.InvalidArgument, "request body: %v", err)
	}
	return nil
}

func pointerOrRoot(p string) string {
	if p == "" {
		return "at the root"
	}
	return "at " + p
}

// pathIdentity reads {group}/{version}/{kind}/{name} from the path.
func pathIdentity(r *request, withName bool) (apiVersion, kind, name string, err error) {
	g, err := segment(r, "group")
	if err != nil {
		return
	}
	v, err := segment(r, "version")
	if err != nil {
		return
	}
	if kind, err = segment(r, "kind"); err != nil {
		return
	}
	if withName {
		if name, err = segment(r, "name"); err != nil {
			return
		}
	}
	return g + "/" + v, kind, name, nil
}

// checkRef validates a FormRef from a request and finds its definition in
// the installed set of the request's lane: a grammar fault is
// invalid_argument, an exact ref not installed on the lane — even one the
// other lane installs — is form_unknown (never a fallback to group and
// kind; spec/lane-v1beta1.md §2.5 rule 3).
func (s *Server) checkRef(r *request, ref form.FormRef, at string) (form.Installed, error) {
	// An installed ref passed the same grammar when its definition was
	// parsed (form.Parse), so only a ref the catalog lacks is checked
	// again, to tell a grammar fault from an unknown form.
	if in, ok := r.lane.catalog.Form(ref); ok {
		return in, nil
	}
	if err := ref.Validate(); err != nil {
		var re *form.RefError
		ptr := at
		if errors.As(err, &re) {
			ptr = at + "/" + re.Member
		}
		return form.Installed{}, wire.Errorf(wire.InvalidArgument, "%s: %v", ptr, err).WithDetail("pointer", ptr)
	}
	return form.Installed{}, wire.Errorf(wire.FormUnknown, "form %s is not installed on lane %s of this host (all four FormRef members must match a definition installed on the lane)%s", ref, r.lane.Name, s.otherLanes(r, ref))
}

// checkSpace applies the one SpaceID rule (decision 0003).
func checkSpace(space, at string) error {
	if err := spaceid.Validate(space); err != nil {
		we := wire.Errorf(wire.InvalidArgument, "%s: %v", at, err).WithDetail("pointer", at)
		if e, ok := errors.AsType[*spaceid.Error](err); ok {
			we = we.WithHostCode("space_id_" + strings.ReplaceAll(string(e.Rule), "-", "_"))
		}
		return we
	}
	return nil
}

// intake checks a resource request's identity against the path (when
// pathName is set), resolves its exact Form, and materialises and
// validates its spec. Spec findings are returned in in.diags, not as an
// error, so validate can answer them in a 200.
func (s *Server) intake(r *request, c core, pathAPIVersion, pathKind, pathName string) (*intake, error) {
	if pathAPIVersion != "" && (c.APIVersion != pathAPIVersion || c.Kind != pathKind || c.Metadata.Name != pathName) {
		return nil, wire.Errorf(wire.InvalidArgument, "the body names %s %s %q but the path names %s %s %q; they must be equal",
			c.APIVersion, c.Kind, c.Metadata.Name, pathAPIVersion, pathKind, pathName)
	}
	if c.APIVersion != c.Form.FormRef.APIVersion || c.Kind != c.Form.FormRef.Kind {
		return nil, wire.Errorf(wire.InvalidArgument, "apiVersion %q and kind %q must equal form.formRef.apiVersion %q and kind %q",
			c.APIVersion, c.Kind, c.Form.FormRef.APIVersion, c.Form.FormRef.Kind)
	}
	if c.Form.PackageDigest != "" && !ijson.ValidDigest(c.Form.PackageDigest) {
		return nil, wire.Errorf(wire.InvalidArgument, "/form/packageDigest %q is not sha256:<64 hex>", c.Form.PackageDigest)
	}
	if err := form.ValidateName(c.Metadata.Name); err != nil {
		return nil, wire.Errorf(wire.InvalidArgument, "/metadata/name: %v", err).WithDetail("pointer", "/metadata/name")
	}
	if err := checkSpace(c.Metadata.Space, "/metadata/space"); err != nil {
		return nil, err
	}
	if err := checkMetadataCounters(c.Metadata); err != nil {
		return nil, err
	}
	in, err := s.checkRef(r, c.Form.FormRef, "/form/formRef")
	if err != nil {
		return nil, err
	}
	it := &intake{
		key: store.Key{Tenant: r.caller.Tenant, Space: c.Metadata.Space, APIVersion: c.APIVersion, Kind: c.Kind, Name: c.Metadata.Name},
		ref: c.Form.FormRef, pkg: c.Form.PackageDigest, def: in.Definition,
	}
	if len(c.Spec) == 0 {
		return nil, wire.Errorf(wire.InvalidArgument, "/spec is required")
	}
	raw, err := ijson.Decode(c.Spec)
	if err != nil {
		return nil, wire.Errorf(wire.InvalidArgument, "/spec: %v", err)
	}
	spec, ok := raw.(map[string]any)
	if !ok {
		return nil, wire.Errorf(wire.InvalidArgument, "/spec must be a JSON object")
	}
	spec, ok = it.def.Materialize(spec).(map[string]any)
	if !ok {
		return nil, errors.New("materializing defaults changed /spec from an object")
	}
	spec = s.cfg.Family.Canonicalize(it.def, spec)
	it.spec = spec
	it.diags = form.MergeDiagnostics(s.cfg.Family.CheckSpec(it.def, spec), it.def.ValidateSpec(spec))
	if it.canonical, err = ijson.CanonicalValue(spec); err != nil {
		return nil, fmt.Errorf("canonicalise spec: %w", err)
	}
	it.specDigest = ijson.SumDigest(it.canonical)
	return it, nil
}

// specError turns spec findings into the invalid_argument of prepare,
// apply and import, listing the first wire.MaxDiagnostics findings in
// details.diagnostics and counting any others in
// details.diagnosticsOmitted (each message is bounded by form).
func specError(diags []form.Diagnostic) error {
	first := diags[0]
	e := wire.Errorf(wire.InvalidArgument, "spec%s: %s", first.Pointer, first.Message).WithHostCode("spec_invalid")
	list := make([]map[string]string, 0, min(len(diags), wire.MaxDiagnostics))
	for _, d := range diags[:min(len(diags), wire.MaxDiagnostics)] {
		list = append(list, map[string]string{"field": form.Truncate(d.Pointer, maxPointerBytes), "message": d.Message})
	}
	if omitted := len(diags) - len(list); omitted > 0 {
		e = e.WithDetail("diagnosticsOmitted", omitted)
	}
	return e.WithDetail("pointer", "/spec"+first.Pointer).WithDetail("diagnostics", list)
}

func checkMetadataCounters(m wire.Metadata) error {
	if m.UID != "" && !wire.ValidUID(m.UID) {
		return wire.Errorf(wire.InvalidArgument, "/metadata/uid %q is not a UID", m.UID)
	}
	for _, c := range []struct{ at, v string }{{"/metadata/generation", m.Generation}, {"/metadata/revision", m.Revision}} {
		if c.v != "" {
			if _, err := parseCounter(c.v); err != nil {
				return wire.Errorf(wire.InvalidArgument, "%s: %v", c.at, err)
			}
		}
	}
	return nil
}

// parseCounter reads a canonical positive decimal generation or revision
// (1..9223372036854775807, no sign, no leading zero).
func parseCounter(s string) (int64, error) {
	if !counterPattern.MatchString(s) {
		return 0, fmt.Errorf("%q is not a canonical positive decimal", s)
	}
	var n int64
	for _, c := range s {
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, fmt.Errorf("%q exceeds 9223372036854775807", s)
		}
		n = n*10 + d
	}
	return n, nil
}

func formatCounter(n int64) string { return strconv.FormatInt(n, 10) }
