package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, c := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"release tag", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"local build with revision", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "false"}}}, "(devel) 0123456789ab"},
		{"dirty tree", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "true"}}}, "(devel) 0123456789ab+dirty"},
		{"pseudo-version names the revision", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201085600-0123456789ab"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}}}, "v0.0.0-20261201085600-0123456789ab"},
		{"no version at all", debug.BuildInfo{}, "(devel)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := fromBuildInfo(&c.info); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestLdflagsVersionWins(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v9.8.7"
	if got := String(); got != "v9.8.7" {
		t.Fatalf("String() = %q with Version set, want v9.8.7", got)
	}
}

// TestReleaseBuildInjectsVersion builds the takoform binary the way a
// release does (-ldflags -X on this package's Version) and runs
// `takoform version`.
func TestReleaseBuildInjectsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "takoform")
	build := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X github.com/takoform/takoform/internal/version.Version=v0.42.0-test", "github.com/takoform/takoform/cmd/takoform")
	build.Env = os.Environ()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("takoform version: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "takoform v0.42.0-test" {
		t.Fatalf("takoform version printed %q, want %q", got, "takoform v0.42.0-test")
	}
}
