package conformance

import (
	"strings"
	"testing"

	"github.com/takoform/takoform/wire"
)

// TestSuccessWhereARefusalWasWanted names what was answered instead of
// complaining about an empty error code.
func TestSuccessWhereARefusalWasWanted(t *testing.T) {
	r := &Raw{Status: 200, Body: []byte(`{"resource":{}}`)}
	err := r.ExpectCode(wire.InvalidArgument)
	if err == nil || !strings.Contains(err.Error(), `answered HTTP 200 (success) instead of an error: {"resource":{}}`) || strings.Contains(err.Error(), "closed taxonomy") {
		t.Fatalf("got %v", err)
	}
}
