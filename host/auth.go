package host

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// Caller is the authenticated identity of one request: the tenant is part
// of every address and handle; some handles also bind the principal
// (spec/host-api-v1alpha3.md §1.7, §2.3).
type Caller struct {
	Tenant    string
	Principal string
}

// Token maps one bearer token, kept only as its SHA-256, to a caller.
type Token struct {
	SHA256    string `json:"sha256"` // lowercase hex SHA-256 of the token bytes
	Tenant    string `json:"tenant"`
	Principal string `json:"principal"`
}

// TokensFile is the JSON document --tokens points at:
// {"tokens":[{"sha256":"<hex>","tenant":"t","principal":"p"}]}.
type TokensFile struct {
	Tokens []Token `json:"tokens"`
}

// HashToken returns the lowercase hex SHA-256 a tokens file stores.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// LoadTokens reads and checks a tokens file; errors name the file and the
// entry that is wrong.
func LoadTokens(path string) ([]Token, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tokens file: %w", err)
	}
	var f TokensFile
	if err := ijson.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	seen := map[string]bool{}
	for i, t := range f.Tokens {
		raw, err := hex.DecodeString(t.SHA256)
		if err != nil || len(raw) != sha256.Size || strings.ToLower(t.SHA256) != t.SHA256 {
			return nil, fmt.Errorf("tokens file %s: /tokens/%d/sha256 is not 64 lowercase hex digits (use `takoform host token-hash`)", path, i)
		}
		if t.SHA256 == HashToken("") {
			return nil, fmt.Errorf("tokens file %s: /tokens/%d is the hash of the empty token, which no request can present; hash a real token", path, i)
		}
		if t.Tenant == "" || t.Principal == "" {
			return nil, fmt.Errorf("tokens file %s: /tokens/%d needs a tenant and a principal", path, i)
		}
		if seen[t.SHA256] {
			return nil, fmt.Errorf("tokens file %s: /tokens/%d repeats a token", path, i)
		}
		seen[t.SHA256] = true
	}
	return f.Tokens, nil
}

// SetTokens replaces the credentials the host accepts, atomically: a
// request authenticates against the old set or the new one, never a mix.
// The caller checks the tokens (LoadTokens); the host reloads its tokens
// file on SIGHUP with it (decision spec/decisions/0008-deployable-host.md).
func (s *Server) SetTokens(tokens []Token) { s.auth.set(tokens) }

// authenticator resolves bearer tokens; every entry is compared in
// constant time so the answer time does not reveal which entry matched.
type authenticator struct {
	table atomic.Pointer[tokenTable]
}

type tokenTable struct {
	hashes [][]byte
	who    []Caller
	// verified maps a token this table has already matched to its caller,
	// so a client's every request does not hash its token again (repo
	// decision 0019). Only matches are kept, so it holds at most one entry per
	// configured token; a new table (SetTokens) starts empty, so a revoked
	// token stops working at once.
	mu       sync.RWMutex
	verified map[string]Caller
}

func newAuthenticator(tokens []Token) *authenticator {
	a := &authenticator{}
	a.set(tokens)
	return a
}

func (a *authenticator) set(tokens []Token) {
	t := &tokenTable{verified: make(map[string]Caller, len(tokens))}
	for _, tok := range tokens {
		raw, err := hex.DecodeString(tok.SHA256)
		if err != nil {
			continue // not a hash (LoadTokens refuses it): it matches no token
		}
		t.hashes = append(t.hashes, raw)
		t.who = append(t.who, Caller{Tenant: tok.Tenant, Principal: tok.Principal})
	}
	a.table.Store(t)
}

// authenticateRequest returns the caller named by a request's one
// Authorization header. More than one is refused, never first-wins: the
// request would name two credentials (spec/host-api-v1alpha3.md §2.3).
// Each refusal is unauthenticated and a fresh *wire.Error.
func (a *authenticator) authenticateRequest(h http.Header) (Caller, error) {
	values := h["Authorization"]
	if len(values) > 1 {
		return Caller{}, wire.Errorf(wire.Unauthenticated, "the request carries %d Authorization headers; send exactly one (Authorization: Bearer <token>)", len(values)).WithHostCode("authorization_repeated")
	}
	var header string
	if len(values) == 1 {
		header = values[0]
	}
	c, ok := a.authenticate(header)
	if !ok {
		return Caller{}, wire.Errorf(wire.Unauthenticated, "a valid bearer token is required (Authorization: Bearer <token>)")
	}
	return c, nil
}

// authenticate returns the caller for an Authorization header value, or
// false for a missing, malformed or unknown credential.
func (a *authenticator) authenticate(header string) (Caller, bool) {
	const prefix = "Bearer "
	if len(header) <= len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
		return Caller{}, false
	}
	token := header[len(prefix):]
	t := a.table.Load()
	t.mu.RLock()
	c, ok := t.verified[token]
	t.mu.RUnlock()
	if ok {
		return c, true
	}
	sum := sha256.Sum256([]byte(token))
	match := -1
	for i, h := range t.hashes {
		if subtle.ConstantTimeCompare(sum[:], h) == 1 {
			match = i
		}
	}
	if match < 0 {
		return Caller{}, false
	}
	t.mu.Lock()
	if len(t.verified) < len(t.who) {
		t.verified[strings.Clone(token)] = t.who[match]
	}
	t.mu.Unlock()
	return t.who[match], true
}
