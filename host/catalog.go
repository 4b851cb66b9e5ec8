package host

import (
	"io/fs"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
)

// LoadCatalog installs every definition under fsys (Forms, Interfaces and
// Bindings), refusing the whole directory when any document is invalid:
// LoadFamilies with one source.
func LoadCatalog(fsys fs.FS) (*form.Catalog, error) {
	return LoadFamilies([]FamilySource{{Name: ".", FS: fsys}})
}

// BuiltinCatalog is the Edge family this binary ships.
func BuiltinCatalog() (*form.Catalog, error) {
	return LoadFamilies([]FamilySource{{Name: BuiltinFamily, FS: edge.Family()}})
}
