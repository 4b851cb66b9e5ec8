package lifecycle

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// newUID names a new incarnation: "u-", the creation time in Unix
// milliseconds (12 hex digits) and 64 random bits (16 hex digits). The
// format is host detail (spec/host-api-v1alpha3.md §1.4); the time prefix
// makes UIDs of one moment sort together, so the indexes on UIDs take a
// batch of creates on a few pages instead of one random page each
// (spec/decisions/0031-create-work-off-the-writer.md).
func newUID() string {
	var b [2 + 13 + 16]byte
	u := strconv.AppendInt(append(b[:0], "u-"...), time.Now().UnixMilli()|1<<48, 16)
	u = append(u[:2], u[3:]...) // drop the leading 1 of 1<<48, which fixes the width at 12 digits
	var random [8]byte
	_, _ = rand.Read(random[:])
	return string(hex.AppendEncode(u, random[:]))
}

// PrepareDigest is a keyed MAC over the prepare binding: tenant, space,
// name, exact FormRef, spec digest, uid and generation (create markers ""
// and 0), and the lane (spec/lane-v1beta1.md §2.5 rule 5): a lane other
// than v1alpha3 is one more array member, so a digest of lane v1alpha3
// ("" for an operation accepted before lanes) is the one hosts minted
// before there were lanes, and replicas of two releases agree on it. The construction is host-private (spec/host-api-v1alpha3.md §3.4 (4): only equality
// matters): HMAC-SHA-256 over the JSON array of those strings, which is
// unambiguous. No row is stored for it (ARCHITECTURE.md §5). The keyed MACs
// are reused (Engine.macs) and the array is assembled by appendStrings, which
// writes what json.Marshal writes.
func (e *Engine) PrepareDigest(lane string, k store.Key, ref form.FormRef, specDigest, uid string, generation int64) string {
	m, ok := e.macs.Get().(*macState)
	if !ok {
		m = &macState{mac: hmac.New(sha256.New, e.secret)}
	} else {
		m.mac.Reset()
	}
	if lane == "" || lane == wire.V1alpha3.Name {
		m.doc = appendStrings(m.doc[:0], "takoform-host/v1", k.Tenant, k.Space, ref.APIVersion, ref.Kind,
			ref.DefinitionVersion, ref.SchemaDigest, k.Name, specDigest, uid, formatCounter(generation))
	} else {
		m.doc = appendStrings(m.doc[:0], "takoform-host/v1", k.Tenant, k.Space, ref.APIVersion, ref.Kind,
			ref.DefinitionVersion, ref.SchemaDigest, k.Name, specDigest, uid, formatCounter(generation), lane)
	}
	m.mac.Write(m.doc)
	var out [len(ijson.DigestPrefix) + 2*sha256.Size]byte
	copy(out[:], ijson.DigestPrefix)
	hex.Encode(out[len(ijson.DigestPrefix):], m.mac.Sum(m.sum[:0]))
	e.macs.Put(m)
	return string(out[:])
}

// macState is one reusable prepareDigest computation: the keyed MAC and
// the buffers it writes from and into.
type macState struct {
	mac hash.Hash
	doc []byte
	sum [sha256.Size]byte
}

// appendStrings appends the JSON array of strs to b, byte for byte what
// json.Marshal makes of a []string: verbatim when every string is
// (wire.VerbatimString), else through json.Marshal.
func appendStrings(b []byte, strs ...string) []byte {
	for _, s := range strs {
		if !wire.VerbatimString(s) {
			return append(b, mustJSON(strs)...)
		}
	}
	b = append(b, '[')
	for i, s := range strs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, s...)
		b = append(b, '"')
	}
	return append(b, ']')
}
