package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/takoform/takoform/host/store"
)

// edge.objects limits of the v1alpha1 family and the host's, enforced
// exactly (spec/runtime-v1.md §5.2).
const (
	MaxObjectKeyBytes         = 1024
	MaxObjectSinglePut        = 314572800
	MaxObjectBytes            = 5368709120
	MaxObjectParts            = 10000
	MinObjectPartBytes        = 5242880
	MaxObjectListLimit        = 1000
	MaxObjectDelimiter        = 16
	MaxObjectContentType      = 1024
	ObjectHeader              = "Takoform-Object" // base64 of the get answer's JSON members
	objectTempMaxAge          = time.Hour
	DefaultObjectStorageBytes = 10 << 30
	objectFilePrefix          = "o-"
	objectPartPrefix          = "p-"
	objectTempPrefix          = "tmp-"
	objectCursorKindPrefix    = "objects\x00"
)

// objectFiles holds object bodies: DATA/objects/<bucket UID>/<file>, 0600
// in 0700 directories. A body is written to a temp file while it is
// counted and hashed, renamed into place, then named by its row in the
// store; a replaced or deleted body's file is removed after the commit.
// Writes of one key (and of one upload) take a lock, so a conditional put
// reads and writes its row with no other write of that key between
// (and, in the store, store.Objects.LockObject serializes them across
// replicas: repo decision 0061).
type objectLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
	users map[string]int
}

func (l *objectLocks) lock(name string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks, l.users = map[string]*sync.Mutex{}, map[string]int{}
	}
	m := l.locks[name]
	if m == nil {
		m = &sync.Mutex{}
		l.locks[name] = m
	}
	l.users[name]++
	l.mu.Unlock()
	m.Lock()
	return func() {
		m.Unlock()
		l.mu.Lock()
		if l.users[name]--; l.users[name] == 0 {
			delete(l.locks, name)
			delete(l.users, name)
		}
		l.mu.Unlock()
	}
}

func (g *Gateway) bucketDir(bucket string) string { return filepath.Join(g.dataDir, "objects", bucket) }

func randomName(prefix string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return prefix + hex.EncodeToString(b), nil
}

// written is a body stored in a file of the bucket's directory.
type written struct {
	file string
	size int64
	etag string
}

// writeBody streams r into a new file of bucket's directory, counting and
// hashing: more than max bytes fails value_too_large, a count different
// from declared (≥ 0) or a read error invalid_body; nothing is left
// behind on failure.
func (g *Gateway) writeBody(ctx context.Context, bucket, prefix string, r io.Reader, declared, max int64) (*written, *Error) {
	if g.chunks != nil {
		return g.writeChunks(ctx, bucket, prefix, r, declared, max)
	}
	dir := g.bucketDir(bucket)
	if err := ensureDir(dir); err != nil {
		return nil, unavailable(err)
	}
	tmpName, err := randomName(objectTempPrefix)
	if err != nil {
		return nil, unavailable(err)
	}
	tmp := filepath.Join(dir, tmpName)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, unavailable(err)
	}
	keep := false
	defer func() {
		if !keep {
			g.delivered(errors.Join(f.Close(), os.Remove(tmp)))
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, max+1))
	switch {
	case err != nil:
		return nil, errorf(http.StatusBadRequest, "invalid_body", "the body failed while it was read: %v; nothing was stored", err)
	case n > max:
		return nil, errorf(http.StatusRequestEntityTooLarge, "value_too_large", "a body is at most %d bytes here; nothing was stored", max)
	case declared >= 0 && n != declared:
		return nil, errorf(http.StatusBadRequest, "invalid_body", "the body carried %d bytes but contentLength declared %d; nothing was stored", n, declared)
	}
	if err := f.Sync(); err != nil {
		return nil, unavailable(err)
	}
	if err := f.Close(); err != nil {
		return nil, unavailable(err)
	}
	name, err := randomName(prefix)
	if err != nil {
		return nil, unavailable(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return nil, unavailable(err)
	}
	keep = true
	return &written{file: name, size: n, etag: hex.EncodeToString(h.Sum(nil))}, nil
}

// removeFiles deletes bodies that no row names any more: their chunks on
// a store that holds bodies (and a file of the same name, written before
// it did, when there is a data directory), else their files.
func (g *Gateway) removeFiles(bucket string, files ...string) {
	for _, f := range files {
		if f == "" {
			continue
		}
		if g.chunks != nil {
			if err := g.chunks.DeleteObjectBody(context.Background(), bucket, f); err != nil {
				g.log.Warn("gateway: an object body was not removed (the sweep will)", "bucket", bucket, "body", f, "err", err)
			}
			if g.dataDir == "" {
				continue
			}
		}
		if err := os.Remove(filepath.Join(g.bucketDir(bucket), f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			g.log.Warn("gateway: an object body was not removed", "bucket", bucket, "file", f, "err", err)
		}
	}
}

type objectHandler struct {
	g      *Gateway
	tenant string
}

// checkObjectKey applies the key rule: 1..maxBytes (1024, or 979 in the
// v1beta1 group) bytes of well-formed UTF-8.
func checkObjectKey(k string, maxBytes int) *Error {
	switch {
	case k == "":
		return errorf(http.StatusBadRequest, "invalid_key", "an object key is 1 to %d UTF-8 bytes; this one is empty", maxBytes)
	case !utf8.ValidString(k):
		return errorf(http.StatusBadRequest, "invalid_key", "an object key is a well-formed Unicode string; this one holds a lone surrogate or bytes that are not UTF-8")
	case len(k) > maxBytes:
		return errorf(http.StatusBadRequest, "invalid_key", "an object key is at most %d UTF-8 bytes; this one has %d", maxBytes, len(k))
	}
	return nil
}

// args reads the request's binding UID, its key (when withKey), and the
// query parameters allowed; anything else is invalid_argument.
func (h *objectHandler) args(w http.ResponseWriter, r *http.Request, withKey bool, allowed ...string) (uid, key string, q map[string]string, ok bool) {
	uid, e := h.g.bindingUID(r, h.tenant, KindBucket)
	if e != nil {
		h.g.writeError(w, e)
		return "", "", nil, false
	}
	q = map[string]string{}
	for name, vals := range r.URL.Query() {
		if len(vals) != 1 || !(contains(allowed, name) || (withKey && name == "key")) {
			h.g.writeError(w, invalidArgument("this call takes %s, each at most once; not %q", strings.Join(allowed, ", "), name))
			return "", "", nil, false
		}
		q[name] = vals[0]
	}
	l, err := h.g.limitsFor(r.Context(), uid)
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return "", "", nil, false
	}
	if withKey {
		key = q["key"]
		if e := checkObjectKey(key, l.objectKeyBytes); e != nil {
			h.g.writeError(w, e)
			return "", "", nil, false
		}
	}
	if prefix, has := q["prefix"]; has && (!utf8.ValidString(prefix) || len(prefix) > l.objectKeyBytes) {
		h.g.writeError(w, invalidArgument("prefix is a well-formed string of at most %d UTF-8 bytes", l.objectKeyBytes))
		return "", "", nil, false
	}
	return uid, key, q, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// bucket resolves uid as a live ObjectBucket of the tenant.
func (h *objectHandler) bucket(r *http.Request, uid string) error {
	return h.g.store.View(r.Context(), func(tx store.Tx) error {
		if e := h.g.checkBinding(tx, h.tenant, KindBucket, uid); e != nil {
			return e
		}
		return nil
	})
}

type objectInfo struct {
	Size             int64             `json:"size"`
	ETag             string            `json:"etag"`
	ContentType      string            `json:"contentType,omitempty"`
	UploadedAtMillis int64             `json:"uploadedAtMillis"`
	Partial          *bool             `json:"partial,omitempty"`
	Range            *map[string]int64 `json:"range,omitempty"`
}

func info(o *store.Object) objectInfo {
	return objectInfo{Size: o.Size, ETag: o.ETag, ContentType: o.ContentType, UploadedAtMillis: o.UploadedAt.UnixMilli()}
}

func (h *objectHandler) read(r *http.Request, uid, key string) (*store.Object, error) {
	var o *store.Object
	err := h.g.store.View(r.Context(), func(tx store.Tx) error {
		if e := h.g.checkBinding(tx, h.tenant, KindBucket, uid); e != nil {
			return e
		}
		var err error
		o, err = tx.Object(uid, key)
		if errors.Is(err, store.ErrNotFound) {
			o, err = nil, nil
		}
		return err
	})
	return o, err
}

func (h *objectHandler) head(w http.ResponseWriter, r *http.Request) {
	uid, key, _, ok := h.args(w, r, true)
	if !ok {
		return
	}
	o, err := h.read(r, uid, key)
	switch {
	case err != nil:
		h.g.fail(w, r, h.tenant, err)
	case o == nil:
		h.g.writeError(w, errorf(http.StatusNotFound, "not_found", "no object is stored under this key"))
	default:
		h.g.writeJSON(w, info(o))
	}
}

func (h *objectHandler) get(w http.ResponseWriter, r *http.Request) {
	uid, key, q, ok := h.args(w, r, true, "offset", "length", "ifMatch", "ifNoneMatch")
	if !ok {
		return
	}
	var offset, length int64 = 0, -1
	ranged := false
	if s, has := q["offset"]; has {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			h.g.writeError(w, invalidArgument("range.offset is an integer ≥ 0"))
			return
		}
		offset, ranged = n, true
	}
	if s, has := q["length"]; has {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || !ranged {
			h.g.writeError(w, invalidArgument("range.length is an integer ≥ 0 beside range.offset"))
			return
		}
		length = n
	}
	for attempt := 0; ; attempt++ {
		o, err := h.read(r, uid, key)
		if err != nil {
			h.g.fail(w, r, h.tenant, err)
			return
		}
		if o == nil {
			h.g.writeError(w, errorf(http.StatusNotFound, "not_found", "no object is stored under this key"))
			return
		}
		if m, has := q["ifMatch"]; has && m != o.ETag {
			h.g.writeError(w, errorf(http.StatusPreconditionFailed, "precondition_failed", "ifMatch names etag %q but the object's is %q", m, o.ETag))
			return
		}
		if m, has := q["ifNoneMatch"]; has && (m == o.ETag || m == "*") {
			h.g.writeError(w, errorf(http.StatusPreconditionFailed, "precondition_failed", "ifNoneMatch matches the object's etag %q", o.ETag))
			return
		}
		if ranged && offset >= o.Size {
			h.g.writeError(w, errorf(http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable", "range.offset %d is not before the object's size %d", offset, o.Size))
			return
		}
		n := o.Size - offset
		if length >= 0 && length < n {
			n = length
		}
		f, err := h.g.openBody(r.Context(), uid, o.File, offset, n)
		if errors.Is(err, os.ErrNotExist) && attempt < 3 {
			continue // replaced between the read and the open: read again
		}
		if err != nil {
			h.g.fail(w, r, h.tenant, err)
			return
		}
		i := info(o)
		partial := ranged && (offset > 0 || n < o.Size)
		i.Partial = &partial
		if ranged {
			i.Range = &map[string]int64{"offset": offset, "length": n}
		}
		meta, err := json.Marshal(i)
		if err != nil {
			h.g.fail(w, r, h.tenant, errors.Join(err, f.Close()))
			return
		}
		w.Header().Set(ObjectHeader, base64.StdEncoding.EncodeToString(meta))
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		_, err = io.Copy(w, f)
		h.g.delivered(errors.Join(err, f.Close()))
		return
	}
}

func (h *objectHandler) put(w http.ResponseWriter, r *http.Request) {
	uid, key, q, ok := h.args(w, r, true, "contentType", "ifMatch", "ifNoneMatch", "contentLength", "staged", "size")
	if !ok {
		return
	}
	if ct := q["contentType"]; utf8.RuneCountInString(ct) > MaxObjectContentType {
		h.g.writeError(w, invalidArgument("contentType is at most %d characters", MaxObjectContentType))
		return
	}
	if m, has := q["ifNoneMatch"]; has && m != "*" {
		h.g.writeError(w, invalidArgument(`put takes ifNoneMatch "*" only (create when absent)`))
		return
	}
	declared := int64(-1)
	if s, has := q["contentLength"]; has {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			h.g.writeError(w, invalidArgument("contentLength is an integer ≥ 0"))
			return
		}
		if n > MaxObjectSinglePut {
			h.g.writeError(w, errorf(http.StatusRequestEntityTooLarge, "value_too_large", "a put carries at most %d bytes; contentLength declares %d", MaxObjectSinglePut, n))
			return
		}
		declared = n
	}
	if err := h.bucket(r, uid); err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	body, e := h.body(r, uid, q, declared, objectFilePrefix)
	if e != nil {
		h.g.fail(w, r, h.tenant, e)
		return
	}
	o := &store.Object{Tenant: h.tenant, Bucket: uid, Key: key, File: body.file, Size: body.size, ETag: body.etag,
		ContentType: q["contentType"], UploadedAt: h.g.now().Truncate(time.Millisecond)}
	_, ifMatch := q["ifMatch"]
	_, ifNoneMatch := q["ifNoneMatch"]
	old, err := h.commit(r, o, ifMatch, q["ifMatch"], ifNoneMatch)
	if err != nil {
		h.g.removeFiles(uid, body.file)
		h.g.fail(w, r, h.tenant, err)
		return
	}
	h.g.removeFiles(uid, old)
	h.g.writeJSON(w, map[string]any{"etag": o.ETag, "size": o.Size})
}

// commit stores o under the key's lock, checking the preconditions and
// the tenant's object storage, and returns the replaced body's file.
func (h *objectHandler) commit(r *http.Request, o *store.Object, ifMatch bool, etag string, ifNoneMatch bool, also ...func(store.Tx) error) (string, error) {
	unlock := h.g.objLocks.lock(o.Bucket + "\x00" + o.Key)
	defer unlock()
	old := ""
	err := h.g.store.Update(r.Context(), func(tx store.Tx) error {
		old = ""
		if e := h.g.checkBinding(tx, h.tenant, KindBucket, o.Bucket); e != nil {
			return e
		}
		if err := tx.LockObject(o.Bucket, o.Key); err != nil {
			return err
		}
		prev, err := tx.Object(o.Bucket, o.Key)
		if errors.Is(err, store.ErrNotFound) {
			prev, err = nil, nil
		}
		if err != nil {
			return err
		}
		switch {
		case ifNoneMatch && prev != nil:
			return errorf(http.StatusPreconditionFailed, "precondition_failed", `ifNoneMatch "*": an object is already stored under this key`)
		case ifMatch && (prev == nil || prev.ETag != etag):
			return errorf(http.StatusPreconditionFailed, "precondition_failed", "ifMatch names etag %q but the key holds %s", etag, describe(prev))
		}
		for _, fn := range also {
			if err := fn(tx); err != nil {
				return err
			}
		}
		if err := tx.PutObject(o); err != nil {
			return err
		}
		if err := h.g.checkObjectStorage(tx, h.tenant); err != nil {
			return err
		}
		if prev != nil {
			old = prev.File
		}
		return nil
	})
	return old, err
}

func describe(o *store.Object) string {
	if o == nil {
		return "no object"
	}
	return fmt.Sprintf("etag %q", o.ETag)
}

func (g *Gateway) checkObjectStorage(tx store.Tx, tenant string) error {
	u, err := tx.Usage(tenant)
	if err != nil {
		return err
	}
	if u.ObjectBytes > g.objectLimit {
		return errorf(http.StatusRequestEntityTooLarge, "value_too_large",
			"this write would bring the tenant's objects to %d bytes, over the host's limit of %d bytes; delete objects first or ask the host's operator to raise the limit",
			u.ObjectBytes, g.objectLimit)
	}
	return nil
}

func (h *objectHandler) del(w http.ResponseWriter, r *http.Request) {
	uid, key, _, ok := h.args(w, r, true)
	if !ok {
		return
	}
	unlock := h.g.objLocks.lock(uid + "\x00" + key)
	old := ""
	err := h.g.store.Update(r.Context(), func(tx store.Tx) error {
		old = ""
		if e := h.g.checkBinding(tx, h.tenant, KindBucket, uid); e != nil {
			return e
		}
		prev, err := tx.Object(uid, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		old = prev.File
		return tx.DeleteObject(uid, key)
	})
	unlock()
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	h.g.removeFiles(uid, old)
	w.WriteHeader(http.StatusNoContent)
}

func (h *objectHandler) list(w http.ResponseWriter, r *http.Request) {
	uid, _, q, ok := h.args(w, r, false, "prefix", "delimiter", "limit", "cursor")
	if !ok {
		return
	}
	prefix, delim := q["prefix"], q["delimiter"] // args checked the prefix
	if _, has := q["delimiter"]; has && (!utf8.ValidString(delim) || utf8.RuneCountInString(delim) < 1 || utf8.RuneCountInString(delim) > MaxObjectDelimiter) {
		h.g.writeError(w, invalidArgument("delimiter is 1 to %d characters", MaxObjectDelimiter))
		return
	}
	limit := MaxObjectListLimit
	if s, has := q["limit"]; has {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxObjectListLimit {
			h.g.writeError(w, invalidArgument("limit is an integer from 1 to %d", MaxObjectListLimit))
			return
		}
		limit = n
	}
	ckey, err := h.g.kvCursorKey(r)
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	scope := objectCursorKindPrefix + prefix + "\x00" + delim
	after := ""
	if c, has := q["cursor"]; has {
		if after, ok = openCursor(ckey, uid, scope, c); !ok {
			h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_cursor", "this cursor was not issued by a list of this bucket with this prefix and delimiter; send back the cursor a list returned, unchanged"))
			return
		}
	}
	type entry struct {
		Key              string `json:"key"`
		Size             int64  `json:"size"`
		ETag             string `json:"etag"`
		UploadedAtMillis int64  `json:"uploadedAtMillis"`
	}
	ans := struct {
		Objects   []entry  `json:"objects"`
		Prefixes  []string `json:"prefixes,omitempty"`
		Truncated bool     `json:"truncated"`
		Cursor    string   `json:"cursor,omitempty"`
	}{Objects: []entry{}}
	count, last := 0, after
	err = h.g.store.View(r.Context(), func(tx store.Tx) error {
		if e := h.g.checkBinding(tx, h.tenant, KindBucket, uid); e != nil {
			return e
		}
		const page = 256
		for {
			objs, err := tx.ListObjects(uid, prefix, last, page)
			if err != nil {
				return err
			}
			jumped := false
			for _, o := range objs {
				if count == limit {
					ans.Truncated = true
					return nil
				}
				if delim != "" {
					if i := strings.Index(o.Key[len(prefix):], delim); i >= 0 {
						p := o.Key[:len(prefix)+i+len(delim)]
						ans.Prefixes = append(ans.Prefixes, p)
						count++
						// Keys are UTF-8, which never holds the byte 0xFF:
						// every key under p sorts before p+"\xff".
						last, jumped = p+"\xff", true
						break
					}
				}
				ans.Objects = append(ans.Objects, entry{Key: o.Key, Size: o.Size, ETag: o.ETag, UploadedAtMillis: o.UploadedAt.UnixMilli()})
				count++
				last = o.Key
			}
			if !jumped && len(objs) < page {
				return nil
			}
		}
	})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	if ans.Truncated {
		ans.Cursor = sealCursor(ckey, uid, scope, last)
	}
	h.g.writeJSON(w, ans)
}
