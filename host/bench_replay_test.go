package host_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/takoform/takoform/internal/hosttest"
)

// BenchmarkReplayHandler is replays of one recorded create (the same PUT,
// Idempotency-Key and body; 32 clients) through the host's handler with
// no network: what a storm of client retries costs the host per replay.
func BenchmarkReplayHandler(b *testing.B) {
	var capture captured
	h := hosttest.Start(b, benchOptions(b, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && capture.on.Load() {
				body := new(bytes.Buffer)
				if _, err := body.ReadFrom(r.Body); err != nil {
					b.Error(err)
				}
				capture.path, capture.hdr, capture.body = r.URL.RequestURI(), r.Header.Clone(), body.Bytes()
				r.Body = readCloser{bytes.NewReader(capture.body)}
			}
			next.ServeHTTP(w, r)
		})
	}))
	c, req := benchClient(b, h, 0)
	req.Metadata.Name = "replay-me"
	capture.on.Store(true)
	if _, err := prepareApply(context.Background(), c, req, nil); err != nil {
		b.Fatal(err)
	}
	capture.on.Store(false)
	var failed atomic.Bool
	parallelCPU(b, func() error {
		r := httptest.NewRequest(http.MethodPut, capture.path, bytes.NewReader(capture.body))
		r.Header = capture.hdr.Clone()
		w := httptest.NewRecorder()
		h.Server.ServeHTTP(w, r)
		if w.Code != http.StatusCreated && !failed.Swap(true) {
			return fmt.Errorf("replay answered %d: %s", w.Code, w.Body)
		}
		return nil
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "replays/s")
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
