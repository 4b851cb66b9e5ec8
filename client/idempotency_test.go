package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/takoform/takoform/ijson"
)

// keyOf computes the documented formula independently: "takoform-" +
// hex(sha256(JSON array)), the array written out by hand.
func keyOf(arrayJSON string) string {
	sum := sha256.Sum256([]byte(arrayJSON))
	return "takoform-" + hex.EncodeToString(sum[:])
}

func hexSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestIdempotencyKeyFormula(t *testing.T) {
	body := []byte(`{"apiVersion":"edge.forms.takoform.com/v1alpha1"}`)
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"create apply", IdempotencyKey(KeyApply, "edge.forms.takoform.com/v1alpha1", "ModuleWorker", "app", "prod", "", "", body),
			keyOf(`["apply","edge.forms.takoform.com/v1alpha1","ModuleWorker","app","prod","","","` + hexSHA(body) + `"]`)},
		{"update apply", IdempotencyKey(KeyApply, "edge.forms.takoform.com/v1alpha1", "ModuleWorker", "app", "prod", "uid-7", "3", body),
			keyOf(`["apply","edge.forms.takoform.com/v1alpha1","ModuleWorker","app","prod","uid-7","3","` + hexSHA(body) + `"]`)},
		{"delete has no body digest", IdempotencyKey(KeyDelete, "edge.forms.takoform.com/v1alpha1", "ModuleWorker", "app", "prod", "uid-7", "3", nil),
			keyOf(`["delete","edge.forms.takoform.com/v1alpha1","ModuleWorker","app","prod","uid-7","3",""]`)},
		{"observe has no body digest", IdempotencyKey(KeyObserve, "edge.forms.takoform.com/v1alpha1", "ModuleWorker", "app", "prod", "uid-7", "3", []byte{}),
			keyOf(`["observe","edge.forms.takoform.com/v1alpha1","ModuleWorker","app","prod","uid-7","3",""]`)},
		// RFC 8785: '<' and non-ASCII stay literal, '"' and '\' are escaped.
		{"space escaping is RFC 8785", IdempotencyKey(KeyImport, "forms.example.com/v1", "Thing", "n", "a<b \"é\"\\", "", "", nil),
			keyOf(`["import","forms.example.com/v1","Thing","n","a<b \"é\"\\","","",""]`)},
		{"cancel binds the operation id", DeriveKey(KeyCancel, "op_12"), keyOf(`["operation-cancel","op_12"]`)},
		{"commit binds upload and manifest", DeriveKey(KeyCommit, "up_1", "sha256:00"), keyOf(`["artifact-commit","up_1","sha256:00"]`)},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, c.got, c.want)
		}
	}
}

// TestIdempotencyKeyPinned pins one key, computed outside Go (Python
// hashlib over the literal array): changing the formula would change every
// key a host has recorded, so replays after an upgrade would execute anew.
func TestIdempotencyKeyPinned(t *testing.T) {
	got := IdempotencyKey(KeyDelete, "edge.forms.takoform.com/v1alpha1", "ModuleWorker", "app", "prod", "uid-1", "1", nil)
	const want = "takoform-4e0e61c87f4bb2219a2a2f1c71d5db0c6a0a40ef6383dcebd5c9330f4aca7738"
	if got != want {
		t.Fatalf("key %s, want %s", got, want)
	}
}

func TestIdempotencyKeyDeterministicAndSensitive(t *testing.T) {
	base := [8]string{KeyApply, "edge.forms.takoform.com/v1alpha1", "ModuleWorker", "app", "prod", "uid-1", "2", "{}"}
	key := func(p [8]string) string {
		return IdempotencyKey(p[0], p[1], p[2], p[3], p[4], p[5], p[6], []byte(p[7]))
	}
	k0 := key(base)
	if key(base) != k0 {
		t.Fatal("the same inputs gave two keys")
	}
	seen := map[string]int{k0: -1}
	alt := [8]string{KeyImport, "edge.forms.takoform.com/v1alpha2", "WorkerVersion", "app2", "Prod", "uid-2", "3", `{"a":1}`}
	for i := range base {
		p := base
		p[i] = alt[i]
		k := key(p)
		if j, dup := seen[k]; dup {
			t.Errorf("changing input %d gave the key of input %d", i, j)
		}
		seen[k] = i
	}
	// The array keeps member boundaries: moving a character between
	// neighbouring members changes the key.
	if DeriveKey("ab", "c") == DeriveKey("a", "bc") {
		t.Error("member boundaries are lost")
	}
	// A space is never trimmed or folded before it enters the key.
	if key(base) == IdempotencyKey(KeyApply, base[1], base[2], base[3], "prod ", base[5], base[6], []byte(base[7])) {
		t.Error("a trailing space in the space did not change the key")
	}
}

func TestKeyScopeSeparatesRuns(t *testing.T) {
	ctx := context.Background()
	a := &Client{}
	b := &Client{keyScope: "run-1"}
	c := &Client{keyScope: "run-2"}
	k := IdempotencyKey(KeyDelete, "g.example.com/v1", "K", "n", "s", "u", "1", nil)
	if a.scoped(ctx, k) != k {
		t.Fatal("an unscoped client changed the key")
	}
	if b.scoped(ctx, k) == k || b.scoped(ctx, k) != b.scoped(ctx, k) || b.scoped(ctx, k) == c.scoped(ctx, k) {
		t.Fatal("scoped keys must be stable within a scope and differ across scopes")
	}
}

// TestCallScopeSeparatesMutations: two calls of one client, each under its
// own WithKeyScope, send different keys for the same request; one call's
// retries (the same context) repeat its key.
func TestCallScopeSeparatesMutations(t *testing.T) {
	b := &Client{keyScope: "run-1"}
	k := IdempotencyKey(KeyApply, "g.example.com/v1", "K", "n", "s", "", "", []byte(`{}`))
	one := WithKeyScope(context.Background(), NewKeyScope())
	two := WithKeyScope(context.Background(), NewKeyScope())
	if b.scoped(one, k) != b.scoped(one, k) {
		t.Fatal("a call's retries must repeat its key")
	}
	if b.scoped(one, k) == b.scoped(two, k) || b.scoped(one, k) == b.scoped(context.Background(), k) {
		t.Fatal("two calls must not share a key")
	}
	if b.scoped(WithKeyScope(context.Background(), ""), k) != b.scoped(context.Background(), k) {
		t.Fatal("an empty call scope must be no scope")
	}
}

// canonicalParts is the RFC 8785 array of parts the long way round:
// encoding/json, then the JCS library through ijson.Canonical.
func canonicalParts(t *testing.T, parts []string) []byte {
	raw, err := json.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := ijson.Canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	return canon
}

var keyPartsCorpus = []string{"", "apply", "a<b>&c", "\u2028\u2029", "\x00\x01\x1f\x7f", "\"\\/", "é😀", "\xff", "a\xedz", "\xed\xa0\x80", "\t\n\r\b\f"}

// TestDeriveKeyIsJCS: DeriveKey hashes exactly the JCS bytes of the array
// (the library's canonical form), control characters, escapes, non-ASCII
// and invalid UTF-8 included.
func TestDeriveKeyIsJCS(t *testing.T) {
	for _, p := range keyPartsCorpus {
		parts := []string{"x", p, p + "y"}
		if got, want := DeriveKey(parts...), keyOf(string(canonicalParts(t, parts))); got != want {
			t.Errorf("DeriveKey(%q) = %s, want %s", parts, got, want)
		}
	}
	if got, want := DeriveKey(), keyOf("[]"); got != want {
		t.Errorf("DeriveKey() = %s, want %s", got, want)
	}
}

// FuzzDeriveKeyIsJCS: the same on any two parts.
func FuzzDeriveKeyIsJCS(f *testing.F) {
	for _, p := range keyPartsCorpus {
		f.Add(p, "z")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := DeriveKey(a, b), keyOf(string(canonicalParts(t, []string{a, b}))); got != want {
			t.Fatalf("DeriveKey(%q, %q) = %s, want %s", a, b, got, want)
		}
	})
}
