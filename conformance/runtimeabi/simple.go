package runtimeabi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
)

// GlobalsFloor is the 19 members every isolate has (spec/runtime-v1.md §4).
var GlobalsFloor = []string{
	"AbortController", "AbortSignal", "Headers", "ReadableStream", "Request", "Response", "TextDecoder", "TextEncoder",
	"URL", "URLSearchParams", "WritableStream", "clearInterval", "clearTimeout", "crypto.getRandomValues",
	"crypto.subtle.digest", "fetch", "setInterval", "setTimeout", "structuredClone",
}

// ProbeEnvNames are the probe's env names, sorted (spec/runtime-v1.md §8.1).
var ProbeEnvNames = []string{"API_SIGNING_TOKEN_NAME", "CACHE", "EVENTS", "LOG_LEVEL", "PEER"}

// kvValue is check 11's value: 00 01 02 7f 7f fe ff then ASCII TAKOFORM.
const kvValue = "AAECf3/+/1RBS09GT1JN"

// pollEvery is how often checks 11 and 16 poll.
const pollEvery = 250 * time.Millisecond

// probeJSON decodes a probe JSON answer into members, requiring its
// status and the probe member (spec/runtime-v1.md §8.2).
func probeJSON(a *answer, status int) (map[string]any, error) {
	if a.Status != status {
		return nil, fmt.Errorf("answered HTTP %d, want %d: %s", a.Status, status, abbreviate(a.Body))
	}
	if a.BodyErr != nil {
		return nil, fmt.Errorf("the body did not end cleanly: %v", a.BodyErr)
	}
	var m map[string]any
	if err := json.Unmarshal(a.Body, &m); err != nil {
		return nil, fmt.Errorf("the answer is not a JSON object: %s", abbreviate(a.Body))
	}
	if m["probe"] != ProbeProtocol {
		return nil, fmt.Errorf("the answer's probe member is %v, want %q: is our probe deployed at W?", m["probe"], ProbeProtocol)
	}
	return m, nil
}

// exactly checks a probe answer is exactly want (plus probe).
func exactly(a *answer, want map[string]any) error {
	got, err := probeJSON(a, 200)
	if err != nil {
		return err
	}
	w := map[string]any{"probe": ProbeProtocol}
	for k, v := range want {
		w[k] = v
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		e, _ := json.Marshal(w)
		return fmt.Errorf("answered %s, want exactly %s", g, e)
	}
	return nil
}

func verifyHandler(a *answer) error {
	return exactly(a, map[string]any{"argumentCount": 3.0, "requestIsRequest": true, "requestMethod": "GET", "envIsObject": true, "waitUntilIsFunction": true})
}

func verifyHealth(a *answer) error { return exactly(a, map[string]any{"ok": true}) }

// verifyThrow: the host's 500, complete: a body that ends cleanly
// (spec/runtime-v1.md §2.2).
func verifyThrow(a *answer) error {
	if a.Status != 500 {
		return fmt.Errorf("an uncaught throw answered HTTP %d, want the host-generated 500", a.Status)
	}
	if a.BodyErr != nil {
		return fmt.Errorf("the 500's body did not end cleanly: %v", a.BodyErr)
	}
	return nil
}

// stringList reads a member that must be a list of strings.
func stringList(m map[string]any, member string) ([]string, error) {
	raw, ok := m[member].([]any)
	if !ok {
		return nil, fmt.Errorf("member %s is %v, want a list of strings", member, m[member])
	}
	out := make([]string, len(raw))
	for i, v := range raw {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("member %s holds %v, want strings", member, v)
		}
		out[i] = s
	}
	return out, nil
}

func verifyEnv(a *answer) error {
	m, err := probeJSON(a, 200)
	if err != nil {
		return err
	}
	names, err := stringList(m, "propertyNames")
	if err != nil {
		return err
	}
	if !slices.Equal(names, ProbeEnvNames) {
		return fmt.Errorf("env's own enumerable names are %v, want exactly %v (spec/runtime-v1.md §3.1)", names, ProbeEnvNames)
	}
	return nil
}

func verifyGlobals(a *answer) error {
	m, err := probeJSON(a, 200)
	if err != nil {
		return err
	}
	missing, err := stringList(m, "missing")
	if err != nil {
		return err
	}
	present, err := stringList(m, "present")
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("globals missing from the isolate: %v (spec/runtime-v1.md §4)", missing)
	}
	want := slices.Sorted(slices.Values(GlobalsFloor))
	if !slices.Equal(present, want) {
		return fmt.Errorf("present is %v, want the floor %v", present, want)
	}
	return nil
}

func checkHandler(ctx context.Context, r *Run) error { return r.get(ctx, "handler", verifyHandler) }
func checkHealth(ctx context.Context, r *Run) error  { return r.get(ctx, "health", verifyHealth) }
func checkThrow(ctx context.Context, r *Run) error   { return r.get(ctx, "throw", verifyThrow) }
func checkEnv(ctx context.Context, r *Run) error     { return r.get(ctx, "env", verifyEnv) }

func checkGlobals(ctx context.Context, r *Run) error {
	return r.get(ctx, "globals?names="+url.QueryEscape(strings.Join(GlobalsFloor, ",")), verifyGlobals)
}

// get sends GET W/abi/route (the client bound of spec/runtime-v1.md §8.3: 2 min) and verifies.
func (r *Run) get(ctx context.Context, route string, verify func(*answer) error) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	a, err := r.o.Worker.do(ctx, "GET", route, "", nil)
	if err != nil {
		return err
	}
	return verify(a)
}

// KVKey is check 11's key for this run.
func (r *Run) KVKey() string { return "runtime-abi:kv-round-trip-" + r.o.Token }

// kvState is what one GET W/abi/kv says: found with these bytes (base64),
// not found, or a wrong answer.
func kvState(a *answer) (found bool, err error) {
	m, err := probeJSON(a, 200)
	if err != nil {
		return false, err
	}
	switch m["found"] {
	case false:
		return false, nil
	case true:
		got, _ := m["valueBase64"].(string)
		if got != kvValue {
			b, _ := base64.StdEncoding.DecodeString(got)
			want, _ := base64.StdEncoding.DecodeString(kvValue)
			return true, fmt.Errorf("found other bytes: % x, want % x (bytes in, the same bytes out; spec/runtime-v1.md §5.1)", b, want)
		}
		return true, nil
	}
	return false, fmt.Errorf("member found is %v, want true or false", m["found"])
}

// checkKV: POST the value, then poll GET until found (spec/runtime-v1.md
// §8.3 row 11); other bytes fail at once.
func checkKV(ctx context.Context, r *Run) error {
	body, _ := json.Marshal(map[string]string{"key": r.KVKey(), "valueBase64": kvValue})
	a, err := r.o.Worker.do(ctx, "POST", "kv", "application/json", body)
	if err != nil {
		return err
	}
	if err := exactly(a, map[string]any{"stored": true}); err != nil {
		return fmt.Errorf("POST kv: %w", err)
	}
	return r.pollKV(ctx)
}

// RecheckKV reads check 11's value again (our addition, spec/runtime-v1.md
// §8.3: after the shard restarted): found with the same bytes within the
// poll bound.
func (r *Run) RecheckKV(ctx context.Context) error { return r.pollKV(ctx) }

func (r *Run) pollKV(ctx context.Context) error {
	deadline := time.Now().Add(r.o.Poll)
	for {
		a, err := r.o.Worker.do(ctx, "GET", "kv?key="+url.QueryEscape(r.KVKey()), "", nil)
		if err != nil {
			return err
		}
		found, err := kvState(a)
		if err != nil || found {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the value was not found within %s of polling (the key %s)", r.o.Poll, r.KVKey())
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// abbreviate shortens a body for an error message.
func abbreviate(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
