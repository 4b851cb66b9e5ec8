package runtimebench_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/enginetest"
)

// poll is how often the apply benchmark asks for the new answer.
const poll = 2 * time.Millisecond

// BenchmarkApplyToAnswer measures the time from a version's apply — the
// Host API call that weights it returns — to its first answered request
// through the ingress, polled every 2 ms: for a tenant's first worker (the
// create of its WorkerEndpoint, the last of its resources, which makes it
// routable and so run; the tenant's shard starts) and for BENCH_RUNTIME_APPLIES rollouts of a new version
// of a deployed worker (default 5; its deployment's update; the shard's
// next generation starts, answers, and takes the traffic). Beside them
// the floor of the same run, as many cold starts of a bare workerd with
// one hello-world worker (bare), from engine.Start to the first answer
// on its socket, polled as often.
func BenchmarkApplyToAnswer(b *testing.B) {
	applies := envInt(b, "BENCH_RUNTIME_APPLIES", 5)
	r := startRig(b)
	bin := enginetest.Binary(b)
	header(fmt.Sprintf("from a version's apply (the Host API call returns) to its first answer through the ingress, polled every %s; %d rollouts", poll, applies))
	b.ResetTimer()
	w := r.newWorker()
	src, body := helloN("first")
	v := r.version(w, src, nil)
	w.deployment = r.create("WorkerDeployment", "deploy", deploymentSpec(w, v))
	r.endpoint(w) // the worker becomes routable: its version runs
	t0 := time.Now()
	first := r.waitAnswer(w.hostname, "/", body, poll).Sub(t0)

	var rollouts, cold []time.Duration
	for i := range applies {
		src, body := helloN(fmt.Sprint("rollout-", i))
		v := r.version(w, src, nil)
		r.rollout(w, v)
		t0 := time.Now()
		rollouts = append(rollouts, r.waitAnswer(w.hostname, "/", body, poll).Sub(t0))

		t0 = time.Now()
		x := startBare(b, bin, 1)
		cold = append(cold, x.waitAnswer(b, 0, poll).Sub(t0))
		x.proc.Stop(5 * time.Second)
		time.Sleep(1500 * time.Millisecond) // the old generation's switch delay passes; it drains
	}
	b.StopTimer()
	span := func(ds []time.Duration) string {
		lo, hi := ds[0], ds[0]
		for _, d := range ds {
			lo, hi = min(lo, d), max(hi, d)
		}
		return fmt.Sprintf("median %s (%s – %s)", ms(medianDur(append([]time.Duration(nil), ds...))), ms(lo), ms(hi))
	}
	fmt.Printf("   tenant's first worker (its shard starts): %s\n", ms(first))
	fmt.Printf("   rollout of a new version:                 %s\n", span(rollouts))
	fmt.Printf("   bare workerd cold start (floor):          %s\n", span(cold))
	fmt.Printf("   rollout / cold start: %.2f× (medians)\n", float64(medianDur(rollouts))/float64(medianDur(cold)))
	fmt.Printf("   load average at end: %s\n", loadavg())
	b.ReportMetric(float64(medianDur(rollouts))/float64(time.Millisecond), "rollout-ms")
}
