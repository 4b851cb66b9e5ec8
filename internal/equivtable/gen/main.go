// Command gen writes internal/provider/equivalent_gen.go from the public
// families beside the repository (../shared/reference/takoform-v1alpha3
// and ../shared/reference/takoform-v1beta1):
// `go generate ./internal/provider`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/takoform/takoform/internal/equivtable"
	"github.com/takoform/takoform/internal/testref"
)

func main() {
	out := flag.String("out", "equivalent_gen.go", "file to write")
	flag.Parse()
	dir, ok := testref.Find()
	if !ok {
		fmt.Fprintln(os.Stderr, "gen: the public family ../shared/reference/takoform-v1alpha3 is not beside the repository; put it there and run again")
		os.Exit(1)
	}
	eqs, err := equivtable.Compute(dir)
	if err == nil {
		var src []byte
		if src, err = equivtable.Render(eqs); err == nil {
			err = os.WriteFile(*out, src, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
