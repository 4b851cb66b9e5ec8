package host

import (
	"io/fs"

	"github.com/takoform/takoform/form"
)

// LoadCatalog installs every definition under fsys (Forms, Interfaces and
// Bindings), refusing the whole directory when any document is invalid:
// LoadFamilies with one source, whose lanes SplitLanes derives again.
func LoadCatalog(fsys fs.FS) (*form.Catalog, error) {
	c, _, err := LoadFamilies([]FamilySource{{Name: ".", FS: fsys}})
	return c, err
}

// BuiltinCatalog is the Edge family this binary ships, both editions:
// edge.forms.takoform.com/v1alpha1 (lane v1alpha3) and
// edge.forms.takoform.com/v1beta1 (lane v1beta1). A Config with it and
// no Lanes places each edition on its lane (SplitLanes).
func BuiltinCatalog() (*form.Catalog, error) {
	c, _, err := BuiltinFamilies()
	return c, err
}

// BuiltinFamilies is LoadFamilies of --forms builtin: the host-wide
// catalog of both editions and each lane's installed set.
func BuiltinFamilies() (*form.Catalog, LaneSets, error) {
	return LoadFamilies(FamilySources([]string{BuiltinFamily}, nil))
}
