// Command genschema writes spaceid.JSONSchema() to a file (see go:generate in
// package spaceid).
package main

import (
	"flag"
	"log"
	"os"
	"path/filepath"

	"github.com/takoform/takoform/spaceid"
)

func main() {
	out := flag.String("o", "", "output file")
	flag.Parse()
	if *out == "" {
		log.Fatal("genschema: -o is required")
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, spaceid.JSONSchema(), 0o644); err != nil {
		log.Fatal(err)
	}
}
