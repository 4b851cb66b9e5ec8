package provider

import (
	"strings"
	"testing"
)

// TestImportBlocksQuoteForHCL: an import ID holding HCL's quote,
// backslash and template openers is written so OpenTofu reads it back
// exactly.
func TestImportBlocksQuoteForHCL(t *testing.T) {
	got := ImportBlocks([]Orphan{{Address: `takoform_edge_kv_namespace.kv["a"]`, Space: `Team "${x}" %{y} \ z`, Name: "n", UID: "u-1", Generation: "1"}})
	want := `# takoform_edge_kv_namespace.kv["a"] is on the host (uid u-1, generation 1) but in no state
import {
  to = takoform_edge_kv_namespace.kv["a"]
  id = "Team \"$${x}\" %%{y} \\ z/n"
}
`
	if strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}
