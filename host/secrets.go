package host

import (
	"context"
	"net/http"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// Secrets keeps the sensitive values of workers (spec/runtime-v1.md
// §3.2), behind the host's secret route (wire.SecretsBase): worker is the
// addressed ModuleWorker's key in the caller's tenant. Refusals are
// *wire.Error values; no answer or error carries a value.
// host/runtime/secrets' Service implements it.
type Secrets interface {
	List(ctx context.Context, worker store.Key) (*wire.SecretList, error)
	Set(ctx context.Context, worker store.Key, name string, value []byte) (*wire.SecretInfo, error)
	Unset(ctx context.Context, worker store.Key, name string) (*wire.SecretInfo, error)
}

// secretRoutes registers the secret route: outside the lane's API base,
// absent from discovery, authenticated as every Host API route.
func (s *Server) secretRoutes() {
	w := wire.SecretsBase + "/workers/{group}/{version}/{worker}"
	s.handle(w, true, map[string]route{http.MethodGet: s.listSecrets})
	s.handle(w+"/secrets/{secret}", true, map[string]route{http.MethodPut: s.setSecret, http.MethodDelete: s.unsetSecret})
}

// secretWorker is the addressed worker's key and the secret's name ("" on
// the list route).
func (s *Server) secretWorker(r *request) (store.Key, error) {
	if s.cfg.Secrets == nil {
		return store.Key{}, wire.Errorf(wire.UnsupportedCapability, "this host keeps no sensitive values: it runs no data plane").WithHostCode("no_secrets")
	}
	group, err := segment(r, "group")
	if err != nil {
		return store.Key{}, err
	}
	version, err := segment(r, "version")
	if err != nil {
		return store.Key{}, err
	}
	name, err := segment(r, "worker")
	if err != nil {
		return store.Key{}, err
	}
	space := querySpace(r)
	if err := checkSpace(space, "space"); err != nil {
		return store.Key{}, err
	}
	return store.Key{Tenant: r.caller.Tenant, Space: space, APIVersion: group + "/" + version, Kind: "ModuleWorker", Name: name}, nil
}

func (s *Server) listSecrets(r *request) (answer, error) {
	k, err := s.secretWorker(r)
	if err != nil {
		return answer{}, err
	}
	l, err := s.cfg.Secrets.List(r.Context(), k)
	if err != nil {
		return answer{}, err
	}
	return jsonAnswer(http.StatusOK, l), nil
}

func (s *Server) setSecret(r *request) (answer, error) {
	k, err := s.secretWorker(r)
	if err != nil {
		return answer{}, err
	}
	name, err := segment(r, "secret")
	if err != nil {
		return answer{}, err
	}
	var body struct {
		Value *string `json:"value"`
	}
	// The decoder's error may quote the body: it is never passed on.
	if err := ijson.Unmarshal(r.body, &body); err != nil || body.Value == nil {
		return answer{}, wire.Errorf(wire.InvalidArgument, `the body must be the JSON object {"value": "<the value>"} (I-JSON, UTF-8)`).WithHostCode("secret_body")
	}
	info, err := s.cfg.Secrets.Set(r.Context(), k, name, []byte(*body.Value))
	if err != nil {
		return answer{}, err
	}
	return jsonAnswer(http.StatusOK, info), nil
}

func (s *Server) unsetSecret(r *request) (answer, error) {
	k, err := s.secretWorker(r)
	if err != nil {
		return answer{}, err
	}
	name, err := segment(r, "secret")
	if err != nil {
		return answer{}, err
	}
	info, err := s.cfg.Secrets.Unset(r.Context(), k, name)
	if err != nil {
		return answer{}, err
	}
	return jsonAnswer(http.StatusOK, info), nil
}
