package host

import (
	"github.com/takoform/takoform/host/lifecycle"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// apply answers PUT /resources/…/{name}: create under If-None-Match: *,
// else a generation-fenced update (spec/host-api-v1alpha3.md §3.4 (5)).
func (s *Server) apply(r *request) (answer, error) {
	var req wire.ApplyRequest
	it, err := s.pathIntake(r, &req, func() core {
		return core{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, Spec: req.Spec}
	})
	if err != nil {
		return answer{}, err
	}
	create, err := ifNoneMatch(r)
	if err != nil {
		return answer{}, err
	}
	gen, hasGen, err := generationFence(r, req.ExpectedGeneration)
	if err != nil {
		return answer{}, err
	}
	if req.ExpectedUID != "" && !wire.ValidUID(req.ExpectedUID) {
		return answer{}, wire.Errorf(wire.InvalidArgument, "/expectedUid %q is not a UID", req.ExpectedUID)
	}
	switch {
	case create && hasGen:
		return answer{}, wire.Errorf(wire.InvalidArgument, "a create (If-None-Match: *) carries no generation fence").WithHostCode("create_with_fence")
	case create && req.ExpectedUID != "":
		return answer{}, wire.Errorf(wire.UIDMismatch, "a create (If-None-Match: *) cannot expect an existing uid %s", req.ExpectedUID)
	case !create && !hasGen:
		return answer{}, wire.Errorf(wire.InvalidArgument, "an update needs the %s header (or expectedGeneration); a create needs If-None-Match: *", wire.HeaderGeneration).WithHostCode("fence_required")
	}
	if req.Review.PrepareDigest == "" {
		return answer{}, wire.Errorf(wire.InvalidArgument, "/review/prepareDigest is required: prepare the request first")
	}
	return s.run(r, &lifecycle.Mutation{
		Action: store.ActionApply, Key: it.key, Ref: it.ref, Package: it.pkg, Spec: it.canonical, SpecDigest: it.specDigest,
		Create: create, Generation: gen, ExpectedUID: req.ExpectedUID, PrepareDigest: req.Review.PrepareDigest,
	})
}

// importResource answers POST /resources/…/{name}/import: adoption with a
// native identity claim; the same gauntlet as apply without a prepare
// (spec/host-api-v1alpha3.md §3.4 (7)).
func (s *Server) importResource(r *request) (answer, error) {
	var req wire.ImportRequest
	it, err := s.pathIntake(r, &req, func() core {
		return core{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, Spec: req.Spec}
	})
	if err != nil {
		return answer{}, err
	}
	if n := len([]rune(req.NativeID)); n < 1 || n > 4096 || isBlank(req.NativeID) || textFault(req.NativeID) != "" {
		return answer{}, wire.Errorf(wire.InvalidArgument, "/nativeId is required: 1..4096 characters, not only whitespace, without NUL (U+0000)").WithDetail("pointer", "/nativeId")
	}
	create, err := ifNoneMatch(r)
	if err != nil {
		return answer{}, err
	}
	gen, hasGen, err := generationFence(r, req.Metadata.Generation)
	if err != nil {
		return answer{}, err
	}
	if create == hasGen {
		return answer{}, wire.Errorf(wire.InvalidArgument, "an import is either a new adoption (If-None-Match: *) or fenced by %s, exactly one", wire.HeaderGeneration).WithHostCode("fence_required")
	}
	return s.run(r, &lifecycle.Mutation{
		Action: store.ActionImport, Key: it.key, Ref: it.ref, Package: it.pkg, Spec: it.canonical, SpecDigest: it.specDigest,
		Create: create, Generation: gen, NativeID: req.NativeID,
	})
}

// observe answers POST /resources/…/{name}/observe (spec/host-api-v1alpha3.md §3.4 (8)).
func (s *Server) observe(r *request) (answer, error) {
	m, err := s.fencedByName(r, store.ActionObserve)
	if err != nil {
		return answer{}, err
	}
	m.TouchStatus = s.probe(r) == probeTouchStatus
	return s.run(r, m)
}

// delete answers DELETE /resources/…/{name} (spec/host-api-v1alpha3.md §3.4 (9)).
func (s *Server) delete(r *request) (answer, error) {
	m, err := s.fencedByName(r, store.ActionDelete)
	if err != nil {
		return answer{}, err
	}
	if v := r.Header.Get("If-Match"); v != "" {
		if len(v) < 3 || v[0] != '"' || v[len(v)-1] != '"' {
			return answer{}, wire.Errorf(wire.InvalidArgument, "If-Match must be one quoted revision such as \"3\"")
		}
		if m.IfMatch, err = parseCounter(v[1 : len(v)-1]); err != nil {
			return answer{}, wire.Errorf(wire.InvalidArgument, "If-Match: %v", err)
		}
	}
	// The test-only probe external-change simulates the backend losing the
	// resource: no dependency protection applies (spec/host-api-v1alpha3.md §3.2, §5.5).
	m.OutOfBand = s.probe(r) == probeExternalChange
	return s.run(r, m)
}

// fencedByName takes in what observe and delete share: an empty body, the
// resource the path names and the required generation fence
// (spec/host-api-v1alpha3.md §3.4 (8), (9)).
func (s *Server) fencedByName(r *request, action store.Action) (*lifecycle.Mutation, error) {
	if len(r.body) > 0 {
		return nil, wire.Errorf(wire.InvalidArgument, "%s takes an empty body", action)
	}
	k, ref, err := s.addressed(r)
	if err != nil {
		return nil, err
	}
	gen, ok, err := generationFence(r, "")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, wire.Errorf(wire.InvalidArgument, "%s needs the %s header", action, wire.HeaderGeneration).WithHostCode("fence_required")
	}
	return &lifecycle.Mutation{Action: action, Key: k, Ref: ref, Generation: gen}, nil
}

// pathIntake decodes a name-addressed body into req, checks it against the
// path and takes it in; spec findings are an invalid_argument here.
func (s *Server) pathIntake(r *request, req any, coreOf func() core) (*intake, error) {
	apiVersion, kind, name, err := pathIdentity(r, true)
	if err != nil {
		return nil, err
	}
	if err := decodeRequest(r, req); err != nil {
		return nil, err
	}
	it, err := s.intake(r, coreOf(), apiVersion, kind, name)
	if err != nil {
		return nil, err
	}
	if len(it.diags) > 0 {
		return nil, specError(it.diags)
	}
	return it, nil
}

func isBlank(s string) bool {
	for _, c := range s {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
