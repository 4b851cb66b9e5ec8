package gateway

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/takoform/takoform/wire"
)

// The channel between replicas (repo decision 0063): a replica that does
// not own a SQLiteDatabase forwards the call to the replica that does, at
// POST {Holder}/_takoform/peer/v1/sql/{uid}/{op}?family={v1alpha1|v1beta1}
// (op: execute, query, transaction; the body as the edge.sql route's)
// or .../{uid}/migrate and .../{uid}/ledger (JSON). Every request is
// signed with the store's peer key (store.SQLPages.PeerKey):
// Takoform-Peer-Body-Digest: HEX(SHA-256(body)) and
// Takoform-Peer-Signature: t=UNIX_MS,n=NONCE,s=HEX(HMAC-SHA256(key,
// "POST\n" + request URI + "\n" + t + "\n" + n + "\n" + body digest)),
// NONCE 16 random hex digits, so two equal calls in one millisecond sign
// differently. The owner checks the signature before it reads the body
// (an unsigned request costs it no body), then the body against its
// digest; it refuses a signature more than peerSkew from its clock, or
// one it has already accepted; it never forwards again, answering 421
// when it does not own the database.

// PeerPathPrefix is the path every route between replicas starts with.
const PeerPathPrefix = "/_takoform/peer/v1/"

const (
	peerSignatureHeader = "Takoform-Peer-Signature"
	peerDigestHeader    = "Takoform-Peer-Body-Digest"
	peerSkew            = time.Minute
	peerMaxBody         = 4 * MaxSQLRequestBytes
	ownerTries          = 4
)

// errPeerNotOwner is an owner's 421: the database moved meanwhile.
var errPeerNotOwner = errors.New("the replica named in the lease no longer owns the database")

// peerDown is a forwarded request that never reached its replica (it
// could not be dialed), so nothing of it ran there.
type peerDown struct{ err error }

func (e *peerDown) Error() string { return e.err.Error() }

// onOwner runs here when this replica owns uid (or the host is not
// replicated); when another replica does, there(holder) forwards to it.
// When the replica at the lease's URL does not serve as its owner (it
// cannot be dialed, or answers 421: a process restarted at that URL, or
// another given the same URL), the lease is read again — a clean stop
// released it — and, if the same holder still has it, this replica waits
// for it to lapse and takes the database over (repo decision 0063).
func (f *sqlFiles) onOwner(ctx context.Context, uid string, here func() error, there func(holder string) error) error {
	if f.owner == nil {
		return here()
	}
	var last error
	failed := ""  // the holder whose replica just did not serve as the owner
	suspect := "" // the last such holder, for the refusal
	for range ownerTries {
		err := here()
		var no *notOwner
		if !errors.As(err, &no) {
			return err
		}
		if no.holder == failed {
			f.g.log.Warn("gateway: a SQLite database's owner replica does not serve it; taking the database over when its lease lapses",
				"uid", uid, "owner", peerURL(no.holder), "leaseUntil", no.expires, "err", last)
			wait := min(max(time.Until(no.expires)+50*time.Millisecond, 50*time.Millisecond), f.owner.ttl+time.Second)
			select {
			case <-ctx.Done():
				return unavailable(ctx.Err())
			case <-time.After(wait):
			}
			f.forgetOwner(uid)
			failed = ""
			continue
		}
		err = there(peerURL(no.holder))
		var down *peerDown
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errPeerNotOwner), errors.As(err, &down):
			f.forgetOwner(uid) // read the lease again: it may have been released or moved
			failed, suspect, last = no.holder, no.holder, err
		default:
			return err
		}
	}
	if u := peerURL(suspect); u != "" && u == peerURL(f.owner.holder) {
		f.g.log.Error("gateway: a SQLite database's lease names this replica's own peer URL with another process's token: two replicas were given the same --peer-url", "uid", uid, "peerURL", u)
		return errorf(http.StatusServiceUnavailable, "backend_unavailable",
			"database %s is owned by another process at this replica's own peer URL %s: two replicas were given the same --peer-url; give each replica a URL the others reach it at", uid, u)
	}
	return errorf(http.StatusServiceUnavailable, "backend_unavailable",
		"database %s: its owner replica at %s is alive (it renews its lease) but did not serve the call (%v); try again; if this lasts, check that each replica's --peer-url reaches it from the others", uid, peerURL(suspect), last)
}

// forgetOwner drops the owner a non-owner remembered for uid, so the
// next call reads the lease again.
func (f *sqlFiles) forgetOwner(uid string) {
	f.mu.Lock()
	d := f.dbs[uid]
	f.mu.Unlock()
	if d != nil {
		d.mu.Lock()
		d.other = nil
		d.mu.Unlock()
	}
}

// key returns the store's peer key, read once.
func (o *sqlOwner) peerKey(ctx context.Context) ([]byte, error) {
	o.keyMu.Lock()
	defer o.keyMu.Unlock()
	if o.key == nil {
		k, err := o.pages.PeerKey(ctx)
		if err != nil {
			return nil, err
		}
		o.key = k
	}
	return o.key, nil
}

func bodyDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

func peerSignature(key []byte, uri string, t int64, nonce, digest string) string {
	m := hmac.New(sha256.New, key)
	m.Write(fmt.Appendf(nil, "POST\n%s\n%d\n%s\n%s", uri, t, nonce, digest))
	return hex.EncodeToString(m.Sum(nil))
}

// post sends body to the peer route path (with query) of holder and
// returns the answer: status, content type and body. A request that
// could not be dialed is *peerDown; a 421 is errPeerNotOwner; any other
// transport failure leaves the outcome unknown and says so.
func (o *sqlOwner) post(ctx context.Context, holder, path string, body []byte) (int, string, []byte, error) {
	key, err := o.peerKey(ctx)
	if err != nil {
		return 0, "", nil, unavailable(err)
	}
	u, err := url.Parse(holder)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, "", nil, errorf(http.StatusServiceUnavailable, "backend_unavailable", "the owner replica's peer URL %q is not an http(s) URL; give each replica a reachable --peer-url", holder)
	}
	ref, err := url.Parse(path)
	if err != nil {
		return 0, "", nil, unavailable(err)
	}
	target := u.ResolveReference(ref)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, unavailable(err)
	}
	t := time.Now().UnixMilli()
	nb := make([]byte, 8)
	if _, err := rand.Read(nb); err != nil {
		return 0, "", nil, unavailable(err)
	}
	nonce := hex.EncodeToString(nb)
	digest := bodyDigest(body)
	req.Header.Set(peerDigestHeader, digest)
	req.Header.Set(peerSignatureHeader, fmt.Sprintf("t=%d,n=%s,s=%s", t, nonce, peerSignature(key, target.RequestURI(), t, nonce, digest)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return 0, "", nil, &peerDown{err: err}
		}
		return 0, "", nil, errorf(http.StatusServiceUnavailable, "backend_unavailable",
			"the replica that owns this database (%s) did not answer (%v); the call may or may not have been applied", holder, err)
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxSQLResultBytes+1<<20))
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, "", nil, errorf(http.StatusServiceUnavailable, "backend_unavailable",
			"the replica that owns this database (%s) did not finish its answer (%v); the call may or may not have been applied", holder, err)
	}
	if resp.StatusCode == http.StatusMisdirectedRequest {
		return 0, "", nil, errPeerNotOwner
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return 0, "", nil, errorf(http.StatusServiceUnavailable, "backend_unavailable",
			"the replica that owns this database (%s) refused this replica's signature: %s", holder, bytes.TrimSpace(answer))
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), answer, nil
}

// verify checks r's signature, before its body is read.
func (o *sqlOwner) verify(r *http.Request) error {
	key, err := o.peerKey(r.Context())
	if err != nil {
		return err
	}
	var t int64
	var nonce, sig string
	for part := range strings.SplitSeq(r.Header.Get(peerSignatureHeader), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				t = n
			}
		case "n":
			nonce = v
		case "s":
			sig = v
		}
	}
	if t == 0 || len(nonce) != 16 || sig == "" {
		return fmt.Errorf("no %s header of the form t=UNIX_MS,n=NONCE,s=HEX", peerSignatureHeader)
	}
	at := time.UnixMilli(t)
	if d := time.Since(at); d > peerSkew || d < -peerSkew {
		return fmt.Errorf("the signature's time %s is more than %s from this replica's clock; synchronize the replicas' clocks", at.UTC().Format(time.RFC3339), peerSkew)
	}
	want := peerSignature(key, r.URL.RequestURI(), t, nonce, r.Header.Get(peerDigestHeader))
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return errors.New("the signature does not match: the sender does not hold this store's peer key")
	}
	o.seenMu.Lock()
	defer o.seenMu.Unlock()
	if _, dup := o.seen[sig]; dup {
		return errors.New("this signed request was already received once")
	}
	now := time.Now()
	if len(o.seen) >= 1024 {
		for s, until := range o.seen {
			if now.After(until) {
				delete(o.seen, s)
			}
		}
	}
	o.seen[sig] = at.Add(2 * peerSkew)
	return nil
}

// PeerHandler answers the routes other replicas forward SQL calls to
// (PeerPathPrefix); nil when the gateway does not serve SQLiteDatabases
// with one owner per database (WithSQLOwnership).
func (g *Gateway) PeerHandler() http.Handler {
	if g.sql.owner == nil {
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PeerPathPrefix+"sql/{uid}/{op}", g.servePeer)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		g.writeError(w, &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no peer route " + r.Method + " " + r.URL.Path})
	})
	return mux
}

func (g *Gateway) servePeer(w http.ResponseWriter, r *http.Request) {
	o := g.sql.owner
	if err := o.verify(r); err != nil {
		g.log.Warn("gateway: a forwarded SQL call was refused", "remote", r.RemoteAddr, "err", err)
		g.writeError(w, &Error{Status: http.StatusUnauthorized, Code: "unauthenticated", Message: err.Error()})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, peerMaxBody+1))
	if err != nil || len(body) > peerMaxBody {
		g.writeError(w, invalidArgument("the forwarded request could not be read whole (at most %d bytes): %v", peerMaxBody, err))
		return
	}
	if bodyDigest(body) != r.Header.Get(peerDigestHeader) {
		g.writeError(w, &Error{Status: http.StatusUnauthorized, Code: "unauthenticated", Message: "the body does not match its signed digest"})
		return
	}
	uid, op := r.PathValue("uid"), r.PathValue("op")
	var out error
	switch op {
	case "execute", "query", "transaction":
		fam := r.URL.Query().Get("family")
		if fam != familyAlpha && fam != familyBeta {
			g.writeError(w, invalidArgument("family is %s or %s, not %q", familyAlpha, familyBeta, fam))
			return
		}
		c, e := decodeSQLCall(op, fam == familyBeta, body)
		if e != nil {
			g.writeError(w, e)
			return
		}
		results, err := g.sql.run(r.Context(), uid, c)
		if out = err; !isNotOwner(err) {
			g.answerSQL(w, r, "peer", op, results, err)
			return
		}
	case "migrate":
		var files []MigrationFile
		if err := json.Unmarshal(body, &files); err != nil {
			g.writeError(w, invalidArgument("migrate takes the migration files as JSON: %v", err))
			return
		}
		ledger, err := g.applyHere(r.Context(), uid, files)
		if out = err; !isNotOwner(err) {
			g.writeJSON(w, peerLedger{Ledger: ledger, Failure: failureOf(err)})
			return
		}
	case "ledger":
		ledger, err := g.ledgerHere(r.Context(), uid)
		if out = err; !isNotOwner(err) {
			g.writeJSON(w, peerLedger{Ledger: ledger, Failure: failureOf(err)})
			return
		}
	default:
		g.writeError(w, invalidArgument("no peer SQL operation %q", op))
		return
	}
	g.writeError(w, &Error{Status: http.StatusMisdirectedRequest, Code: "not_owner", Message: out.Error()})
}

func isNotOwner(err error) bool {
	var no *notOwner
	return errors.As(err, &no)
}

const (
	familyAlpha = "v1alpha1"
	familyBeta  = "v1beta1"
)

func familyOf(beta bool) string {
	if beta {
		return familyBeta
	}
	return familyAlpha
}

// peerLedger is the answer of a forwarded migrate or ledger: the ledger
// as it stands, and the failure, if any.
type peerLedger struct {
	Ledger  []LedgerEntry `json:"ledger"`
	Failure *peerFailure  `json:"failure,omitempty"`
}

// peerFailure carries an error across replicas: a *wire.Error or a
// gateway *Error; anything else is a backend_unavailable.
type peerFailure struct {
	Wire    *wire.Error `json:"wire,omitempty"`
	Gateway *Error      `json:"gateway,omitempty"`
}

func failureOf(err error) *peerFailure {
	if err == nil {
		return nil
	}
	var we *wire.Error
	if errors.As(err, &we) {
		return &peerFailure{Wire: we}
	}
	return &peerFailure{Gateway: asError(err)}
}

func (p *peerFailure) err() error {
	switch {
	case p == nil:
		return nil
	case p.Wire != nil:
		return p.Wire
	case p.Gateway != nil:
		return p.Gateway
	}
	return unavailable(errors.New("a forwarded migration failed without saying why"))
}

// forwardLedger sends a migrate or ledger request to holder.
func (o *sqlOwner) forwardLedger(ctx context.Context, holder, uid, op string, body []byte) ([]LedgerEntry, error) {
	status, _, answer, err := o.post(ctx, holder, PeerPathPrefix+"sql/"+url.PathEscape(uid)+"/"+op, body)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, errorf(http.StatusServiceUnavailable, "backend_unavailable", "the replica that owns database %s answered %d: %s", uid, status, bytes.TrimSpace(answer))
	}
	var pl peerLedger
	if err := json.Unmarshal(answer, &pl); err != nil {
		return nil, unavailable(fmt.Errorf("the owner replica's answer: %w", err))
	}
	return pl.Ledger, pl.Failure.err()
}
