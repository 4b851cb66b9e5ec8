package form

import (
	"fmt"

	"github.com/takoform/takoform/ijson"
)

// ParseDeclared parses a Form Definition like Parse but identifies it by a
// declared schema digest instead of the digest of its bytes. It exists for
// one test fixture only: the conformance probe's second-group Form, whose
// public corpus declares its digest as a label no document hashes to
// (spec/conformance-probe.md §5). Everything else derives digests from
// bytes. The error is Parse's, or a plain error when declared is not
// sha256:<64 lowercase hex>.
func ParseDeclared(data []byte, declared string) (*Definition, error) {
	if !ijson.ValidDigest(declared) {
		return nil, fmt.Errorf("declared schema digest %q is not sha256:<64 lowercase hex>", declared)
	}
	d, err := Parse(data)
	if err != nil {
		return nil, err
	}
	cp := *d
	cp.ref.SchemaDigest = declared
	return &cp, nil
}
