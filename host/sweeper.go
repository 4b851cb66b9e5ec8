package host

import (
	"context"
	"time"

	"github.com/takoform/takoform/host/store"
)

// Retention says how long the sweeper keeps what nothing needs any more
// (spec/decisions/0009-retention-and-quotas.md). Zero values take the
// defaults named on each field.
type Retention struct {
	// Operations keeps a terminal operation this long after it finished
	// (default and minimum: the idempotency TTL, so a replayed 202 always
	// names an operation that can still be read).
	Operations time.Duration
	// Uploads keeps an upload session this long after it started
	// (default 24h); an older one is abandoned.
	Uploads time.Duration
	// Artifacts keeps a blob or manifest that no resource, upload or
	// manifest references this long after it was last stored (default
	// 24h: the time between committing a bundle and applying it).
	Artifacts time.Duration
	// Interval is the time between sweeps (default 1 min); Batch the most
	// rows one sweep transaction deletes (default 500).
	Interval time.Duration
	Batch    int
}

func (r Retention) withDefaults(idempotencyTTL time.Duration) Retention {
	r.Operations = max(r.Operations, idempotencyTTL)
	if r.Uploads <= 0 {
		r.Uploads = 24 * time.Hour
	}
	if r.Artifacts <= 0 {
		r.Artifacts = 24 * time.Hour
	}
	if r.Interval <= 0 {
		r.Interval = time.Minute
	}
	if r.Batch <= 0 {
		r.Batch = 500
	}
	return r
}

// Swept counts what one Sweep deleted (idempotency records expire too,
// uncounted): records, and by kind what Config.DataSweep removed.
type Swept struct {
	Operations, Uploads, Artifacts int
	Data                           map[string]int
}

// maxBatchesPerSweep bounds one Sweep so it never holds the writer long;
// what is left waits for the next interval.
const maxBatchesPerSweep = 20

// Sweep expires idempotency records (as the operation worker also does)
// and deletes, in short transactions of at most Retention.Batch rows,
// terminal operations, abandoned upload sessions and unreferenced
// artifacts older than their retention. Several hosts on one database may
// sweep at once: each delete is conditional (store.Maintenance).
func (s *Server) Sweep(ctx context.Context) (Swept, error) {
	now, r := s.cfg.Now(), s.cfg.Retention
	var out Swept
	if err := s.expireIdempotency(now); err != nil {
		return out, err
	}
	for _, k := range []struct {
		kind string
		n    *int
		del  func(store.Tx) (int, error)
	}{
		{"operations", &out.Operations, func(tx store.Tx) (int, error) { return tx.SweepOperations(now.Add(-r.Operations), r.Batch) }},
		{"uploads", &out.Uploads, func(tx store.Tx) (int, error) { return tx.SweepUploads(now.Add(-r.Uploads), r.Batch) }},
		{"artifacts", &out.Artifacts, func(tx store.Tx) (int, error) { return tx.SweepArtifacts(now.Add(-r.Artifacts), r.Batch) }},
	} {
		for range maxBatchesPerSweep {
			var n int
			err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
				var err error
				n, err = k.del(tx)
				return err
			})
			if err != nil {
				return out, err
			}
			*k.n += n
			s.ops.metrics.swept.WithLabelValues(k.kind).Add(float64(n))
			if n < r.Batch {
				break
			}
		}
	}
	if s.cfg.DataSweep != nil {
		var err error
		out.Data, err = s.cfg.DataSweep(ctx, r.Batch)
		for kind, n := range out.Data {
			s.ops.metrics.swept.WithLabelValues(kind).Add(float64(n))
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// sweeper runs Sweep every Retention.Interval until Close.
func (s *Server) sweeper() {
	defer s.stopped.Done()
	tick := time.NewTicker(s.cfg.Retention.Interval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-s.stop:
			case <-ctx.Done():
			}
			cancel()
		}()
		n, err := s.Sweep(ctx)
		cancel()
		switch {
		case err != nil:
			s.log.Error("retention sweep", "err", err)
		case n.Operations+n.Uploads+n.Artifacts > 0 || anyRemoved(n.Data):
			s.log.Info("retention sweep", "operations", n.Operations, "uploads", n.Uploads, "artifacts", n.Artifacts, "data", n.Data)
		}
	}
}

func anyRemoved(m map[string]int) bool {
	for _, n := range m {
		if n > 0 {
			return true
		}
	}
	return false
}
