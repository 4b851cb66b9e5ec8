package client

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Policy defaults (spec/host-api-v1alpha3.md §3.5, §4).
const (
	DefaultRetryAttempts = 3
	DefaultRetryBase     = 25 * time.Millisecond
	DefaultRetryMax      = 2 * time.Second
	DefaultPollBase      = 250 * time.Millisecond
	DefaultPollMax       = 15 * time.Second
	maxRetryAfter        = 24 * time.Hour // larger Retry-After values are clamped
)

// RetryPolicy governs automatic retries of complete, valid error envelopes
// with retryable:true and a retryable code (resource_busy,
// backend_unavailable, rate_limited, deadline_exceeded; spec/host-api-v1alpha3.md §3.5). Every
// retry repeats the identical request, Idempotency-Key included. The wait
// is Retry-After when the answer carries one (honoured in full), else a
// full-jitter exponential backoff; a wait that would pass the context
// deadline is not started and the host's error is returned instead.
type RetryPolicy struct {
	Attempts int           // total attempts including the first; default 3
	Base     time.Duration // backoff base; default 25 ms
	Max      time.Duration // backoff cap; default 2 s
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultRetryAttempts
	}
	if p.Base <= 0 {
		p.Base = DefaultRetryBase
	}
	if p.Max <= 0 {
		p.Max = DefaultRetryMax
	}
	return p
}

// delay is the wait before retry n (0-based) given the answer's
// Retry-After header value.
func (p RetryPolicy) delay(n int, retryAfter string, r func() float64) time.Duration {
	return delayFor(p.Base, p.Max, n, retryAfter, r)
}

// delayFor is wait n (0-based) of a loop: Retry-After in full when the
// answer carries a valid one, else Backoff(base, limit, n, r).
func delayFor(base, limit time.Duration, n int, retryAfter string, r func() float64) time.Duration {
	if d, ok := ParseRetryAfter(retryAfter, time.Now()); ok {
		return d
	}
	return Backoff(base, limit, n, r)
}

// PollPolicy governs operation polling (spec/host-api-v1alpha3.md §4): Retry-After when the
// poll answer carries one (honoured in full, bounded by the context
// deadline), else full-jitter exponential backoff from Base doubling up to
// Max. No fixed-interval polling.
type PollPolicy struct {
	Base time.Duration // default 250 ms
	Max  time.Duration // default 15 s
}

func (p PollPolicy) withDefaults() PollPolicy {
	if p.Base <= 0 {
		p.Base = DefaultPollBase
	}
	if p.Max <= 0 {
		p.Max = DefaultPollMax
	}
	return p
}

func (p PollPolicy) delay(n int, retryAfter string, r func() float64) time.Duration {
	return delayFor(p.Base, p.Max, n, retryAfter, r)
}

// Backoff is the full-jitter exponential backoff before attempt n
// (0-based): r() * min(limit, base·2^n), where r returns a uniform value in
// [0, 1) (a value outside it counts as 0). It is 0 when base is not
// positive.
func Backoff(base, limit time.Duration, n int, r func() float64) time.Duration {
	if base <= 0 {
		return 0
	}
	ceil := base
	for i := 0; i < n && ceil < limit; i++ {
		if ceil > math.MaxInt64/2 {
			ceil = limit
			break
		}
		ceil *= 2
	}
	ceil = min(ceil, limit)
	f := r()
	if f < 0 || f >= 1 {
		f = 0
	}
	return time.Duration(f * float64(ceil))
}

// ParseRetryAfter reads a Retry-After header value (RFC 9110 §10.2.3):
// delta-seconds (one or more ASCII digits) or an HTTP-date, relative to
// now. A date in the past is 0; values beyond 24 h are clamped to 24 h.
// ok is false for an absent or malformed value.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	if v == "" {
		return 0, false
	}
	if allDigits(v) {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil || s > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true // only overflow fails for a digit string
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfter), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// errPastDeadline is a wait that cannot finish before the context deadline.
// It wraps context.DeadlineExceeded.
var errPastDeadline = fmt.Errorf("the next wait would pass the context deadline: %w", context.DeadlineExceeded)

// waits is the backoff.BackOff of one retry or poll loop, which
// github.com/cenkalti/backoff/v5 runs (the attempts, the timer, the
// context): wait n (0-based) is delay(n, retryAfter, jitter), retryAfter
// being the last answer's Retry-After. A wait that cannot end before ctx's
// deadline is not started: NextBackOff says backoff.Stop and stopped is
// errPastDeadline (spec/host-api-v1alpha3.md §3.5, §4).
type waits struct {
	ctx        context.Context
	delay      func(n int, retryAfter string, r func() float64) time.Duration
	jitter     func() float64
	n          int
	retryAfter string
	stopped    error
}

func (w *waits) Reset() { w.n, w.stopped = 0, nil }

func (w *waits) NextBackOff() time.Duration {
	d := w.delay(w.n, w.retryAfter, w.jitter)
	w.n++
	if dl, ok := w.ctx.Deadline(); ok && time.Until(dl) < d {
		w.stopped = errPastDeadline
		return backoff.Stop
	}
	return d
}

// repeat runs attempt under w until it succeeds or fails permanently
// (backoff.Permanent), at most attempts times in all (0: until ctx ends or
// w stops). It returns attempt's result, or false when it stopped short
// of a success: the caller answers with what its last attempt saw, never
// with the loop's own error. The first attempt runs before the library's
// loop, which builds its options and timer for every call, as most calls
// succeed at once; a first attempt that fails is handed to the loop as
// the result of its own first try, so the loop decides exactly as if it
// had run it.
func repeat[T any](ctx context.Context, w *waits, attempts int, attempt func() (T, error)) (T, bool) {
	w.Reset()
	v, err := attempt()
	if err == nil {
		return v, true
	}
	first := true
	v, err = backoff.Retry(ctx, func() (T, error) {
		if first {
			first = false
			return v, err
		}
		return attempt()
	}, backoff.WithBackOff(w), backoff.WithMaxTries(uint(max(attempts, 0))), backoff.WithMaxElapsedTime(0))
	return v, err == nil
}
