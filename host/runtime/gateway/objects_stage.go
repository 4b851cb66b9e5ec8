package gateway

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// A streamed body is staged first, then committed: the projection sends
// a ReadableStream to /objects/v1/stage, which stores it as a temp file
// of the bucket, and names that file in the put or uploadPart request
// only once the stream ended without error, with the count of bytes it
// passed. A stream that fails (the host's engine may end a failed request
// body as if it were complete) is never committed; its temp file goes
// with the sweep after an hour (spec/runtime-v1.md §5.2: "a stream that
// errors fails invalid_body; nothing is stored").
type stagedBodies struct {
	mu sync.Mutex
	m  map[string]stagedBody
}

type stagedBody struct {
	bucket string
	body   written
	at     time.Time
}

func (s *stagedBodies) put(bucket string, w *written) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]stagedBody{}
	}
	s.m[w.file] = stagedBody{bucket: bucket, body: *w, at: time.Now()}
}

func (s *stagedBodies) take(bucket, name string) (written, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[name]
	if !ok || b.bucket != bucket {
		return written{}, false
	}
	delete(s.m, name)
	return b.body, true
}

// prune forgets stagings older than objectTempMaxAge (the sweep removes
// their files).
func (s *stagedBodies) prune() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, b := range s.m {
		if time.Since(b.at) > objectTempMaxAge {
			delete(s.m, k)
		}
	}
}

// stage answers PUT /objects/v1/stage: {"staged", "size"}.
func (h *objectHandler) stage(w http.ResponseWriter, r *http.Request) {
	uid, _, _, ok := h.args(w, r, false)
	if !ok {
		return
	}
	if err := h.bucket(r, uid); err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	body, e := h.g.writeBody(r.Context(), uid, objectTempPrefix, r.Body, -1, MaxObjectSinglePut)
	if e != nil {
		h.g.writeError(w, e)
		return
	}
	h.g.staged.put(uid, body)
	h.g.writeJSON(w, map[string]any{"staged": body.file, "size": body.size})
}

// body returns the request's body as a file of bucket named prefix…:
// the staged body q names (checked against the count q["size"] the
// projection passed, and a declared length), or the request body itself.
func (h *objectHandler) body(r *http.Request, uid string, q map[string]string, declared int64, prefix string) (*written, *Error) {
	name, staged := q["staged"]
	if !staged {
		return h.g.writeBody(r.Context(), uid, prefix, r.Body, declared, MaxObjectSinglePut)
	}
	b, ok := h.g.staged.take(uid, name)
	if !ok {
		return nil, errorf(http.StatusBadRequest, "invalid_body", "the streamed body was not received whole; nothing was stored")
	}
	count, err := strconv.ParseInt(q["size"], 10, 64)
	dir := h.g.bucketDir(uid)
	switch {
	case err != nil || count != b.size:
		h.g.removeFiles(uid, b.file)
		return nil, errorf(http.StatusBadRequest, "invalid_body", "the stream passed %s bytes but %d arrived; nothing was stored", q["size"], b.size)
	case declared >= 0 && declared != b.size:
		h.g.removeFiles(uid, b.file)
		return nil, errorf(http.StatusBadRequest, "invalid_body", "the body carried %d bytes but contentLength declared %d; nothing was stored", b.size, declared)
	}
	if h.g.chunks != nil {
		return &b, nil // chunks are never renamed: the staged name stays
	}
	final, err := randomName(prefix)
	if err == nil {
		err = os.Rename(filepath.Join(dir, b.file), filepath.Join(dir, final))
	}
	if err != nil {
		h.g.removeFiles(uid, b.file)
		return nil, unavailable(err)
	}
	b.file = final
	return &b, nil
}
