package host

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/ijson"
)

// BuiltinFamily is the --forms value that names the Edge family this
// binary ships, so it can be installed beside another family.
const BuiltinFamily = "builtin"

// FamilySource is one family to install: Name is how findings name its
// files (a directory path, or BuiltinFamily) and FS holds its documents.
type FamilySource struct {
	Name string
	FS   fs.FS
}

// CandidateSetFile is the file a published family lists its Forms in,
// each with the packageDigest of the Form Package it came from
// (spec/conformance-probe.md §4).
const CandidateSetFile = "candidate-set.json"

// LoadFamilies installs several families into one catalog (decision
// spec/decisions/0014-several-families-one-host.md). Every source must
// parse and verify on its own; then the union must not collide: two Forms
// under one (group, kind, definition version), or two Interfaces or
// Bindings under one name@version, are refused naming both files, even
// when the bytes are equal. Cross-document digests are checked over the
// union, so a family may name documents another source installs. A
// candidate-set.json gives the packageDigest of each Form it lists; one
// that names a Form no source installs is a finding. The error lists every
// finding as "SOURCE/FILE POINTER: message".
func LoadFamilies(sources []FamilySource) (*form.Catalog, error) {
	union := &form.Family{}
	var findings []form.Finding
	packages := map[form.FormRef]declaredPackage{}
	forms := map[string]string{} // identity line and definition version → file
	docs := map[string]string{}  // interface/binding name@version → file
	claim := func(seen map[string]string, key, file, what string) {
		if first, dup := seen[key]; dup {
			findings = append(findings, form.Finding{File: file, Message: fmt.Sprintf("%s is also defined by %s; one host installs one document per identity line and version: drop one of the two --forms families", what, first)})
			return
		}
		seen[key] = file
	}
	for _, src := range sources {
		fam, found := form.LoadFamily(src.FS)
		for _, f := range found {
			f.File = path.Join(src.Name, f.File)
			findings = append(findings, f)
		}
		if len(fam.Forms) == 0 && len(found) == 0 {
			findings = append(findings, form.Finding{File: src.Name, Message: "holds no Form definition (definition.json); pass a directory of a Form family"})
		}
		for _, f := range fam.Forms {
			f.Path = path.Join(src.Name, f.Path)
			r := f.Definition.Ref()
			claim(forms, r.APIVersion+" "+r.Kind+" "+r.DefinitionVersion, f.Path, "form "+r.APIVersion+" "+r.Kind+" "+r.DefinitionVersion)
			union.Forms = append(union.Forms, f)
		}
		for _, i := range fam.Interfaces {
			i.Path = path.Join(src.Name, i.Path)
			r := i.Definition.Ref()
			claim(docs, "interface "+r.Name+"@"+r.Version, i.Path, "interface "+r.Name+"@"+r.Version)
			union.Interfaces = append(union.Interfaces, i)
		}
		for _, b := range fam.Bindings {
			b.Path = path.Join(src.Name, b.Path)
			r := b.Definition.Ref()
			claim(docs, "binding "+r.Name+"@"+r.Version, b.Path, "binding "+r.Name+"@"+r.Version)
			union.Bindings = append(union.Bindings, b)
		}
		p, found := readPackageDigests(src)
		findings = append(findings, found...)
		for ref, d := range p {
			packages[ref] = d
		}
	}
	findings = append(findings, union.CheckReferences()...)
	installed := map[form.FormRef]bool{}
	for _, f := range union.Forms {
		installed[f.Definition.Ref()] = true
	}
	for ref, p := range packages {
		if !installed[ref] {
			findings = append(findings, form.Finding{File: p.file, Message: fmt.Sprintf("lists %s with a packageDigest, but no installed definition.json digests to that FormRef; fix the candidate set or install the Form", ref)})
		}
	}
	if len(findings) > 0 {
		sort.SliceStable(findings, func(i, j int) bool { return findings[i].File < findings[j].File })
		lines := make([]string, len(findings))
		for i, f := range findings {
			lines[i] = "  " + f.String()
		}
		return nil, fmt.Errorf("the --forms families have %d problem(s):\n%s", len(findings), strings.Join(lines, "\n"))
	}
	var c *form.Catalog
	var err error
	for _, f := range union.Forms {
		if c, err = c.AddForm(f.Definition, packages[f.Definition.Ref()].digest); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	for _, i := range union.Interfaces {
		c = c.AddInterface(i.Definition)
	}
	for _, b := range union.Bindings {
		c = c.AddBinding(b.Definition)
	}
	return c, nil
}

// FamilySources turns --forms values into sources: BuiltinFamily is the
// shipped Edge family, anything else a directory opened with open.
func FamilySources(values []string, open func(dir string) fs.FS) []FamilySource {
	out := make([]FamilySource, 0, len(values))
	for _, v := range values {
		if v == BuiltinFamily {
			out = append(out, FamilySource{Name: BuiltinFamily, FS: edge.Family()})
			continue
		}
		out = append(out, FamilySource{Name: v, FS: open(v)})
	}
	return out
}

// candidateSet is the part of a candidate-set.json the host reads.
type candidateSet struct {
	Forms []struct {
		FormRef       *form.FormRef `json:"formRef"`
		PackageDigest string        `json:"packageDigest"`
	} `json:"forms"`
}

// declaredPackage is a packageDigest and the candidate set declaring it.
type declaredPackage struct{ digest, file string }

// readPackageDigests reads every candidate-set.json under src that lists
// Forms, mapping each exact FormRef to its declared packageDigest.
func readPackageDigests(src FamilySource) (map[form.FormRef]declaredPackage, []form.Finding) {
	out := map[form.FormRef]declaredPackage{}
	var findings []form.Finding
	err := fs.WalkDir(src.FS, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Name() != CandidateSetFile {
			return nil
		}
		file := path.Join(src.Name, p)
		data, err := fs.ReadFile(src.FS, p)
		if err != nil {
			findings = append(findings, form.Finding{File: file, Message: err.Error()})
			return nil
		}
		if _, err := ijson.Decode(data); err != nil {
			findings = append(findings, form.Finding{File: file, Message: err.Error()})
			return nil
		}
		var set candidateSet
		if err := json.Unmarshal(data, &set); err != nil {
			findings = append(findings, form.Finding{File: file, Message: "not a candidate set: " + err.Error()})
			return nil
		}
		for i, f := range set.Forms {
			switch {
			case f.FormRef == nil && f.PackageDigest == "":
			case f.FormRef == nil:
				findings = append(findings, form.Finding{File: file, Pointer: fmt.Sprintf("/forms/%d", i), Message: "a packageDigest without a formRef; name the Form it belongs to"})
			case f.PackageDigest == "":
			case !ijson.ValidDigest(f.PackageDigest):
				findings = append(findings, form.Finding{File: file, Pointer: fmt.Sprintf("/forms/%d/packageDigest", i), Message: fmt.Sprintf("%q is not sha256:<64 lowercase hex>", f.PackageDigest)})
			default:
				out[*f.FormRef] = declaredPackage{f.PackageDigest, file}
			}
		}
		return nil
	})
	if err != nil {
		findings = append(findings, form.Finding{File: src.Name, Message: err.Error()})
	}
	return out, findings
}
