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

// BuiltinCatalog is the v1alpha1 edition of the Edge family this binary
// ships (--forms builtin/v1alpha1: group edge.forms.takoform.com/v1alpha1,
// lane v1alpha3 only), one Form per kind, for callers that want exactly
// that edition. The whole built-in family, as a host without --forms
// installs it, is BuiltinFamilies.
func BuiltinCatalog() (*form.Catalog, error) {
	c, _, err := LoadFamilies(FamilySources([]string{BuiltinV1alpha1}, nil))
	return c, err
}

// BuiltinFamilies is LoadFamilies of --forms builtin, what a host without
// --forms installs: the host-wide catalog of both editions
// (edge.forms.takoform.com/v1alpha1 on lane v1alpha3,
// edge.forms.takoform.com/v1beta1 on lane v1beta1) and each lane's
// installed set. A Config given that catalog without Lanes places each
// edition on its lane the same way (SplitLanes).
func BuiltinFamilies() (*form.Catalog, LaneSets, error) {
	return LoadFamilies(FamilySources([]string{BuiltinFamily}, nil))
}
