package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/takoform/takoform/host/store"
)

// Multipart uploads of edge.objects (spec/runtime-v1.md §5.2): parts are
// body files named by object_parts rows; completion concatenates them, in
// the order the caller lists, into one new object body, atomically.

func (h *objectHandler) create(w http.ResponseWriter, r *http.Request) {
	uid, key, q, ok := h.args(w, r, true, "contentType")
	if !ok {
		return
	}
	if ct := q["contentType"]; utf8.RuneCountInString(ct) > MaxObjectContentType {
		h.g.writeError(w, invalidArgument("contentType is at most %d characters", MaxObjectContentType))
		return
	}
	id, err := randomName("up_")
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	err = h.g.store.Update(r.Context(), func(tx store.Tx) error {
		if e := h.g.checkBinding(tx, h.tenant, KindBucket, uid); e != nil {
			return e
		}
		return tx.PutObjectUpload(&store.ObjectUpload{Tenant: h.tenant, Bucket: uid, ID: id, Key: key,
			ContentType: q["contentType"], CreatedAt: h.g.now().Truncate(time.Millisecond)})
	})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	h.g.writeJSON(w, map[string]string{"uploadId": id})
}

var errUploadNotFound = errorf(http.StatusNotFound, "upload_not_found", "no multipart upload with this id is in progress for this key")

// upload reads an upload of key in tx: upload_not_found when absent or
// for another key.
func (h *objectHandler) upload(tx store.Tx, uid, key, id string) (*store.ObjectUpload, error) {
	if e := h.g.checkBinding(tx, h.tenant, KindBucket, uid); e != nil {
		return nil, e
	}
	u, err := tx.ObjectUpload(uid, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.Key != key) {
		return nil, errUploadNotFound
	}
	return u, err
}

func (h *objectHandler) part(w http.ResponseWriter, r *http.Request) {
	uid, key, q, ok := h.args(w, r, true, "upload", "part", "staged", "size")
	if !ok {
		return
	}
	n, err := strconv.Atoi(q["part"])
	if err != nil || n < 1 || n > MaxObjectParts {
		h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_part", "partNumber is an integer from 1 to %d", MaxObjectParts))
		return
	}
	id := q["upload"]
	if err := h.g.store.View(r.Context(), func(tx store.Tx) error { _, err := h.upload(tx, uid, key, id); return err }); err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	body, e := h.body(r, uid, q, -1, objectPartPrefix)
	if e != nil {
		h.g.fail(w, r, h.tenant, e)
		return
	}
	unlock := h.g.objLocks.lock(uid + "\x00upload\x00" + id)
	old := ""
	err = h.g.store.Update(r.Context(), func(tx store.Tx) error {
		old = ""
		if _, err := h.upload(tx, uid, key, id); err != nil {
			return err
		}
		parts, err := tx.ObjectParts(uid, id)
		if err != nil {
			return err
		}
		for _, p := range parts {
			if p.Number == n {
				old = p.File
			}
		}
		if err := tx.PutObjectPart(&store.ObjectPart{Tenant: h.tenant, Bucket: uid, Upload: id, Number: n, File: body.file, Size: body.size, ETag: body.etag}); err != nil {
			return err
		}
		return h.g.checkObjectStorage(tx, h.tenant)
	})
	unlock()
	if err != nil {
		h.g.removeFiles(uid, body.file)
		h.g.fail(w, r, h.tenant, err)
		return
	}
	h.g.removeFiles(uid, old)
	h.g.writeJSON(w, map[string]any{"etag": body.etag, "partNumber": n})
}

func (h *objectHandler) complete(w http.ResponseWriter, r *http.Request) {
	uid, key, q, ok := h.args(w, r, true, "upload")
	if !ok {
		return
	}
	id := q["upload"]
	var req struct {
		Parts []struct {
			PartNumber int    `json:"partNumber"`
			ETag       string `json:"etag"`
		} `json:"parts"`
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err != nil || dec.Decode(&req) != nil {
		h.g.writeError(w, invalidArgument("completeMultipartUpload takes parts [{partNumber, etag}, …]"))
		return
	}
	if len(req.Parts) < 1 || len(req.Parts) > MaxObjectParts {
		h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_part", "a completion lists 1 to %d parts; this one lists %d", MaxObjectParts, len(req.Parts)))
		return
	}
	unlock := h.g.objLocks.lock(uid + "\x00upload\x00" + id)
	defer unlock()
	var upload *store.ObjectUpload
	var stored []*store.ObjectPart
	err = h.g.store.View(r.Context(), func(tx store.Tx) error {
		var err error
		if upload, err = h.upload(tx, uid, key, id); err != nil {
			return err
		}
		stored, err = tx.ObjectParts(uid, id)
		return err
	})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	byNumber := map[int]*store.ObjectPart{}
	for _, p := range stored {
		byNumber[p.Number] = p
	}
	var files []func() (io.ReadCloser, error)
	var total int64
	for i, lp := range req.Parts {
		p := byNumber[lp.PartNumber]
		switch {
		case i > 0 && lp.PartNumber <= req.Parts[i-1].PartNumber:
			h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_part", "parts are listed by ascending partNumber, each once; parts[%d] is %d after %d", i, lp.PartNumber, req.Parts[i-1].PartNumber))
			return
		case p == nil:
			h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_part", "part %d was not uploaded", lp.PartNumber))
			return
		case p.ETag != lp.ETag:
			h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_part", "part %d has etag %q, not %q", lp.PartNumber, p.ETag, lp.ETag))
			return
		case i < len(req.Parts)-1 && p.Size < MinObjectPartBytes:
			h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_part", "every part but the last is at least %d bytes; part %d has %d", MinObjectPartBytes, lp.PartNumber, p.Size))
			return
		}
		total += p.Size
		files = append(files, func() (io.ReadCloser, error) { return h.g.openBody(r.Context(), uid, p.File, 0, p.Size) })
	}
	if total > MaxObjectBytes {
		h.g.writeError(w, errorf(http.StatusRequestEntityTooLarge, "value_too_large", "an object is at most %d bytes; these parts hold %d", MaxObjectBytes, total))
		return
	}
	body, e := h.g.writeBody(r.Context(), uid, objectFilePrefix, &concat{files: files}, total, MaxObjectBytes)
	if e != nil {
		h.g.fail(w, r, h.tenant, e)
		return
	}
	o := &store.Object{Tenant: h.tenant, Bucket: uid, Key: key, File: body.file, Size: body.size, ETag: body.etag,
		ContentType: upload.ContentType, UploadedAt: h.g.now().Truncate(time.Millisecond)}
	var partFiles []string
	old, err := h.commit(r, o, false, "", false, func(tx store.Tx) error {
		if _, err := h.upload(tx, uid, key, id); err != nil {
			return err
		}
		parts, err := tx.ObjectParts(uid, id)
		if err != nil {
			return err
		}
		partFiles = partFiles[:0]
		for _, p := range parts {
			partFiles = append(partFiles, p.File)
		}
		return tx.DeleteObjectUpload(uid, id)
	})
	if err != nil {
		h.g.removeFiles(uid, body.file)
		h.g.fail(w, r, h.tenant, err)
		return
	}
	h.g.removeFiles(uid, append(partFiles, old)...)
	h.g.writeJSON(w, map[string]any{"etag": o.ETag, "size": o.Size})
}

func (h *objectHandler) abort(w http.ResponseWriter, r *http.Request) {
	uid, key, q, ok := h.args(w, r, true, "upload")
	if !ok {
		return
	}
	id := q["upload"]
	unlock := h.g.objLocks.lock(uid + "\x00upload\x00" + id)
	defer unlock()
	var files []string
	err := h.g.store.Update(r.Context(), func(tx store.Tx) error {
		files = files[:0]
		if _, err := h.upload(tx, uid, key, id); err != nil {
			return err
		}
		parts, err := tx.ObjectParts(uid, id)
		if err != nil {
			return err
		}
		for _, p := range parts {
			files = append(files, p.File)
		}
		return tx.DeleteObjectUpload(uid, id)
	})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	h.g.removeFiles(uid, files...)
	w.WriteHeader(http.StatusNoContent)
}

// concat reads bodies one after another.
type concat struct {
	files []func() (io.ReadCloser, error)
	cur   io.ReadCloser
}

func (c *concat) Read(p []byte) (int, error) {
	for {
		if c.cur == nil {
			if len(c.files) == 0 {
				return 0, io.EOF
			}
			f, err := c.files[0]()
			if err != nil {
				return 0, err
			}
			c.cur, c.files = f, c.files[1:]
		}
		n, err := c.cur.Read(p)
		if errors.Is(err, io.EOF) {
			cerr := c.cur.Close()
			c.cur = nil
			if cerr != nil {
				return n, cerr
			}
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

// sweepObjects removes the body directories of buckets that no longer
// exist and temp files older than an hour (a write the host did not
// finish).
func (g *Gateway) sweepObjects(ctx context.Context, r func(uid string) (bool, error)) (int, error) {
	g.staged.prune()
	if g.chunks != nil {
		// bodies nothing names, an hour after their last chunk; a file
		// sweep too for bodies written before the store held them
		n, err := g.chunks.SweepObjectBodies(ctx, g.now().Add(-objectTempMaxAge))
		if err != nil || g.dataDir == "" {
			return n, err
		}
	}
	root := filepath.Join(g.dataDir, "objects")
	buckets, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, b := range buckets {
		live, err := r(b.Name())
		if err != nil {
			return n, err
		}
		dir := filepath.Join(root, b.Name())
		if !live {
			if err := os.RemoveAll(dir); err != nil {
				return n, err
			}
			g.log.Info("gateway: removed the object bodies of a deleted ObjectBucket", "uid", b.Name())
			n++
			continue
		}
		files, err := os.ReadDir(dir)
		if err != nil {
			return n, err
		}
		for _, f := range files {
			if fi, err := f.Info(); err == nil && len(f.Name()) > len(objectTempPrefix) && f.Name()[:len(objectTempPrefix)] == objectTempPrefix &&
				time.Since(fi.ModTime()) > objectTempMaxAge {
				g.removeFiles(b.Name(), f.Name())
			}
		}
	}
	return n, nil
}
