// Command gen writes the Edge family trees from forms/edge/source, one per
// edition: forms/edge/family (edge.forms.takoform.com/v1alpha1) and
// forms/edge/family-v1beta1 (edge.forms.takoform.com/v1beta1). Run through
// `go generate ./forms/edge`.
//
// Usage: gen [-root DIR]; DIR defaults to "." (forms/edge). Files under an
// edition's directory that the generator no longer produces are removed.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/takoform/takoform/forms/edge/internal/gen/build"
	"github.com/takoform/takoform/forms/edge/source"
)

func main() {
	root := flag.String("root", ".", "directory holding the edition directories")
	flag.Parse()
	for _, e := range source.Editions() {
		if err := run(e, filepath.Join(*root, e.Dir)); err != nil {
			fmt.Fprintf(os.Stderr, "gen %s: %v\n", e.Group, err)
			os.Exit(1)
		}
	}
}

func run(e source.Edition, out string) error {
	files, err := build.Generate(e)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(out, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if old, err := os.ReadFile(full); err == nil && string(old) == string(files[p]) {
			continue
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			return err
		}
	}
	return prune(out, files)
}

// prune removes files under out that were not generated, then empty dirs.
func prune(out string, files map[string][]byte) error {
	var dirs []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." {
				dirs = append(dirs, p)
			}
			return nil
		}
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if entries, err := os.ReadDir(dirs[i]); err == nil && len(entries) == 0 {
			if err := os.Remove(dirs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
