package conformance_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// The tests here show that each check changed to agree with
// spec/conformance-probe.md fails on a host that breaks the rule the check
// now holds: our host, deliberately broken by a handler or family wrapper
// in the test, and passes where the page relaxed a rule.

// runCheck runs one check of lane v1alpha3 by ID against h with the probe.
func runCheck(t *testing.T, h *hosttest.Host, id string) error {
	t.Helper()
	return runLaneCheck(t, h, wire.V1alpha3, id)
}

// runLaneCheck runs one check of lane by ID against h with the probe.
func runLaneCheck(t *testing.T, h *hosttest.Host, lane wire.Lane, id string) error {
	t.Helper()
	ctx := context.Background()
	env, err := conformance.NewEnvOptions(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, true, client.Options{Lane: lane})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conformance.ChecksFor(lane) {
		if c.ID == id {
			r := conformance.RunCheck(ctx, env, c)
			if r.Skipped {
				t.Fatalf("%s skipped: %v", id, r.Err)
			}
			return r.Err
		}
	}
	t.Fatalf("no check %s on lane %s", id, lane.Name)
	return nil
}

// headerDropper removes Retry-After from the answers when picks says so.
type headerDropper struct {
	http.ResponseWriter
	drop func(status int) bool
}

func (w headerDropper) WriteHeader(status int) {
	if w.drop(status) {
		w.Header().Del("Retry-After")
	}
	w.ResponseWriter.WriteHeader(status)
}

func dropRetryAfter(onPolls bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			poll := r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/operations/")
			next.ServeHTTP(headerDropper{w, func(status int) bool {
				if onPolls {
					return poll
				}
				return status == http.StatusAccepted
			}}, r)
		})
	}
}

var retryAfterChecks = []string{"async-operation-flow", "operation-replay-terminal", "operation-bound-to-its-creating-principal",
	"async-commit-revalidates", "async-commit-binds-the-accepted-identity"}

// TestRetryAfterIsRequiredOnPendingPollsOnly: a 202 without Retry-After
// passes; a pending poll without it fails every check that polls.
func TestRetryAfterIsRequiredOnPendingPollsOnly(t *testing.T) {
	lax := hosttest.Start(t, hosttest.Options{Probe: true, Wrap: dropRetryAfter(false)})
	broken := hosttest.Start(t, hosttest.Options{Probe: true, Wrap: dropRetryAfter(true)})
	for _, id := range retryAfterChecks {
		if err := runCheck(t, lax, id); err != nil {
			t.Errorf("%s fails on a host whose 202 carries no Retry-After (the lane does not require it): %v", id, err)
		}
		err := runCheck(t, broken, id)
		if err == nil || !strings.Contains(err.Error(), "Retry-After") {
			t.Errorf("%s passes on a host whose pending polls carry no Retry-After: %v", id, err)
		}
	}
}

// aggregateAtPrepare is the Edge family refusing the aggregate rules at
// validate and prepare too (our host before spec/conformance-probe.md §3).
type aggregateAtPrepare struct{ host.Family }

func (f aggregateAtPrepare) CheckSpec(def *form.Definition, spec map[string]any) []form.Diagnostic {
	out := f.Family.CheckSpec(def, spec)
	if def.Ref().APIVersion == edge.Group {
		for _, re := range edge.SpecRules(def.Ref().Kind, spec) {
			if edge.AggregateRule(re.Rule) {
				out = append(out, form.Diagnostic{Pointer: re.Pointer, Message: re.Message})
			}
		}
	}
	return out
}

// aggregateNowhere is the Edge family with no commit rules for
// deployments and versions: the aggregate rules are held nowhere.
type aggregateNowhere struct{ host.Family }

func (f aggregateNowhere) CheckCommit(tx store.Tx, def *form.Definition, res *store.Resource, creating bool) error {
	if k := def.Ref().Kind; k == "WorkerDeployment" || k == "WorkerVersion" {
		return nil
	}
	return f.Family.CheckCommit(tx, def, res, creating)
}

// TestAggregateRulesAreHeldByTheApply: the three aggregate checks fail on a
// host that refuses at prepare and on one that never refuses.
func TestAggregateRulesAreHeldByTheApply(t *testing.T) {
	cat, err := host.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	early := hosttest.Start(t, hosttest.Options{Probe: true, Family: aggregateAtPrepare{host.DefaultFamily(cat)}})
	never := hosttest.Start(t, hosttest.Options{Probe: true, Family: aggregateNowhere{host.DefaultFamily(cat)}})
	for _, id := range []string{"deployment-weight-sum-enforced", "deployment-version-duplicate-rejected", "binding-name-collision-rejected"} {
		if err := runCheck(t, early, id); err == nil || !strings.Contains(err.Error(), "is refused by the apply") {
			t.Errorf("%s passes on a host that refuses an aggregate rule at prepare: %v", id, err)
		}
		if err := runCheck(t, never, id); err == nil || !strings.Contains(err.Error(), string(wire.InvalidArgument)) {
			t.Errorf("%s passes on a host that never holds the aggregate rule: %v", id, err)
		}
	}
}

// TestResumableCheckNeedsReplay: a host that never replays an
// Idempotency-Key (each request gets a fresh key) fails the resumable check.
func TestResumableCheckNeedsReplay(t *testing.T) {
	var n atomic.Int64
	fresh := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && r.Header.Get(wire.HeaderIdempotency) != "" {
				r.Header.Set(wire.HeaderIdempotency, r.Header.Get(wire.HeaderIdempotency)+"-"+strconv.FormatInt(n.Add(1), 10))
			}
			next.ServeHTTP(w, r)
		})
	}
	broken := hosttest.Start(t, hosttest.Options{Probe: true, Wrap: fresh})
	if err := runCheck(t, broken, "operation-resumable-after-settlement"); err == nil || !strings.Contains(err.Error(), "replays its recorded answer") {
		t.Fatalf("operation-resumable-after-settlement passes on a host that never replays: %v", err)
	}
}

// bodyRewriter buffers an answer so a test can rewrite its body.
type bodyRewriter struct {
	http.ResponseWriter
	status int
	buf    []byte
}

func (w *bodyRewriter) WriteHeader(status int) { w.status = status }
func (w *bodyRewriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	return len(b), nil
}

// rewriteAnswers rewrites the bodies of the answers pick selects.
func rewriteAnswers(pick func(*http.Request) bool, rewrite func([]byte) []byte) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !pick(r) {
				next.ServeHTTP(w, r)
				return
			}
			rw := &bodyRewriter{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(rw, r)
			body := rewrite(rw.buf)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(rw.status)
			_, _ = w.Write(body)
		})
	}
}

// TestKeptChecksNameTheirRule: a host breaking a rule a kept check holds
// fails it with a message naming the rule (spec/decisions/0015-conformance-verdicts.md).
func TestKeptChecksNameTheirRule(t *testing.T) {
	// hostReason over 256 characters on every read of a drifted resource.
	long := hosttest.Start(t, hosttest.Options{Probe: true, Catalog: testCatalog(t), Wrap: rewriteAnswers(
		func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/resources/")
		},
		func(b []byte) []byte {
			return []byte(strings.ReplaceAll(string(b), `"hostReason":"`, `"hostReason":"`+strings.Repeat("x", 300)))
		})})
	for _, id := range []string{"relation-incarnation-change-detected", "relation-reapply-repins", "relation-pin-records-target-form-ref"} {
		if err := runCheck(t, long, id); err == nil || !strings.Contains(err.Error(), "256 characters") {
			t.Errorf("%s on a host rendering hostReason over 256 characters: %v", id, err)
		}
	}
	// A forms query missing schemaDigest answered as if it were exact.
	lax := hosttest.Start(t, hosttest.Options{Probe: true, Wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/forms") && r.URL.RawQuery != "" && !r.URL.Query().Has("schemaDigest") {
				w.Header().Set("Content-Type", wire.ContentTypeJSON)
				_, _ = w.Write([]byte(`{"forms":[]}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}})
	if err := runCheck(t, lax, "forms-exact-availability"); err == nil || !strings.Contains(err.Error(), "each exactly once") || !strings.Contains(err.Error(), "answered HTTP 200 (success)") {
		t.Errorf("forms-exact-availability on a host accepting a query without schemaDigest: %v", err)
	}
}
