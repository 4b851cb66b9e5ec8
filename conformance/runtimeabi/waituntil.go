package runtimeabi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"
)

// waitUntilDelay is the task's sleep in check 16: the POST and the first
// GET must both be answered within it, so the task cannot have run inline.
const waitUntilDelay = 1500 * time.Millisecond

// checkWaitUntil is spec/runtime-v1.md §8.3 row 16: the response leaves at
// once, the task runs on after it (the isolate is held), and the rejected
// task leaves the response alone.
func checkWaitUntil(ctx context.Context, r *Run) error {
	nonce := "wait-until-" + r.o.Token
	body, _ := json.Marshal(map[string]any{"nonce": nonce, "delayMillis": waitUntilDelay.Milliseconds()})
	start := time.Now()
	a, err := r.o.Worker.do(ctx, "POST", "wait-until", "application/json", body)
	if err != nil {
		return err
	}
	if err := exactly(a, map[string]any{"registeredTasks": 2.0, "responseSent": true}); err != nil {
		return fmt.Errorf("POST wait-until: %w", err)
	}
	route := "wait-until?nonce=" + url.QueryEscape(nonce)
	if a, err = r.o.Worker.do(ctx, "GET", route, "", nil); err != nil {
		return err
	}
	if err := verifyWaitUntilEarly(a, time.Since(start)); err != nil {
		return err
	}
	deadline := time.Now().Add(r.o.Poll)
	for {
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
		if a, err = r.o.Worker.do(ctx, "GET", route, "", nil); err != nil {
			return err
		}
		settled, err := waitUntilState(a, nonce)
		if err != nil || settled {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the waitUntil task never settled within %s after the response (the isolate was not held?)", r.o.Poll)
		}
	}
}

// verifyWaitUntilEarly judges the GET sent at once after the POST, took
// the time both took together.
func verifyWaitUntilEarly(a *answer, took time.Duration) error {
	m, err := probeJSON(a, 200)
	if err != nil {
		return fmt.Errorf("the immediate GET: %w", err)
	}
	if took >= waitUntilDelay {
		return fmt.Errorf("the POST and the immediate GET took %s, not under %s: registering a task must never delay the response (spec/runtime-v1.md §2.4)", took.Round(time.Millisecond), waitUntilDelay)
	}
	if m["settled"] != false {
		return fmt.Errorf("the GET sent at once after the POST says settled %v, want false: the task ran before the response left", m["settled"])
	}
	return nil
}

// waitUntilState reads one later GET: settled (with the right record), not
// yet, or a wrong answer.
func waitUntilState(a *answer, nonce string) (bool, error) {
	m, err := probeJSON(a, 200)
	if err != nil {
		return false, err
	}
	switch m["settled"] {
	case false:
		return false, nil
	case true:
		if m["afterRejection"] != true || m["nonce"] != nonce {
			return true, fmt.Errorf("settled with afterRejection %v and nonce %v, want true and %q: the rejected task must leave the invocation running (spec/runtime-v1.md §2.4)", m["afterRejection"], m["nonce"], nonce)
		}
		return true, nil
	}
	return false, fmt.Errorf("member settled is %v, want true or false", m["settled"])
}
