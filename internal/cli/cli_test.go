package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/testref"
)

func run(args ...string) (code int, out, errOut string) {
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

func TestFormDigestReferenceWorkerVersion(t *testing.T) {
	dir := testref.Dir(t)
	p := filepath.Join(dir, "forms/candidates/edge/v1alpha1/worker-version/definition.json")
	code, out, errOut := run("form", "digest", p)
	want := "sha256:5304e2c173b4fc55c72ca6926738025c45bc4c6a3b9ac175b8f592047d7011af  " + p + "\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, out %q, err %q; want %q", code, out, errOut, want)
	}
}

func TestFormDigestRefusesNonIJSON(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dup.json")
	os.WriteFile(p, []byte(`{"spec":{"a":1,"a":2}}`), 0o644)
	code, out, errOut := run("form", "digest", p)
	if code != 1 || out != "" || !strings.Contains(errOut, "/spec/a") || !strings.Contains(errOut, "duplicate") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestFormVerifyReferenceFamily(t *testing.T) {
	dir := testref.Dir(t)
	code, out, errOut := run("form", "verify", dir)
	if code != 0 || !strings.Contains(out, "12 forms, 6 interfaces, 5 bindings") || !strings.Contains(out, "0 problems") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestFormVerifyNamesFileAndPointer(t *testing.T) {
	dir := testref.Dir(t)
	src := filepath.Join(dir, "forms/candidates/edge/v1alpha1/at-least-once-queue")
	dst := filepath.Join(t.TempDir(), "queue")
	copyTree(t, src, dst)
	// A negative fixture that is in fact valid, and a canonical one that is not.
	os.WriteFile(filepath.Join(dst, "fixtures/negative-delivery-delay-seconds.json"), []byte(`{"messageRetentionSeconds":60}`), 0o644)
	os.WriteFile(filepath.Join(dst, "fixtures/desired.json"), []byte(`{"messageRetentionSeconds":59}`), 0o644)
	code, _, errOut := run("form", "verify", filepath.Dir(dst))
	if code != 1 {
		t.Fatalf("exit %d, want 1; %s", code, errOut)
	}
	for _, want := range []string{
		"queue/fixtures/negative-delivery-delay-seconds.json: negative fixture",
		"queue/fixtures/desired.json /messageRetentionSeconds: canonical fixture",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("output lacks %q:\n%s", want, errOut)
		}
	}
}

func TestFormVerifyEmptyDir(t *testing.T) {
	code, _, errOut := run("form", "verify", t.TempDir())
	if code != 1 || !strings.Contains(errOut, "no definition.json") {
		t.Fatalf("exit %d, %s", code, errOut)
	}
	if code, _, _ := run("form", "verify", "/nonexistent/dir"); code != 2 {
		t.Fatalf("missing dir exit %d, want 2", code)
	}
}

func TestSpaceCheck(t *testing.T) {
	code, out, _ := run("space", "check", "Prod", "prod", "Prod North")
	if code != 0 || strings.Count(out, "valid") != 3 {
		t.Fatalf("exit %d: %s", code, out)
	}
	code, out, errOut := run("space", "check", "ok", "Prod ", "a/b")
	if code != 1 || !strings.Contains(out, `valid "ok"`) ||
		!strings.Contains(errOut, "edge-code-point") || !strings.Contains(errOut, "forbidden-code-point") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFormVerifyOurFamily(t *testing.T) {
	code, out, errOut := run("form", "verify", "../../forms/edge/family")
	if code != 0 || !strings.Contains(out, "12 forms, 6 interfaces, 5 bindings; 12 canonical and 59 negative fixtures checked; 0 problems") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}
