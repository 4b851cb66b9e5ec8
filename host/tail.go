package host

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/wire"
)

// PathTail streams one worker's console output and uncaught exceptions
// (`takoform tail`, handbook/workers-observability.md): GET with the
// Host API's bearer token and the query space, worker and optionally
// group (the Form group, default the Edge family's). It is outside the
// lane: the answer is application/x-ndjson, one record a line, flushed as
// each comes, until the client goes away. A tenant reaches only its own
// workers; another tenant's worker answers as none does (404).
const PathTail = wire.TailPath

// ErrNoWorker is what Config.Tail returns for a worker the tenant does
// not hold.
var ErrNoWorker = runtime.ErrNoWorker

// TailOf is Config.Tail served by the data plane rt.
func TailOf(rt *runtime.Runtime) func(ctx context.Context, tenant, space, name, group string) (func(emit func(any) error) error, error) {
	return func(ctx context.Context, tenant, space, name, group string) (func(emit func(any) error) error, error) {
		stream, err := rt.Tail(ctx, tenant, space, name, group)
		if err != nil {
			return nil, err
		}
		return func(emit func(any) error) error {
			return stream(func(r runtime.TailRecord) error { return emit(r) })
		}, nil
	}
}

func (s *Server) tail(w http.ResponseWriter, hr *http.Request) {
	req := requestOf(w, hr)
	req.x.route = PathTail
	if hr.Method != http.MethodGet {
		s.writeError(w, req, unknownRoute(hr))
		return
	}
	c, err := s.auth.authenticateRequest(hr.Header)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	req.caller, req.x.caller = c, c
	if err := s.admitTenant(c); err != nil {
		s.writeError(w, req, err)
		return
	}
	if err := checkText(hr, PathTail, nil); err != nil {
		s.writeError(w, req, err)
		return
	}
	if s.cfg.Tail == nil {
		s.writeError(w, req, wire.Errorf(wire.BackendUnavailable, "this host runs no data plane, so no worker has output to tail"))
		return
	}
	q := hr.URL.Query()
	space, name, group := q.Get("space"), q.Get("worker"), q.Get("group")
	if space == "" || name == "" {
		s.writeError(w, req, wire.Errorf(wire.InvalidArgument, "tail needs the query parameters space and worker (and group for a worker outside the default Form group)"))
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.log.Debug("tail: write deadline not cleared", "err", err)
	}
	stream, err := s.cfg.Tail(hr.Context(), c.Tenant, space, name, group)
	switch {
	case errors.Is(err, ErrNoWorker):
		s.writeError(w, req, wire.Errorf(wire.ResourceNotFound, "no ModuleWorker %q in space %q of this tenant (group %q); check the worker's name, space and group", name, space, group))
		return
	case err != nil:
		s.log.Error("tail", "request", req.id, "err", err)
		s.writeError(w, req, wire.Errorf(wire.InternalError, "the tail could not start; request %s", req.id))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	enc := json.NewEncoder(w)
	err = stream(func(r any) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return rc.Flush()
	})
	if err != nil {
		s.log.Debug("tail ended", "request", req.id, "err", err)
	}
}
