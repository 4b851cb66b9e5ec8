package runtimeabi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"
)

// Checks 17 and 18 (spec/runtime-v1.md §8.3): the host's own deliveries,
// observed through what the probe's scheduled and queue handlers write to
// CACHE (§8.2).

// queuePayload is check 18's payload: ASCII "queue-round-trip-bytes".
const queuePayload = "cXVldWUtcm91bmQtdHJpcC1ieXRlcw=="

// How often checks 17 and 18 poll (spec/runtime-v1.md §8.3).
const (
	cronPollEvery  = time.Second
	queuePollEvery = 500 * time.Millisecond
)

// QueueNonce is check 18's nonce for this run.
func (r *Run) QueueNonce() string { return "queue-round-trip-" + r.o.Token }

// Scheduled is the scheduledTimeMillis check 17 observed in this run (0
// before it passed), for a host's own checks (spec/runtime-v1.md §8.3,
// "Our own checks add").
func (r *Run) Scheduled() int64 { return r.scheduled }

// scheduledState is one GET W/abi/scheduled: observed, and then the cron
// and scheduledTimeMillis the last invocation recorded.
func scheduledState(a *answer) (observed bool, cron string, millis int64, err error) {
	m, err := probeJSON(a, 200)
	if err != nil {
		return false, "", 0, err
	}
	switch m["observed"] {
	case false:
		return false, "", 0, nil
	case true:
	default:
		return false, "", 0, fmt.Errorf("member observed is %v, want true or false", m["observed"])
	}
	cron, _ = m["cron"].(string)
	f, ok := m["scheduledTimeMillis"].(float64)
	if !ok || f != float64(int64(f)) {
		return true, cron, 0, fmt.Errorf("scheduledTimeMillis is %v, want an integer number of milliseconds", m["scheduledTimeMillis"])
	}
	return true, cron, int64(f), nil
}

// checkScheduled: the baseline, DELETE, then poll until the host's cron
// attachment has invoked scheduled again: observed, the trigger's cron,
// a scheduledTimeMillis past the baseline's (spec/runtime-v1.md §8.3 row
// 17).
func checkScheduled(ctx context.Context, r *Run) error {
	a, err := r.o.Worker.do(ctx, "GET", "scheduled", "", nil)
	if err != nil {
		return err
	}
	_, _, baseline, err := scheduledState(a)
	if err != nil {
		return fmt.Errorf("GET scheduled (the baseline): %w", err)
	}
	if a, err = r.o.Worker.do(ctx, "DELETE", "scheduled", "", nil); err != nil {
		return err
	}
	if err := exactly(a, map[string]any{"cleared": true}); err != nil {
		return fmt.Errorf("DELETE scheduled: %w", err)
	}
	deadline := time.Now().Add(r.o.CronPoll)
	for {
		a, err := r.o.Worker.do(ctx, "GET", "scheduled", "", nil)
		if err != nil {
			return err
		}
		observed, cron, millis, err := scheduledState(a)
		if err != nil {
			return err
		}
		if observed {
			switch {
			case cron != ProbeCron:
				return fmt.Errorf("scheduled was invoked with cron %q, want the trigger's %q", cron, ProbeCron)
			case millis <= baseline:
				return fmt.Errorf("scheduled was invoked with scheduledTimeMillis %d, not after the baseline's %d", millis, baseline)
			}
			r.scheduled = millis
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the host did not invoke scheduled within %s of polling (cron %q)", r.o.CronPoll, ProbeCron)
		}
		if err := sleep(ctx, cronPollEvery); err != nil {
			return err
		}
	}
}

// checkQueue: POST a message through the producer binding, then poll
// until the consumer's batch delivered it: the same nonce and bytes, the
// queue's name, attempts 1 and a message id (spec/runtime-v1.md §8.3 row
// 18).
func checkQueue(ctx context.Context, r *Run) error {
	body, _ := json.Marshal(map[string]string{"nonce": r.QueueNonce(), "payloadBase64": queuePayload})
	a, err := r.o.Worker.do(ctx, "POST", "queue", "application/json", body)
	if err != nil {
		return err
	}
	if err := exactly(a, map[string]any{"sent": true}); err != nil {
		return fmt.Errorf("POST queue: %w", err)
	}
	deadline := time.Now().Add(r.o.QueuePoll)
	for {
		a, err := r.o.Worker.do(ctx, "GET", "queue?nonce="+url.QueryEscape(r.QueueNonce()), "", nil)
		if err != nil {
			return err
		}
		m, err := probeJSON(a, 200)
		if err != nil {
			return err
		}
		switch m["delivered"] {
		case true:
			id, _ := m["messageId"].(string)
			switch {
			case m["nonce"] != r.QueueNonce():
				return fmt.Errorf("the batch delivered nonce %v, want %q", m["nonce"], r.QueueNonce())
			case m["payloadBase64"] != queuePayload:
				return fmt.Errorf("the batch delivered payload %v, want %q (bytes in, the same bytes out)", m["payloadBase64"], queuePayload)
			case m["queue"] != QueueName:
				return fmt.Errorf("the batch's queue is %v, want %q", m["queue"], QueueName)
			case m["attempts"] != float64(1):
				return fmt.Errorf("the message's attempts is %v, want 1 (its first delivery)", m["attempts"])
			case id == "":
				return fmt.Errorf("the message has no id (messageId %v)", m["messageId"])
			}
			return nil
		case false:
		default:
			return fmt.Errorf("member delivered is %v, want true or false", m["delivered"])
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the host did not deliver the message to the queue handler within %s of polling (nonce %s)", r.o.QueuePoll, r.QueueNonce())
		}
		if err := sleep(ctx, queuePollEvery); err != nil {
			return err
		}
	}
}
