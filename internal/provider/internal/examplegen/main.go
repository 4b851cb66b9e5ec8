// Command examplegen writes the import examples of every resource type of
// this provider build (provider.ImportExamples) under an examples
// directory: `go generate ./internal/provider` (make docs runs it).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/takoform/takoform/internal/provider"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: examplegen EXAMPLES_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "examplegen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	reg, err := provider.EdgeRegistry()
	if err != nil {
		return err
	}
	files, err := provider.ImportExamples(reg, os.DirFS(dir))
	if err != nil {
		return err
	}
	for rel, b := range files {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
