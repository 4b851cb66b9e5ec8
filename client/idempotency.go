package client

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"

	"github.com/go-json-experiment/json/jsontext"
)

// Operation words bound into idempotency keys (spec/host-api-v1alpha3.md §3.5). Resource keys
// use KeyApply, KeyImport, KeyObserve and KeyDelete with IdempotencyKey;
// handle keys use the others with DeriveKey.
const (
	KeyApply       = "apply"
	KeyImport      = "import"
	KeyObserve     = "observe"
	KeyDelete      = "delete"
	KeyCancel      = "operation-cancel"        // DeriveKey(KeyCancel, operationID)
	KeyUploadStart = "artifact-upload-start"   // DeriveKey(KeyUploadStart, manifestDigest, nonce)
	KeyCommit      = "artifact-commit"         // DeriveKey(KeyCommit, uploadID, manifestDigest)
	KeyAbandon     = "artifact-upload-abandon" // DeriveKey(KeyAbandon, uploadID)
)

// KeyPrefix starts every key this client derives.
const KeyPrefix = "takoform-"

// DeriveKey returns "takoform-" + lowercase hex SHA-256 of the RFC 8785
// (JCS) canonical bytes of the JSON array of parts, all strings. Parts are
// expected to be valid UTF-8 (every identity the client sends is); invalid
// bytes are replaced by U+FFFD as encoding/json does.
func DeriveKey(parts ...string) string {
	var buf [512]byte
	canon := buf[:0]
	canon = append(canon, '[')
	for i, p := range parts {
		if i > 0 {
			canon = append(canon, ',')
		}
		// The RFC 8785 §3.2.2.2 string form; invalid UTF-8 (the error) is
		// written as U+FFFD, as documented above.
		canon, _ = jsontext.AppendQuote(canon, p)
	}
	canon = append(canon, ']')
	sum := sha256.Sum256(canon)
	var out [len(KeyPrefix) + 2*sha256.Size]byte
	copy(out[:], KeyPrefix)
	hex.Encode(out[len(KeyPrefix):], sum[:])
	return string(out[:])
}

// IdempotencyKey is the deterministic key of a resource mutation (spec/host-api-v1alpha3.md
// §3.5): DeriveKey(op, apiVersion, kind, name, space, uid, generation,
// bodySha256Hex), where op is KeyApply, KeyImport, KeyObserve or KeyDelete,
// apiVersion and kind are the FormRef's, uid and generation are the fence
// the request carries ("" for a create and a new-adoption import; the
// recorded UID and the fenced generation for update, fenced import,
// observe and delete), and bodySha256Hex is the lowercase hex SHA-256 of
// the exact request body bytes, "" when there is no body (delete,
// observe). The same request therefore always carries the same key, so a
// retry after a lost answer replays instead of executing twice.
func IdempotencyKey(op, apiVersion, kind, name, space, uid, generation string, body []byte) string {
	bodyHex := ""
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		bodyHex = hex.EncodeToString(sum[:])
	}
	return DeriveKey(op, apiVersion, kind, name, space, uid, generation, bodyHex)
}

// nonce returns 128 random bits in hex, for upload-start keys.
func nonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// callScopeKey carries a per-call key scope in a context (WithKeyScope).
type callScopeKey struct{}

// WithKeyScope returns ctx carrying scope, which every resource mutation
// sent under it binds into its idempotency key (after the client's
// KeyScope): DeriveKey(key, scope). The provider gives each logical
// mutation (one Create, Update, Delete or Import call) a fresh random
// scope, so that call's own retries replay while any other mutation, even
// an identical request of another resource in the same run, executes
// (spec/decisions/0006-idempotency-keys-per-mutation.md). An empty scope
// is no scope.
func WithKeyScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, callScopeKey{}, scope)
}

// NewKeyScope returns 128 random bits in hex: a fresh scope for
// WithKeyScope.
func NewKeyScope() string { return nonce() }

// scoped binds the client's KeyScope, then ctx's call scope
// (WithKeyScope), into a resource mutation key.
func (c *Client) scoped(ctx context.Context, key string) string {
	if c.keyScope != "" {
		key = DeriveKey(key, c.keyScope)
	}
	if s, _ := ctx.Value(callScopeKey{}).(string); s != "" {
		key = DeriveKey(key, s)
	}
	return key
}
