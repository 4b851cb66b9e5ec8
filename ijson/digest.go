package ijson

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gowebpki/jcs"
)

// DigestPrefix starts every Takoform digest.
const DigestPrefix = "sha256:"

// Canonical returns the RFC 8785 (JCS) canonical bytes of the I-JSON
// document data. Errors are *Error (the document is not strict I-JSON) or a
// canonicalisation error. A document the Reader decodes is written by
// appendCanonical; anything else by the library (jcs.Transform).
func Canonical(data []byte) ([]byte, error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	if v, ok := decodeFast(data); ok {
		if out, ok := appendCanonical(nil, v); ok {
			return out, nil
		}
	}
	out, err := jcs.Transform(data)
	if err != nil {
		return nil, fmt.Errorf("canonicalise JSON (RFC 8785): %w", err)
	}
	return out, nil
}

// Digest is THE Takoform digest (spec/host-api-v1alpha3.md §1.3): "sha256:" followed by the
// lowercase hex SHA-256 of the RFC 8785 canonical bytes of the document
// data. Used for schema digests of Form, Interface and Binding definitions,
// spec digests, manifest digests and package digests.
func Digest(data []byte) (string, error) {
	c, err := Canonical(data)
	if err != nil {
		return "", err
	}
	return SumDigest(c), nil
}

// DigestValue marshals v with encoding/json and returns Digest of the result.
func DigestValue(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode value for digest: %w", err)
	}
	return Digest(b)
}

// SumDigest returns "sha256:" + lowercase hex SHA-256 of b as it is: for
// bytes already canonical, and for artifact blobs.
func SumDigest(b []byte) string {
	sum := sha256.Sum256(b)
	var out [len(DigestPrefix) + 2*sha256.Size]byte
	copy(out[:], DigestPrefix)
	hex.Encode(out[len(DigestPrefix):], sum[:])
	return string(out[:])
}

// ValidDigest reports whether s has the digest grammar ^sha256:[0-9a-f]{64}$,
// matched by hand: it runs several times per request (decision
// spec/decisions/0036-hand-written-grammars.md; TestValidDigestAgreement).
func ValidDigest(s string) bool {
	hexPart, ok := strings.CutPrefix(s, DigestPrefix)
	if !ok || len(hexPart) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		if c := hexPart[i]; !('0' <= c && c <= '9') && !('a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
