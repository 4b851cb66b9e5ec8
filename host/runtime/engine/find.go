// Package engine drives workerd, the data plane's engine
// (spec/runtime-v1.md §0.3): it finds the pinned binary, writes a shard's
// configuration (text Cap'n Proto) from desired state, generates the main
// module that builds env, and starts, probes and stops workerd processes.
// It knows nothing of the host's store; package runtime feeds it
// (repo decision 0050).
package engine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Pinned is the pinned workerd release (npm @cloudflare/workerd-linux-64),
// installed by scripts/workerd.sh (spec/runtime-v1.md §0.3).
const Pinned = "1.20261117.1"

// CompatibilityDate is the one compatibilityDate every worker runs with;
// authors never choose it, and no compatibility flag is ever set
// (spec/runtime-v1.md §0.3, decision 0019). It is the day before the
// pinned binary's date: measured with workerd 1.20261117.1, the date
// 2026-11-17 switches on a module registry that roots modules under
// file:///bundle/, so a "/name" import no longer resolves against the
// bundle root as spec/runtime-v1.md §1.1 requires (TestShardServesVersions
// fails with it; repo decision 0050).
const CompatibilityDate = "2026-11-16"

// EnvBinary is the environment variable naming the workerd binary.
const EnvBinary = "TAKOFORM_WORKERD"

// toolsPath is where scripts/workerd.sh installs the binary, relative to
// the repository root.
var toolsPath = filepath.Join("tools", "workerd-"+Pinned, "node_modules", "@cloudflare", "workerd-linux-64", "bin", "workerd")

// ErrNotFound is Find's error when no workerd binary is found anywhere.
var ErrNotFound = errors.New("no workerd binary found")

// Find locates workerd, first found wins: flag (the host's --workerd), the
// TAKOFORM_WORKERD environment variable, tools/ of scripts/workerd.sh in
// the working directory or any parent, then "workerd" on PATH. It returns
// the path and where it came from ("--workerd", "TAKOFORM_WORKERD",
// "tools/", "PATH"). A named path (flag, environment) that is not an
// executable file is an error, not a fall-through; nothing found wraps
// ErrNotFound with how to install it.
func Find(flag string) (path, source string, err error) {
	for _, c := range []struct{ path, source string }{{flag, "--workerd"}, {os.Getenv(EnvBinary), EnvBinary}} {
		if c.path == "" {
			continue
		}
		if err := executable(c.path); err != nil {
			return "", "", fmt.Errorf("%s names %s: %w", c.source, c.path, err)
		}
		return c.path, c.source, nil
	}
	if dir, err := os.Getwd(); err == nil {
		for {
			p := filepath.Join(dir, toolsPath)
			if executable(p) == nil {
				return p, "tools/", nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if p, err := exec.LookPath("workerd"); err == nil {
		return p, "PATH", nil
	}
	return "", "", fmt.Errorf("%w: install it with scripts/workerd.sh (workerd %s into tools/), or name one with --workerd PATH or %s", ErrNotFound, Pinned, EnvBinary)
}

// executable is nil when p is a regular file someone may execute.
func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}
