package runtime

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/host/runtime/engine"
)

// maxLoadVerdicts bounds the load check's cache of verdicts.
const maxLoadVerdicts = 1024

// maxConcurrentLoads bounds the engine processes load checks run at once.
const maxConcurrentLoads = 2

// LoadCheck is the engine load check the host calls at WorkerVersion
// apply, import and 202 commit (host.Config.LoadCheck, spec/runtime-v1.md
// §1.4): engine.Load of the bundle on bin, at most maxConcurrentLoads at a
// time. A verdict (the exported set or a *artifact.LoadError) is a
// function of the bundle's bytes and the pinned engine, so it is kept by
// manifest digest: an accepted 202 and its commit, or a retried
// transaction, load once. When the engine cannot decide (it did not run)
// the error is logged and returned as is: the caller's static check then
// decides (repo decision 0052).
func LoadCheck(bin string, log *slog.Logger) artifact.LoadCheck {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	type verdict struct {
		handlers []string
		err      *artifact.LoadError
	}
	var mu sync.Mutex
	cache := map[string]verdict{}
	slots := make(chan struct{}, maxConcurrentLoads)
	return func(ctx context.Context, b artifact.LoadBundle) ([]string, error) {
		if b.Digest != "" {
			mu.Lock()
			v, ok := cache[b.Digest]
			mu.Unlock()
			if ok {
				if v.err != nil {
					return nil, v.err
				}
				return v.handlers, nil
			}
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer func() { <-slots }()
		mods := make([]engine.Module, len(b.Modules))
		for i, m := range b.Modules {
			mods[i] = engine.Module{Name: m.Name, MediaType: m.MediaType, Data: m.Data}
		}
		start := time.Now()
		handlers, err := engine.Load(ctx, bin, mods, b.MainModule, nil)
		var le *artifact.LoadError
		switch {
		case err == nil || errors.As(err, &le):
			log.Debug("engine load check", "bundle", b.Digest, "handlers", handlers, "refused", le, "took", time.Since(start))
			if b.Digest != "" {
				mu.Lock()
				if len(cache) >= maxLoadVerdicts {
					clear(cache)
				}
				cache[b.Digest] = verdict{handlers, le}
				mu.Unlock()
			}
		default:
			log.Warn("the engine load check could not decide; the static check decides", "bundle", b.Digest, "err", err)
		}
		return handlers, err
	}
}
