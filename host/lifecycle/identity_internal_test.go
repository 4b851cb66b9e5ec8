package lifecycle

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/takoform/takoform/wire"
)

// TestAppendStringsIsJSONMarshal: the prepare binding's array is
// json.Marshal's, verbatim or not.
func TestAppendStringsIsJSONMarshal(t *testing.T) {
	for _, strs := range [][]string{{}, {""}, {"a", "b"}, {"t<", "x"}, {"é"}, {"a\"b", "\n"}, {"takoform-host/v1", "tenant-a", "space one", "0"}} {
		if got, want := appendStrings(nil, strs...), mustJSON(strs); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", strs, got, want)
		}
	}
}

// TestNewUIDFormat: a UID is "u-", the creation time in Unix milliseconds
// as 12 hex digits, and 16 hex digits of randomness.
func TestNewUIDFormat(t *testing.T) {
	before := time.Now().UnixMilli()
	uid := newUID()
	after := time.Now().UnixMilli()
	if !regexp.MustCompile(`^u-[0-9a-f]{28}$`).MatchString(uid) || !wire.ValidUID(uid) {
		t.Fatalf("newUID() = %q", uid)
	}
	ms, err := strconv.ParseInt(uid[2:14], 16, 64)
	if err != nil || ms < before || ms > after {
		t.Errorf("newUID() = %q: time %d (%v), want %d..%d", uid, ms, err, before, after)
	}
	if newUID() == uid {
		t.Error("two UIDs are equal")
	}
}
