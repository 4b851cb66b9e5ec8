package cli

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // database/sql driver "sqlite", to read the database file

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// TestServeRunsMigrations: `host serve` with the defaults (the built-in
// family, a SQLite data file and so a worker data directory beside it)
// wires the data plane's migration executor into the host: applying a
// v1beta1 SQLiteMigrationApplication on lane v1beta1 runs the set's two
// files on the database's own file, whose in-file ledger then lists both
// and whose table exists (spec/runtime-v1.md §9.3; repo decision 0057).
func TestServeRunsMigrations(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	data := filepath.Join(t.TempDir(), "h.db")
	addr := freePort(t)
	args := strings.Join([]string{"host", "serve", "--listen", addr, "--data", data, "--dev-token", "tok", "--ingress", "off"}, "\x1f")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostProcess$")
	cmd.Env = append(os.Environ(), "TAKOFORM_TEST_HOST_ARGS="+args)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	connect(t, addr)
	ctx := context.Background()
	c, err := client.New(ctx, "http://"+addr, client.Options{Token: "tok", Lane: wire.V1beta1})
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := c.SupportForms(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]form.FormRef{}
	for _, p := range profiles.Profiles {
		if p.FormRef != nil && p.FormRef.APIVersion == edge.GroupV1beta1 {
			refs[p.FormRef.Kind] = *p.FormRef
		}
	}
	if len(refs) != 15 {
		t.Fatalf("lane v1beta1 of a default host answers %d v1beta1 Forms, want the built-in edition's 15", len(refs))
	}
	apply := func(kind, name string, spec string) *wire.Resource {
		t.Helper()
		ref := refs[kind]
		req := wire.ResourceRequest{APIVersion: ref.APIVersion, Kind: kind, Form: wire.FormReference{FormRef: ref},
			Metadata: wire.Metadata{Name: name, Space: "migrations"}, Spec: []byte(spec)}
		p, err := c.Prepare(ctx, req, "")
		if err != nil {
			t.Fatalf("prepare %s: %v", kind, err)
		}
		res, err := c.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: kind, Form: req.Form, Metadata: req.Metadata,
			Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
		if err != nil {
			t.Fatalf("apply %s: %v", kind, err)
		}
		return res
	}
	files := []string{"CREATE TABLE notes (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n", "INSERT INTO notes (name) VALUES ('first');\n"}
	m := wire.Manifest{APIVersion: wire.ArtifactsAPI, Kind: artifact.KindMigrationBundle}
	blobs := map[string][]byte{}
	for i, f := range files {
		d := ijson.SumDigest([]byte(f))
		m.Files = append(m.Files, wire.ManifestFile{Path: []string{"0001.sql", "0002.sql"}[i], MediaType: artifact.MediaTypeSQL, Size: int64(len(f)), Digest: d})
		blobs[d] = []byte(f)
	}
	digest, err := c.UploadArtifact(ctx, m, blobs)
	if err != nil {
		t.Fatal(err)
	}
	db := apply("SQLiteDatabase", "db", `{}`)
	apply("SQLiteMigrationSet", "set", `{"manifestDigest":"`+digest+`"}`)
	rel := func(kind, name string) string {
		return `{"apiVersion":"` + edge.GroupV1beta1 + `","kind":"` + kind + `","name":"` + name + `"}`
	}
	apply("SQLiteMigrationApplication", "app", `{"database":`+rel("SQLiteDatabase", "db")+`,"migrationSet":`+rel("SQLiteMigrationSet", "set")+`}`)

	file := filepath.Join(data+".workers", "sql", db.Metadata.UID+".sqlite")
	conn, err := sql.Open("sqlite", "file:"+file+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var ledger int
	var name string
	if err := conn.QueryRow(`SELECT count(*) FROM _takoform_migrations`).Scan(&ledger); err != nil || ledger != 2 {
		t.Fatalf("the database file %s: ledger of %d rows (%v), want the set's 2 files", file, ledger, err)
	}
	if err := conn.QueryRow(`SELECT name FROM notes`).Scan(&name); err != nil || name != "first" {
		t.Fatalf("the database file %s: notes holds %q (%v), want the row the second file inserted", file, name, err)
	}
}
