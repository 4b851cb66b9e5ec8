package sqlcore

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/store"
)

// Placeholders are spelled for PostgreSQL as SQLite binds them: a bare ?
// is the next position, ?N is N.
func TestDollars(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT a FROM t WHERE b = ? AND c = ?`:        `SELECT a FROM t WHERE b = $1 AND c = $2`,
		`UPDATE t SET a = ?2 WHERE b = ?1 AND c = ?12`: `UPDATE t SET a = $2 WHERE b = $1 AND c = $12`,
		`INSERT INTO t (a) VALUES (?) ON CONFLICT (a)`: `INSERT INTO t (a) VALUES ($1) ON CONFLICT (a)`,
		`SELECT 1`: `SELECT 1`,
		`SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? end`: `SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 end`,
	} {
		if got := dollars(in); got != want {
			t.Errorf("dollars(%q) = %q, want %q", in, got, want)
		}
	}
}

var (
	bare     = regexp.MustCompile(`\?(?:[^0-9]|$)`)
	numbered = regexp.MustCompile(`\?([0-9]+)`)
	dollar   = regexp.MustCompile(`\$([0-9]+)`)
)

// Every shared statement has a text in both dialects, binds as many
// parameters in each, mixes no bare ? with ?N (SQLite would number them
// apart from the text's order), and PostgreSQL's locking reads end FOR
// UPDATE.
func TestEveryStatementSpelled(t *testing.T) {
	for s := range NumStmts {
		lite, pg := Text(SQLite, s), Text(Postgres, s)
		if lite == "" || pg == "" {
			t.Errorf("statement %d: no text (SQLite %q, PostgreSQL %q)", s, lite, pg)
			continue
		}
		nBare, nums := len(bare.FindAllString(lite, -1)), numbered.FindAllStringSubmatch(lite, -1)
		if nBare > 0 && len(nums) > 0 {
			t.Errorf("statement %d mixes ? and ?N: %s", s, lite)
		}
		want := nBare
		for _, m := range nums {
			n, _ := strconv.Atoi(m[1])
			want = max(want, n)
		}
		got := 0
		for _, m := range dollar.FindAllStringSubmatch(pg, -1) {
			n, _ := strconv.Atoi(m[1])
			got = max(got, n)
		}
		if strings.Contains(pg, "?") || got != want {
			t.Errorf("statement %d: PostgreSQL binds %d parameters, SQLite %d:\n%s\n%s", s, got, want, pg, lite)
		}
		if ForUpdate(s) != pg+" FOR UPDATE" {
			t.Errorf("statement %d: ForUpdate = %q", s, ForUpdate(s))
		}
	}
	if Text(SQLite, UpdateResource) == Text(Postgres, UpdateResource) || !strings.Contains(Text(Postgres, UpdateResource), "$18::bytea") {
		t.Errorf("UpdateResource: PostgreSQL's text does not name the answer's type: %s", Text(Postgres, UpdateResource))
	}
}

// A lock's name is its namespace and parts joined by U+001F, the zero
// Lock's none; the names a key's reads and writes lock are the same.
func TestLockName(t *testing.T) {
	k := store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "n"}
	for _, c := range []struct {
		l    Lock
		want string
	}{
		{Lock{}, ""},
		{ResourceLock(k), "resource\x1facme\x1fprod\x1fa/v1\x1fK\x1fn"},
		{IdempotencyLock("", "acme", "alice", "prod", "k1"), "idempotency\x1f\x1facme\x1falice\x1fprod\x1fk1"},
		{ArtifactLock("sha256:00"), "artifact\x1fsha256:00"},
		{NewLock("setting", "x"), "setting\x1fx"},
	} {
		if got := c.l.Name(); got != c.want || c.l.IsZero() != (c.want == "") {
			t.Errorf("Name() = %q (zero %v), want %q", got, c.l.IsZero(), c.want)
		}
	}
}
