package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
)

// edge.kv limits of the v1alpha1 family, enforced exactly
// (spec/runtime-v1.md §5.1, §6); the v1beta1 group's key and prefix limit
// is MaxKVKeyBytesV1beta1 (spec/lane-v1beta1.md §7.1).
const (
	MaxKVKeyBytes         = 512
	MaxKVValueBytes       = 26214400
	MaxKVMetadataBytes    = 1024 // canonical JSON (RFC 8785)
	MaxKVMetadataEntries  = 64
	MaxKVMetadataName     = 256  // characters
	MaxKVMetadataValue    = 8192 // characters
	MaxKVListLimit        = 1000 // also the default
	MaxKVPrefixChars      = 512
	MaxKVCursorChars      = 4096
	MinKVTTLSeconds       = 60
	MaxKVTTLSeconds       = 315360000
	KVMetadataHeader      = "Takoform-KV-Metadata" // base64 of the metadata's JSON, both ways
	kvCursorSetting       = "runtime.kv-cursor-key"
	kvCursorVersionPrefix = "k1."
)

type kvHandler struct {
	g      *Gateway
	tenant string
}

// checkKey applies the key rule: 1..maxBytes (512, or 467 in the v1beta1
// group) bytes of well-formed UTF-8 (a lone surrogate cannot be UTF-8, so
// it fails here too).
func checkKey(k string, maxBytes int) *Error {
	switch {
	case k == "":
		return errorf(http.StatusBadRequest, "invalid_key", "a key is 1 to %d UTF-8 bytes; this one is empty", maxBytes)
	case !utf8.ValidString(k):
		return errorf(http.StatusBadRequest, "invalid_key", "a key is a well-formed Unicode string; this one holds a lone surrogate or bytes that are not UTF-8")
	case len(k) > maxBytes:
		return errorf(http.StatusBadRequest, "invalid_key", "a key is at most %d UTF-8 bytes; this one has %d", maxBytes, len(k))
	}
	return nil
}

func queryKey(r *http.Request, l groupLimits) (string, *Error) {
	q := r.URL.Query()
	if len(q["key"]) != 1 {
		return "", invalidArgument("exactly one key query parameter is required")
	}
	k := q.Get("key")
	return k, checkKey(k, l.kvKeyBytes)
}

// begin reads the binding UID and the limits of its group; the store
// transaction checks the binding.
func (h *kvHandler) begin(w http.ResponseWriter, r *http.Request) (string, groupLimits, bool) {
	uid, e := h.g.bindingUID(r, h.tenant, KindKV)
	if e != nil {
		h.g.writeError(w, e)
		return "", groupLimits{}, false
	}
	l, err := h.g.limitsFor(r.Context(), uid)
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return "", groupLimits{}, false
	}
	return uid, l, true
}

// beginKey is begin for a call on one key: the key query parameter,
// checked against the group's limits, too.
func (h *kvHandler) beginKey(w http.ResponseWriter, r *http.Request) (uid, key string, ok bool) {
	uid, l, ok := h.begin(w, r)
	if !ok {
		return "", "", false
	}
	key, e := queryKey(r, l)
	if e != nil {
		h.g.writeError(w, e)
		return "", "", false
	}
	return uid, key, true
}

func (h *kvHandler) get(w http.ResponseWriter, r *http.Request) {
	uid, key, ok := h.beginKey(w, r)
	if !ok {
		return
	}
	var entry *store.KVEntry
	err := h.g.store.View(r.Context(), func(tx store.Tx) error {
		if e := h.g.checkBinding(tx, h.tenant, KindKV, uid); e != nil {
			return e
		}
		var err error
		entry, err = tx.KVGet(uid, key, h.g.now())
		if errors.Is(err, store.ErrNotFound) {
			entry, err = nil, nil
		}
		return err
	})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	if entry == nil {
		h.g.writeError(w, errorf(http.StatusNotFound, "not_found", "no value is stored under this key"))
		return
	}
	if entry.Metadata != nil {
		w.Header().Set(KVMetadataHeader, base64.StdEncoding.EncodeToString(entry.Metadata))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(entry.Value)))
	_, err = w.Write(entry.Value)
	h.g.delivered(err)
}

func (h *kvHandler) put(w http.ResponseWriter, r *http.Request) {
	uid, key, ok := h.beginKey(w, r)
	if !ok {
		return
	}
	var expires time.Time
	if ttl := r.URL.Query()["ttl"]; len(ttl) > 0 {
		n, err := strconv.ParseInt(ttl[0], 10, 64)
		if len(ttl) != 1 || err != nil || n < MinKVTTLSeconds || n > MaxKVTTLSeconds {
			h.g.writeError(w, invalidArgument("expirationTtlSeconds is an integer from %d to %d", MinKVTTLSeconds, MaxKVTTLSeconds))
			return
		}
		expires = h.g.now().Add(time.Duration(n) * time.Second)
	}
	meta, e := parseMetadata(r.Header.Values(KVMetadataHeader))
	if e != nil {
		h.g.writeError(w, e)
		return
	}
	if r.ContentLength > MaxKVValueBytes {
		h.g.writeError(w, valueTooLarge(r.ContentLength))
		return
	}
	value, err := io.ReadAll(io.LimitReader(r.Body, MaxKVValueBytes+1))
	if err != nil {
		h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_value", "the value could not be read: %v", err))
		return
	}
	if len(value) > MaxKVValueBytes {
		h.g.writeError(w, valueTooLarge(-1))
		return
	}
	entry := &store.KVEntry{Tenant: h.tenant, Namespace: uid, Key: key, Value: value, Metadata: meta, ExpiresAt: expires}
	err = h.g.store.Update(r.Context(), func(tx store.Tx) error {
		if e := h.g.checkBinding(tx, h.tenant, KindKV, uid); e != nil {
			return e
		}
		if err := tx.KVPut(entry); err != nil {
			return err
		}
		u, err := tx.Usage(h.tenant)
		if err != nil {
			return err
		}
		if u.KVBytes > h.g.kvLimit {
			return errorf(http.StatusRequestEntityTooLarge, "value_too_large",
				"this put would bring the tenant's KV storage to %d bytes, over the host's limit of %d bytes; delete entries first or ask the host's operator to raise the limit",
				u.KVBytes, h.g.kvLimit)
		}
		return nil
	})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func valueTooLarge(n int64) *Error {
	if n < 0 {
		return errorf(http.StatusRequestEntityTooLarge, "value_too_large", "a value is at most %d bytes; this one is longer", MaxKVValueBytes)
	}
	return errorf(http.StatusRequestEntityTooLarge, "value_too_large", "a value is at most %d bytes; this one has %d", MaxKVValueBytes, n)
}

// parseMetadata decodes the metadata header (base64 of a JSON object of
// strings) to its canonical JSON, nil when absent, applying the metadata
// rules: at most 64 entries, names at most 256 characters, values at most
// 8192, canonical JSON at most 1024 bytes, else metadata_too_large.
func parseMetadata(vals []string) ([]byte, *Error) {
	if len(vals) == 0 {
		return nil, nil
	}
	if len(vals) > 1 {
		return nil, invalidArgument("one metadata header at most")
	}
	raw, err := base64.StdEncoding.DecodeString(vals[0])
	if err != nil {
		return nil, invalidArgument("the metadata header is not base64")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, invalidArgument("metadata is an object whose values are strings")
	}
	if len(m) > MaxKVMetadataEntries {
		return nil, errorf(http.StatusBadRequest, "metadata_too_large", "metadata holds at most %d entries; this one has %d", MaxKVMetadataEntries, len(m))
	}
	for name, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, invalidArgument("metadata is an object whose values are strings; %q is not a string", name)
		}
		if n := utf8.RuneCountInString(name); n > MaxKVMetadataName {
			return nil, errorf(http.StatusBadRequest, "metadata_too_large", "a metadata name is at most %d characters; one has %d", MaxKVMetadataName, n)
		}
		if n := utf8.RuneCountInString(s); n > MaxKVMetadataValue {
			return nil, errorf(http.StatusBadRequest, "metadata_too_large", "a metadata value is at most %d characters; %q has %d", MaxKVMetadataValue, name, n)
		}
	}
	canon, err := ijson.Canonical(raw)
	if err != nil {
		return nil, invalidArgument("metadata is not valid I-JSON: %v", err)
	}
	if len(canon) > MaxKVMetadataBytes {
		return nil, errorf(http.StatusBadRequest, "metadata_too_large", "metadata is at most %d bytes of canonical JSON; this one has %d", MaxKVMetadataBytes, len(canon))
	}
	return canon, nil
}

func (h *kvHandler) del(w http.ResponseWriter, r *http.Request) {
	uid, key, ok := h.beginKey(w, r)
	if !ok {
		return
	}
	err := h.g.store.Update(r.Context(), func(tx store.Tx) error {
		if e := h.g.checkBinding(tx, h.tenant, KindKV, uid); e != nil {
			return e
		}
		return tx.KVDelete(uid, key)
	})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type kvListAnswer struct {
	Keys         []kvName `json:"keys"`
	ListComplete bool     `json:"listComplete"`
	Cursor       string   `json:"cursor,omitempty"`
}

type kvName struct {
	Name string `json:"name"`
}

func (h *kvHandler) list(w http.ResponseWriter, r *http.Request) {
	uid, l, ok := h.begin(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	for name, vals := range q {
		if len(vals) != 1 || (name != "prefix" && name != "limit" && name != "cursor") {
			h.g.writeError(w, invalidArgument("list takes prefix, limit and cursor, each at most once"))
			return
		}
	}
	prefix := q.Get("prefix")
	if !utf8.ValidString(prefix) || utf8.RuneCountInString(prefix) > min(MaxKVPrefixChars, l.kvKeyBytes) {
		h.g.writeError(w, invalidArgument("prefix is a well-formed string of at most %d characters", min(MaxKVPrefixChars, l.kvKeyBytes)))
		return
	}
	limit := MaxKVListLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxKVListLimit {
			h.g.writeError(w, invalidArgument("limit is an integer from 1 to %d", MaxKVListLimit))
			return
		}
		limit = n
	}
	key, err := h.g.kvCursorKey(r)
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	after := ""
	if c, present := q["cursor"]; present {
		var ok bool
		if after, ok = openCursor(key, uid, prefix, c[0]); !ok {
			h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_cursor", "this cursor was not issued by a list of this namespace with this prefix; send back the cursor a list returned, unchanged"))
			return
		}
	}
	var keys []string
	err = h.g.store.View(r.Context(), func(tx store.Tx) error {
		if e := h.g.checkBinding(tx, h.tenant, KindKV, uid); e != nil {
			return e
		}
		var err error
		keys, err = tx.KVList(uid, prefix, after, h.g.now(), limit+1)
		return err
	})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	ans := kvListAnswer{Keys: []kvName{}, ListComplete: len(keys) <= limit}
	if !ans.ListComplete {
		keys = keys[:limit]
		ans.Cursor = sealCursor(key, uid, prefix, keys[len(keys)-1])
	}
	for _, k := range keys {
		ans.Keys = append(ans.Keys, kvName{Name: k})
	}
	h.g.writeJSON(w, ans)
}

// kvCursorKey is the host's cursor MAC key, made once and kept in the
// store's settings so every replica issues and accepts the same cursors.
func (g *Gateway) kvCursorKey(r *http.Request) ([]byte, error) {
	g.keyMu.Lock()
	defer g.keyMu.Unlock()
	if g.cursorKey != nil {
		return g.cursorKey, nil
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	var key []byte
	err := g.store.Update(r.Context(), func(tx store.Tx) error {
		var err error
		key, err = tx.PutSetting(kvCursorSetting, fresh)
		return err
	})
	if err != nil {
		return nil, err
	}
	g.cursorKey = key
	return key, nil
}

// A cursor is "k1." + base64url(last key) + "." + base64url(MAC), the MAC
// (HMAC-SHA-256, 16 bytes) binding namespace, prefix and last key, so one
// not issued for this listing fails invalid_cursor (spec/runtime-v1.md
// §5.1). It is at most 4 + 684 + 1 + 22 characters.
func cursorMAC(key []byte, ns, prefix, last string) []byte {
	m := hmac.New(sha256.New, key)
	for _, s := range []string{ns, prefix, last} {
		m.Write([]byte(strconv.Itoa(len(s))))
		m.Write([]byte{':'})
		m.Write([]byte(s))
	}
	return m.Sum(nil)[:16]
}

func sealCursor(key []byte, ns, prefix, last string) string {
	enc := base64.RawURLEncoding
	return kvCursorVersionPrefix + enc.EncodeToString([]byte(last)) + "." + enc.EncodeToString(cursorMAC(key, ns, prefix, last))
}

func openCursor(key []byte, ns, prefix, c string) (string, bool) {
	if len(c) > MaxKVCursorChars || !strings.HasPrefix(c, kvCursorVersionPrefix) {
		return "", false
	}
	body, macText, ok := strings.Cut(strings.TrimPrefix(c, kvCursorVersionPrefix), ".")
	if !ok {
		return "", false
	}
	enc := base64.RawURLEncoding
	last, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(macText)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, cursorMAC(key, ns, prefix, string(last))) {
		return "", false
	}
	return string(last), true
}
