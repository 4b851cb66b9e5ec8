package host

import (
	"encoding/json"
	"strings"
	"time"

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

// pollDrivenNever is the NotBefore of a probe-forced operation: the
// worker never commits it; the caller's polls do (spec/conformance-probe.md §2).
var pollDrivenNever = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC) // within every store's time range (int64 nanoseconds end in 2262)

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

// pollOperation advances a probe-forced operation by one poll inside tx:
// the first poll records itself and answers pending with Retry-After;
// the next one commits it (re-validating everything against the store as
// it is then) and answers the terminal document (spec/conformance-probe.md §2).
// ok is false when op is not poll-driven.
func (s *Server) pollOperation(tx store.Tx, op *store.Operation) (a answer, ok bool, err error) {
	var m mutation
	if err := json.Unmarshal(op.Request, &m); err != nil {
		return answer{}, false, err
	}
	if op.Done || !m.PollDriven {
		return answer{}, false, nil
	}
	if m.Polls == 0 {
		m.Polls++
		op.Request, op.UpdatedAt = mustJSON(m), s.cfg.Now()
		if err := tx.PutOperation(op); err != nil {
			return answer{}, true, err
		}
		return answer{status: 200, body: op.Document, retryAfter: 1}, true, nil
	}
	if err := s.settleIn(tx, op); err != nil {
		return answer{}, true, err
	}
	return answer{status: 200, body: op.Document}, true, nil
}
