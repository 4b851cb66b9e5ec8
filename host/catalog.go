package host

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
)

// LoadCatalog installs every definition under fsys (Forms, Interfaces and
// Bindings), refusing the whole directory when any document is invalid.
func LoadCatalog(fsys fs.FS) (*form.Catalog, error) {
	fam, findings := form.LoadFamily(fsys)
	findings = append(findings, fam.CheckReferences()...)
	if len(findings) > 0 {
		lines := make([]string, len(findings))
		for i, f := range findings {
			lines[i] = "  " + f.String()
		}
		return nil, fmt.Errorf("the forms directory has %d problem(s):\n%s", len(findings), strings.Join(lines, "\n"))
	}
	if len(fam.Forms) == 0 {
		return nil, fmt.Errorf("the forms directory holds no Form definition (definition.json)")
	}
	return fam.Catalog()
}

// BuiltinCatalog is the Edge family this binary ships.
func BuiltinCatalog() (*form.Catalog, error) { return LoadCatalog(edge.Family()) }
