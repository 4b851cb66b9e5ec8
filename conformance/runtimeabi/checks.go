package runtimeabi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Outcome is a check's result.
type Outcome string

// The outcomes of a check.
const (
	Passed     Outcome = "passed"
	Failed     Outcome = "failed"
	Unmeasured Outcome = "unmeasured" // the run lacks what the check needs
)

// Check is one behaviour of spec/runtime-v1.md §8.3.
type Check struct {
	Number int    // 1..18, the table's row
	ID     string // the behaviour's ID
	Run    func(ctx context.Context, r *Run) error
}

// errUnmeasured marks a check the run could not measure; wrap it with why.
var errUnmeasured = errors.New("unmeasured")

func unmeasured(why string) error { return fmt.Errorf("%w: %s", errUnmeasured, why) }

// Checks are the 18 behaviours in table order.
var Checks = []Check{
	{1, "module-loads-and-exports-are-derived-from-bytes", checkLoadExports},
	{2, "unsupported-module-media-type-refused", checkLoadMediaType},
	{3, "main-module-missing-refused", checkLoadMainMissing},
	{4, "unparseable-module-refused", checkLoadSyntax},
	{5, "declared-handler-not-exported-refused", checkLoadNotExported},
	{6, "fetch-receives-request-env-and-context", checkHandler},
	{7, "fetch-returns-a-response", checkHealth},
	{8, "fetch-uncaught-throw-is-a-host-generated-response", checkThrow},
	{9, "environment-projects-exactly-the-declared-names", checkEnv},
	{10, "globals-floor-present", checkGlobals},
	{11, "kv-binding-round-trips-bytes-through-env", checkKV},
	{12, "request-body-streams-rather-than-buffering", checkEchoStream},
	{13, "response-body-streams-rather-than-buffering", checkStream},
	{14, "service-request-body-streams-to-the-callee", checkServiceEchoStream},
	{15, "service-response-body-streams-from-the-callee", checkServiceStream},
	{16, "wait-until-holds-the-isolate-and-a-rejection-leaves-the-response-alone", checkWaitUntil},
	{17, "scheduled-invoked-by-the-host-cron-attachment", checkScheduled},
	{18, "queue-batch-delivered-to-the-queue-handler", checkQueue},
}

// CheckNumber is the check of row n (1..18) of spec/runtime-v1.md §8.3.
func CheckNumber(n int) Check {
	for _, c := range Checks {
		if c.Number == n {
			return c
		}
	}
	panic(fmt.Sprintf("runtimeabi: no check %d", n))
}

// Options configure a run.
type Options struct {
	// Worker reaches W; required for checks 6–16.
	Worker *Worker
	// Loader reaches the loader adapter (spec/runtime-v1.md §7); nil
	// reports checks 1–5 unmeasured.
	Loader *Loader
	// Wait bounds each wait of checks 12–15 (default 30 s, the bound of
	// spec/runtime-v1.md §8.3).
	Wait time.Duration
	// Poll bounds the polls of checks 11 and 16 (default 30 s).
	Poll time.Duration
	// CronPoll bounds check 17's poll for the host's next scheduled
	// invocation (default 150 s); QueuePoll check 18's for the delivered
	// batch (default 60 s) (spec/runtime-v1.md §8.3).
	CronPoll, QueuePoll time.Duration
	// Token correlates this run's keys (32 lowercase hex; default 16
	// random bytes, spec/runtime-v1.md §8.2).
	Token string
}

// Run is one run of the checks.
type Run struct {
	o Options
	// scheduled is the scheduledTimeMillis check 17 observed (0: none).
	scheduled int64
}

// NewRun starts a run.
func NewRun(o Options) *Run {
	if o.Wait <= 0 {
		o.Wait = 30 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 30 * time.Second
	}
	if o.CronPoll <= 0 {
		o.CronPoll = 150 * time.Second
	}
	if o.QueuePoll <= 0 {
		o.QueuePoll = 60 * time.Second
	}
	if o.Token == "" {
		o.Token = randomHex(16)
	}
	return &Run{o: o}
}

// Token is the run's correlation token.
func (r *Run) Token() string { return r.o.Token }

// Result is one check's outcome.
type Result struct {
	Number   int
	ID       string
	Outcome  Outcome
	Detail   string // why it failed or was not measured
	Duration time.Duration
}

// Check runs one check (not fail-fast: each check stands alone, bounded
// by the longest a conforming runtime may take, plus a minute).
func (r *Run) Check(ctx context.Context, c Check) Result {
	start := time.Now()
	if r.o.Worker == nil && c.Number >= 6 && c.Number <= 16 {
		return Result{c.Number, c.ID, Unmeasured, "no worker URL given", 0}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*r.o.Wait+r.o.Poll+time.Minute)
	defer cancel()
	err := c.Run(ctx, r)
	res := Result{Number: c.Number, ID: c.ID, Outcome: Passed, Duration: time.Since(start)}
	switch {
	case errors.Is(err, errUnmeasured):
		res.Outcome, res.Detail = Unmeasured, strings.TrimPrefix(err.Error(), errUnmeasured.Error()+": ")
	case err != nil:
		res.Outcome, res.Detail = Failed, err.Error()
	}
	return res
}

// All runs every check in table order.
func (r *Run) All(ctx context.Context) []Result {
	out := make([]Result, 0, len(Checks))
	for _, c := range Checks {
		out = append(out, r.Check(ctx, c))
	}
	return out
}
