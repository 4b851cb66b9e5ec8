package host

import (
	"net/http"
	"strings"

	"github.com/takoform/takoform/wire"
)

const api = wire.APIBase

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	res := api + "/resources/{group}/{version}/{kind}/{name}"
	s.handle(wire.DiscoveryPath, true, map[string]route{http.MethodGet: s.discovery})
	s.handle(api+"/forms", true, map[string]route{http.MethodGet: s.probeError(s.forms)})
	s.handle(api+"/form-definitions/{group}/{version}/{kind}", true, map[string]route{http.MethodGet: s.formDefinition})
	s.handle(api+"/resources/validate", true, map[string]route{http.MethodPost: s.validate})
	s.handle(api+"/resources/prepare", true, map[string]route{http.MethodPost: s.prepare})
	s.handle(res, true, map[string]route{
		http.MethodGet:    s.read,
		http.MethodPut:    s.idempotent(bodySpace, s.apply),
		http.MethodDelete: s.idempotent(querySpace, s.delete),
	})
	s.handle(res+"/import", true, map[string]route{http.MethodPost: s.idempotent(bodySpace, s.importResource)})
	s.handle(res+"/observe", true, map[string]route{http.MethodPost: s.idempotent(querySpace, s.observe)})
	s.handle(api+"/operations/{id}", true, map[string]route{http.MethodGet: s.operation})
	s.handle(api+"/operations/{id}/cancel", true, map[string]route{http.MethodPost: s.idempotent(noSpace, s.cancelOperation)})
	s.handle(api+"/artifacts/uploads", true, map[string]route{http.MethodPost: s.idempotent(noSpace, s.startUpload)})
	s.handle(api+"/artifacts/uploads/{upload}", true, map[string]route{http.MethodDelete: s.idempotent(noSpace, s.abandonUpload)})
	s.handle(api+"/artifacts/uploads/{upload}/blobs/{digest}", true, map[string]route{http.MethodPut: s.putBlob})
	s.handle(api+"/artifacts/uploads/{upload}/commit", true, map[string]route{http.MethodPost: s.idempotent(noSpace, s.commitUpload)})
	s.handle(api+"/artifacts/{digest}", true, map[string]route{http.MethodGet: s.manifest})
	s.handle(api+"/artifacts/blobs/{digest}", true, map[string]route{http.MethodHead: s.headBlob})
	s.handle(api+"/support/forms", true, map[string]route{http.MethodGet: s.supportForms})
	s.handle(api+"/support/forms/{group}/{version}/{kind}/{definitionVersion}", true, map[string]route{http.MethodGet: s.supportForm})
	s.handle(api+"/support/interfaces/{name}/{version}", true, map[string]route{http.MethodGet: s.supportInterface})
	s.handle(api+"/support/bindings/{name}/{version}", true, map[string]route{http.MethodGet: s.supportBinding})
	s.mux.HandleFunc(PathTail, s.tail)
	s.handle("/", false, nil)
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
