package host

import (
	"io/fs"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
)

// LoadCatalog installs every definition under fsys (Forms, Interfaces and
// Bindings), refusing the whole directory when any document is invalid:
// LoadFamilies with one source, whose lanes SplitLanes derives again.
func LoadCatalog(fsys fs.FS) (*form.Catalog, error) {
	c, _, err := LoadFamilies([]FamilySource{{Name: ".", FS: fsys}})
	return c, err
}

// BuiltinCatalog is the Edge family this binary ships (group
// edge.forms.takoform.com/v1alpha1, so lane v1alpha3 only).
func BuiltinCatalog() (*form.Catalog, error) {
	c, _, err := LoadFamilies([]FamilySource{{Name: BuiltinFamily, FS: edge.Family()}})
	return c, err
}
