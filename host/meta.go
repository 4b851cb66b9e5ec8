package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// loadSecret returns the host's prepare-digest key, creating it on first
// start; it lives in the store so every replica and every restart agrees.
func (s *Server) loadSecret(ctx context.Context) ([]byte, error) {
	var secret []byte
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		v, err := tx.Setting("prepare-digest-key")
		if err == nil {
			secret = v
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		fresh := make([]byte, 32)
		if _, err := rand.Read(fresh); err != nil {
			return err
		}
		secret, err = tx.PutSetting("prepare-digest-key", fresh)
		return err
	})
	return secret, err
}

// discovery answers the request's lane's discovery document, naming only
// that lane (spec/lane-v1beta1.md §2.1), with absolute URLs of
// Config.PublicURL, or else of the origin the request reached with the
// connection's scheme (spec/host-api-v1alpha3.md §2.1).
func (s *Server) discovery(r *request) (answer, error) {
	origin := s.cfg.PublicURL
	if origin == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		origin = scheme + "://" + r.Host
	}
	base := origin + r.lane.APIBase
	features := map[string]bool{}
	for _, f := range wire.RequiredFeatures {
		features[f] = true
	}
	return jsonAnswer(200, wire.Discovery{
		APIVersions: []string{r.lane.Name},
		Features:    features,
		Endpoints:   wire.Endpoints{API: base, Artifacts: base + "/artifacts", Operations: base + "/operations", Support: base + "/support"},
	}), nil
}

// forms answers GET /forms: exact availability of one FormRef (spec/host-api-v1alpha3.md §3.4 (1)).
func (s *Server) forms(r *request) (answer, error) {
	_, ref, err := exactQuery(r, "", "")
	if err != nil {
		return answer{}, err
	}
	in, err := s.checkRef(r, ref, "query")
	if err != nil {
		return answer{}, err
	}
	ops := []string{}
	for _, c := range in.Definition.Capabilities() {
		ops = append(ops, string(c))
	}
	return jsonAnswer(200, wire.FormsResponse{Forms: []wire.FormAvailability{{
		Identity:        wire.FormReference{FormRef: ref, PackageDigest: in.PackageDigest},
		DefinitionKnown: true, Installed: true, Executable: true, Activated: true, AvailableToPrincipal: true,
		Operations: ops,
	}}}), nil
}

// formDefinition answers the installed definition's own desiredSchema
// bytes (spec/host-api-v1alpha3.md §3.4 (2)).
func (s *Server) formDefinition(r *request) (answer, error) {
	apiVersion, kind, _, err := pathIdentity(r, false)
	if err != nil {
		return answer{}, err
	}
	_, ref, err := exactQuery(r, apiVersion, kind)
	if err != nil {
		return answer{}, err
	}
	in, err := s.checkRef(r, ref, "query")
	if err != nil {
		return answer{}, err
	}
	def := in.Definition
	// The desired schema travels as the installed definition's own bytes
	// (encoding/json would compact them), so the body is spliced.
	head := mustJSON(wire.FormDefinitionResponse{
		Identity: wire.FormReference{FormRef: ref, PackageDigest: in.PackageDigest}, DisplayName: def.Title(), Description: def.Description(),
		DesiredSchema: json.RawMessage("0"),
	})
	const tail = `"desiredSchema":0}`
	if !bytes.HasSuffix(head, []byte(tail)) {
		return answer{}, fmt.Errorf("form-definition answer: unexpected encoding")
	}
	body := append(head[:len(head)-len(tail)], `"desiredSchema":`...)
	body = append(append(body, def.DesiredSchemaJSON()...), '}')
	return answer{status: 200, body: body}, nil
}

// supportForms answers one FormSupport profile per FormRef installed on
// the request's lane (spec/lane-v1beta1.md §8.1).
func (s *Server) supportForms(r *request) (answer, error) {
	resp := wire.SupportProfilesResponse{Profiles: []wire.SupportProfile{}}
	for _, in := range r.lane.catalog.Forms() {
		resp.Profiles = append(resp.Profiles, s.formProfile(in.Definition))
	}
	return jsonAnswer(200, resp), nil
}

func (s *Server) supportForm(r *request) (answer, error) {
	apiVersion, kind, _, err := pathIdentity(r, false)
	if err != nil {
		return answer{}, err
	}
	dv, err := segment(r, "definitionVersion")
	if err != nil {
		return answer{}, err
	}
	in, ok := r.lane.catalog.FormByVersion(apiVersion, kind, dv)
	if !ok {
		return answer{}, wire.Errorf(wire.FormUnknown, "no %s %s %s is installed on lane %s of this host", apiVersion, kind, dv, r.lane.Name)
	}
	return jsonAnswer(200, s.formProfile(in.Definition)), nil
}

// formProfile states what the host supports of one Form: its operations,
// the closed enums of its top-level fields, and family limits.
func (s *Server) formProfile(def *form.Definition) wire.SupportProfile {
	ref := def.Ref()
	p := wire.SupportProfile{APIVersion: wire.SupportAPI, Kind: "FormSupport", FormRef: &ref}
	for _, c := range def.Capabilities() {
		p.Operations = append(p.Operations, string(c))
	}
	props := ijson.As[map[string]any](def.DesiredSchema()["properties"])
	for _, name := range slices.Sorted(maps.Keys(props)) {
		node := ijson.As[map[string]any](props[name])
		if items, ok := node["items"].(map[string]any); ok {
			node = items
		}
		if enum, ok := node["enum"].([]any); ok {
			vals := []string{}
			for _, v := range enum {
				if sv, ok := v.(string); ok {
					vals = append(vals, sv)
				}
			}
			if len(vals) > 0 {
				if p.SupportedEnums == nil {
					p.SupportedEnums = map[string][]string{}
				}
				p.SupportedEnums[name] = vals
			}
		}
	}
	if lp, ok := s.cfg.Family.(interface {
		Limits(def *form.Definition) map[string]int64
	}); ok {
		p.Limits = lp.Limits(def)
	}
	return p
}

func (s *Server) supportInterface(r *request) (answer, error) {
	name, version := r.PathValue("name"), r.PathValue("version")
	for _, d := range r.lane.catalog.Interfaces() {
		if ref := d.Ref(); ref.Name == name && ref.Version == version {
			return jsonAnswer(200, wire.SupportProfile{APIVersion: wire.SupportAPI, Kind: "InterfaceSupport", InterfaceRef: &ref, Operations: nil}), nil
		}
	}
	return answer{}, wire.Errorf(wire.ResourceNotFound, "lane %s of this host implements no interface %s@%s", r.lane.Name, name, version).WithHostCode("interface_unsupported")
}

func (s *Server) supportBinding(r *request) (answer, error) {
	name, version := r.PathValue("name"), r.PathValue("version")
	for _, d := range r.lane.catalog.Bindings() {
		if ref := d.Ref(); ref.Name == name && ref.Version == version {
			return jsonAnswer(200, wire.SupportProfile{APIVersion: wire.SupportAPI, Kind: "BindingSupport", BindingRef: &ref}), nil
		}
	}
	return answer{}, wire.Errorf(wire.ResourceNotFound, "lane %s of this host implements no binding %s@%s", r.lane.Name, name, version).WithHostCode("binding_unsupported")
}
