package client

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/takoform/takoform/wire"
)

func fixed(f float64) func() float64 { return func() float64 { return f } }

func TestBackoffFullJitter(t *testing.T) {
	base, ceiling := 25*time.Millisecond, 2*time.Second
	cases := []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{0, 0.5, 12500 * time.Microsecond},
		{1, 0.5, 25 * time.Millisecond},
		{2, 0.5, 50 * time.Millisecond},
		{3, 0.25, 50 * time.Millisecond},
		{0, 0, 0},
		{10, 0.5, time.Second}, // 25ms·2^10 > cap: half the cap
		{1000, 0.5, time.Second},
		{62, 0.999, time.Duration(0.999 * float64(ceiling))},
		{0, 1.0, 0},  // an out-of-range source is read as 0, never above the ceiling
		{0, -0.1, 0}, //
	}
	for _, c := range cases {
		if got := Backoff(base, ceiling, c.n, fixed(c.r)); got != c.want {
			t.Errorf("Backoff(n=%d, r=%v) = %v, want %v", c.n, c.r, got, c.want)
		}
	}
	if got := Backoff(0, ceiling, 3, fixed(0.5)); got != 0 {
		t.Errorf("zero base gave %v", got)
	}
	// Full jitter: every value in [0, ceiling) is reachable, none above.
	for n := 0; n < 8; n++ {
		ceil := min(base<<n, ceiling)
		if hi := Backoff(base, ceiling, n, fixed(0.999999)); hi >= ceil || hi < ceil*99/100 {
			t.Errorf("n=%d: high draw %v outside [0.99·%v, %v)", n, hi, ceil, ceil)
		}
	}
	// The poll policy: 250 ms doubling, capped at 15 s.
	p := PollPolicy{}.withDefaults()
	if got := p.delay(0, "", fixed(0.5)); got != 125*time.Millisecond {
		t.Errorf("first poll wait %v", got)
	}
	if got := p.delay(20, "", fixed(0.5)); got != 7500*time.Millisecond {
		t.Errorf("capped poll wait %v", got)
	}
	if got := p.delay(20, "3", fixed(0.5)); got != 3*time.Second {
		t.Errorf("Retry-After not honoured: %v", got)
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	r := RetryPolicy{}.withDefaults()
	if r.Attempts != 3 || r.Base != 25*time.Millisecond || r.Max != 2*time.Second {
		t.Errorf("retry defaults %+v", r)
	}
	p := PollPolicy{}.withDefaults()
	if p.Base != 250*time.Millisecond || p.Max != 15*time.Second {
		t.Errorf("poll defaults %+v", p)
	}
	if got := r.delay(0, "7", fixed(0)); got != 7*time.Second {
		t.Errorf("retry ignores Retry-After: %v", got)
	}
	if got := r.delay(1, "soon", fixed(0.5)); got != 25*time.Millisecond {
		t.Errorf("a malformed Retry-After should fall back to backoff: %v", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 8, 6, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"5", 5 * time.Second, true},
		{"120", 2 * time.Minute, true},
		{"99999999999999999999999", 24 * time.Hour, true},
		{"86401", 24 * time.Hour, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{" 5", 0, false},
		{"5s", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{now.Add(72 * time.Hour).Format(http.TimeFormat), 24 * time.Hour, true},
	}
	for _, c := range cases {
		got, ok := ParseRetryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestWaitsRefuseAWaitPastTheDeadline(t *testing.T) {
	hour := func(int, string, func() float64) time.Duration { return time.Hour }
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// Refused at once (errPastDeadline), not after waiting for ctx to end.
	w := &waits{ctx: ctx, delay: hour, jitter: fixed(0)}
	if d := w.NextBackOff(); d != backoff.Stop || w.stopped != errPastDeadline || !errors.Is(w.stopped, context.DeadlineExceeded) {
		t.Fatalf("a wait past the deadline: %v, %v", d, w.stopped)
	}
	w = &waits{ctx: context.Background(), delay: hour, jitter: fixed(0)}
	if d := w.NextBackOff(); d != time.Hour || w.stopped != nil {
		t.Fatalf("no deadline: %v, %v", d, w.stopped)
	}
	// Wait n is the policy's delay n, Retry-After included, from 0 again
	// after Reset (the loop resets before its first attempt).
	w = &waits{ctx: context.Background(), delay: RetryPolicy{}.withDefaults().delay, jitter: fixed(0.5)}
	for n, want := range []time.Duration{12500 * time.Microsecond, 25 * time.Millisecond, 50 * time.Millisecond} {
		if d := w.NextBackOff(); d != want {
			t.Errorf("wait %d = %v, want %v", n, d, want)
		}
	}
	w.retryAfter = "2"
	if d := w.NextBackOff(); d != 2*time.Second {
		t.Errorf("Retry-After 2 gave %v", d)
	}
	w.Reset()
	w.retryAfter = ""
	if d := w.NextBackOff(); d != 12500*time.Microsecond {
		t.Errorf("after Reset: %v", d)
	}
}

// A context cancelled during a retry's or a poll's wait ends it with what
// the last answer said: the host's error for a retry, the last operation
// (and context.Canceled) for a poll. The jitter source cancels, so the
// cancellation always falls inside the wait.
func TestCancelDuringAWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, rec, _ := crafted(t, Options{Retry: RetryPolicy{Base: time.Hour, Max: time.Hour}}, reply(503, nil, envelope(wire.BackendUnavailable, true)))
	c.jitter = func() float64 { cancel(); return 0.5 }
	_, err := c.Apply(ctx, applyRequest(), Precondition{})
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.BackendUnavailable || rec.count() != 1 {
		t.Fatalf("retry cancelled in its wait: %v after %d attempts; want the host's backend_unavailable after 1", err, rec.count())
	}

	pctx, pcancel := context.WithCancel(context.Background())
	defer pcancel()
	pending := `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_7","done":false}`
	c, rec, _ = crafted(t, Options{Poll: PollPolicy{Base: time.Hour, Max: time.Hour}}, reply(200, nil, pending))
	c.jitter = func() float64 { pcancel(); return 0.5 }
	_, err = c.WaitOperation(pctx, "op_7")
	var owe *OperationWaitError
	if !errors.As(err, &owe) || owe.Last == nil || owe.Last.ID != "op_7" || !errors.Is(err, context.Canceled) || rec.count() != 1 {
		t.Fatalf("poll cancelled in its wait: %v after %d polls", err, rec.count())
	}
}
