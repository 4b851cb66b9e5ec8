package host

import (
	"net/http"
	"strings"

	"github.com/takoform/takoform/wire"
)

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	for _, ln := range s.lanes {
		s.laneRoutes(ln)
	}
	s.mux.HandleFunc(PathTail, s.tail)
	s.handle("/", false, nil)
}

// laneRoutes registers one lane's discovery document and the 21 routes of
// its endpoint table under its API base (spec/host-api-v1alpha3.md §3.3,
// spec/lane-v1beta1.md §3.3); every lane runs the same handlers, which
// read the lane from the request.
func (s *Server) laneRoutes(ln *laneView) {
	api := ln.APIBase
	handle := func(pattern string, methods map[string]route) { s.handleLane(ln, pattern, true, methods) }
	res := api + "/resources/{group}/{version}/{kind}/{name}"
	handle(ln.DiscoveryPath, map[string]route{http.MethodGet: s.discovery})
	handle(api+"/forms", map[string]route{http.MethodGet: s.probeError(s.forms)})
	handle(api+"/form-definitions/{group}/{version}/{kind}", map[string]route{http.MethodGet: s.formDefinition})
	handle(api+"/resources/validate", map[string]route{http.MethodPost: s.validate})
	handle(api+"/resources/prepare", map[string]route{http.MethodPost: s.prepare})
	handle(res, map[string]route{
		http.MethodGet:    s.read,
		http.MethodPut:    s.idempotent(bodySpace, s.apply),
		http.MethodDelete: s.idempotent(querySpace, s.delete),
	})
	handle(res+"/import", map[string]route{http.MethodPost: s.idempotent(bodySpace, s.importResource)})
	handle(res+"/observe", map[string]route{http.MethodPost: s.idempotent(querySpace, s.observe)})
	handle(api+"/operations/{id}", map[string]route{http.MethodGet: s.operation})
	handle(api+"/operations/{id}/cancel", map[string]route{http.MethodPost: s.idempotent(noSpace, s.cancelOperation)})
	handle(api+"/artifacts/uploads", map[string]route{http.MethodPost: s.idempotent(noSpace, s.startUpload)})
	handle(api+"/artifacts/uploads/{upload}", map[string]route{http.MethodDelete: s.idempotent(noSpace, s.abandonUpload)})
	handle(api+"/artifacts/uploads/{upload}/blobs/{digest}", map[string]route{http.MethodPut: s.putBlob})
	handle(api+"/artifacts/uploads/{upload}/commit", map[string]route{http.MethodPost: s.idempotent(noSpace, s.commitUpload)})
	handle(api+"/artifacts/{digest}", map[string]route{http.MethodGet: s.manifest})
	handle(api+"/artifacts/blobs/{digest}", map[string]route{http.MethodHead: s.headBlob})
	handle(api+"/support/forms", map[string]route{http.MethodGet: s.supportForms})
	handle(api+"/support/forms/{group}/{version}/{kind}/{definitionVersion}", map[string]route{http.MethodGet: s.supportForm})
	handle(api+"/support/interfaces/{name}/{version}", map[string]route{http.MethodGet: s.supportInterface})
	handle(api+"/support/bindings/{name}/{version}", map[string]route{http.MethodGet: s.supportBinding})
}

// unknownRoute is the answer for a path or method the lane does not define
// (the reference host's resource_not_found).
func unknownRoute(r *http.Request) error {
	return wire.Errorf(wire.ResourceNotFound, "no Host API route %s %s; see the lane's endpoint table", r.Method, r.URL.EscapedPath()).WithHostCode("unknown_route")
}

// segment returns a path value, refusing one that decodes to contain "/"
// (a percent-encoded slash never travels in a segment, spec/host-api-v1alpha3.md §2.2).
func segment(r *request, name string) (string, error) {
	v := r.PathValue(name)
	if v == "" || strings.Contains(v, "/") {
		return "", wire.Errorf(wire.ResourceNotFound, "path segment %s %q is empty or holds a '/' (a percent-encoded slash never travels in a segment; a namespaced group is two ordinary segments)", name, v).WithHostCode("unknown_route")
	}
	return v, nil
}
