package host

import "time"

// The operation worker polls for due operations every workerPoll while the
// store answers; after consecutive failures (a database outage) it waits
// workerBackoff(failures) before the next try, so a fleet of replicas does
// not flood the log and the recovering database (spec/decisions/0011-postgres-concurrency.md).
const (
	workerPoll       = 100 * time.Millisecond
	workerBackoffCap = 5 * time.Second
)

// workerBackoff returns the wait before the next poll after failures
// consecutive failed polls: workerPoll when failures is 0, then 200 ms,
// 400 ms, … doubling up to workerBackoffCap (5 s).
func workerBackoff(failures int) time.Duration {
	d := workerPoll
	for range failures {
		d *= 2
		if d >= workerBackoffCap {
			return workerBackoffCap
		}
	}
	return d
}
