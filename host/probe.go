package host

import (
	"strings"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// The conformance probe's directives (spec/conformance-probe.md §1).
const (
	probeAsync          = "async"
	probeTouchStatus    = "touch-status"
	probeExternalChange = "external-change"
	probeErrorPrefix    = "error:"
)

// probeError wraps the forms route: `error:<code>` on GET {api}/forms with
// no query string answers that code's envelope instead of the route,
// after authentication and before any route validation
// (spec/conformance-probe.md §1). A code outside the taxonomy is
// invalid_argument naming it.
func (s *Server) probeError(next route) route {
	return func(r *request) (answer, error) {
		p := s.probe(r)
		if !strings.HasPrefix(p, probeErrorPrefix) || r.URL.RawQuery != "" {
			return next(r)
		}
		code := wire.Code(strings.TrimPrefix(p, probeErrorPrefix))
		if _, ok := wire.Taxonomy[code]; !ok {
			return answer{}, wire.Errorf(wire.InvalidArgument, "probe %s%s names no code of the closed taxonomy", probeErrorPrefix, code).WithHostCode("probe")
		}
		return answer{}, wire.Errorf(code, "answered %s because the conformance probe asked for it", code).WithHostCode("probe")
	}
}

// pollOperation advances a probe-forced operation by one poll inside tx
// (lifecycle.Engine.Poll): the first poll answers pending with
// Retry-After; the next one commits it (re-validating everything against
// the store as it is then) and answers the terminal document
// (spec/conformance-probe.md §2). ok is false when op is not poll-driven.
func (s *Server) pollOperation(tx store.Tx, op *store.Operation) (a answer, ok bool, err error) {
	ok, settled, err := s.engine.Poll(tx, op)
	if !ok || err != nil {
		return answer{}, ok, err
	}
	a = answer{status: 200, body: op.Document}
	if !settled {
		a.retryAfter = 1
	}
	return a, true, nil
}
