package host

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// BuiltinFamily is the --forms value that names the Edge family this
// binary ships, both editions (BuiltinV1alpha1 on lane v1alpha3,
// BuiltinV1beta1 on lane v1beta1), so it can be installed beside another
// family; it is also what a host without --forms installs.
const BuiltinFamily = "builtin"

// BuiltinV1alpha1 and BuiltinV1beta1 name one edition of the built-in
// family (edge.forms.takoform.com/v1alpha1, edge.forms.takoform.com/v1beta1),
// as a --forms value and as the source name findings start with: to serve
// the shipped edition of one Edge group beside another family of the
// other (spec/lane-v1beta1.md §2.5).
const (
	BuiltinV1alpha1 = BuiltinFamily + "/v1alpha1"
	BuiltinV1beta1  = BuiltinFamily + "/v1beta1"
)

// builtinEditions maps each --forms value naming built-in documents to
// its sources.
var builtinEditions = map[string][]FamilySource{
	BuiltinFamily:   {{Name: BuiltinV1alpha1, FS: edge.Family()}, {Name: BuiltinV1beta1, FS: edge.FamilyV1beta1()}},
	BuiltinV1alpha1: {{Name: BuiltinV1alpha1, FS: edge.Family()}},
	BuiltinV1beta1:  {{Name: BuiltinV1beta1, FS: edge.FamilyV1beta1()}},
}

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

// LoadFamilies installs several families (decision
// spec/decisions/0014-several-families-one-host.md) on the host's lanes
// (repo decision 0053, spec/lane-v1beta1.md §2.5 rules 1–2). Every source
// must parse and verify on its own and goes to lanes by the groups of its
// Forms (lanesOf): a source mixing both Edge groups is refused naming one
// file of each. Then, per lane, the sources installed on it must not
// collide: two Forms under one (group, kind, definition version), or two
// Interfaces or Bindings under one name@version, are refused naming both
// files, even when the bytes are equal; and every digest a document of the
// lane names must be the digest of the lane's document under that
// identity, so a family may name documents another source on the same
// lane installs. A candidate-set.json gives the packageDigest of each Form
// it lists; one that names a Form no source installs is a finding.
//
// It returns the host-wide catalog — every Form, Interface and Binding
// keyed by its exact ref — and each lane's installed set. The error lists
// every finding as "SOURCE/FILE POINTER: message".
func LoadFamilies(sources []FamilySource) (*form.Catalog, LaneSets, error) {
	lanes := map[string]*form.Family{}
	var findings []form.Finding
	packages := map[form.FormRef]declaredPackage{}
	for _, src := range sources {
		fam, found := form.LoadFamily(src.FS)
		for _, f := range found {
			f.File = path.Join(src.Name, f.File)
			findings = append(findings, f)
		}
		if len(fam.Forms) == 0 && len(found) == 0 {
			findings = append(findings, form.Finding{File: src.Name, Message: "holds no Form definition (definition.json); pass a directory of a Form family"})
		}
		var defs []*form.Definition
		var paths []string
		for i := range fam.Forms {
			fam.Forms[i].Path = path.Join(src.Name, fam.Forms[i].Path)
			defs, paths = append(defs, fam.Forms[i].Definition), append(paths, fam.Forms[i].Path)
		}
		for i := range fam.Interfaces {
			fam.Interfaces[i].Path = path.Join(src.Name, fam.Interfaces[i].Path)
		}
		for i := range fam.Bindings {
			fam.Bindings[i].Path = path.Join(src.Name, fam.Bindings[i].Path)
		}
		on, bad := lanesOf(defs, paths)
		if bad != nil {
			findings = append(findings, *bad)
		}
		for _, l := range on {
			u := lanes[l.Name]
			if u == nil {
				u = &form.Family{}
				lanes[l.Name] = u
			}
			u.Forms = append(u.Forms, fam.Forms...)
			u.Interfaces = append(u.Interfaces, fam.Interfaces...)
			u.Bindings = append(u.Bindings, fam.Bindings...)
		}
		p, found := readPackageDigests(src)
		findings = append(findings, found...)
		for ref, d := range p {
			packages[ref] = d
		}
	}
	installed := map[form.FormRef]bool{}
	for _, l := range wire.Lanes {
		if u := lanes[l.Name]; u != nil {
			findings = append(findings, laneFindings(l, u)...)
			for _, f := range u.Forms {
				installed[f.Definition.Ref()] = true
			}
		}
	}
	for ref, p := range packages {
		if !installed[ref] {
			findings = append(findings, form.Finding{File: p.file, Message: fmt.Sprintf("lists %s with a packageDigest, but no installed definition.json digests to that FormRef; fix the candidate set or install the Form", ref)})
		}
	}
	if len(findings) > 0 {
		sort.SliceStable(findings, func(i, j int) bool { return findings[i].File < findings[j].File })
		lines := make([]string, 0, len(findings))
		for _, f := range findings {
			if line := "  " + f.String(); !slices.Contains(lines, line) {
				lines = append(lines, line)
			}
		}
		return nil, nil, fmt.Errorf("the --forms families have %d problem(s):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var all *form.Catalog
	sets := LaneSets{}
	for _, l := range wire.Lanes {
		u := lanes[l.Name]
		if u == nil {
			continue
		}
		var c *form.Catalog
		var err error
		for _, f := range u.Forms {
			pkg := packages[f.Definition.Ref()].digest
			if c, err = c.AddForm(f.Definition, pkg); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			if all, err = all.AddForm(f.Definition, pkg); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", f.Path, err)
			}
		}
		for _, i := range u.Interfaces {
			c, all = c.AddInterface(i.Definition), all.AddInterface(i.Definition)
		}
		for _, b := range u.Bindings {
			c, all = c.AddBinding(b.Definition), all.AddBinding(b.Definition)
		}
		sets[l.Name] = c
	}
	return all, sets, nil
}

// laneFindings checks the union of the families installed on one lane:
// one document per identity line and version, and every digest reference
// naming the lane's own document (spec/lane-v1beta1.md §2.5 rule 2).
func laneFindings(l wire.Lane, u *form.Family) []form.Finding {
	var findings []form.Finding
	forms := map[string]string{} // identity line and definition version → file
	docs := map[string]string{}  // interface/binding name@version → file
	claim := func(seen map[string]string, key, file, what string) {
		if first, dup := seen[key]; dup && first != file {
			repair := "drop one of the two --forms families"
			if isBuiltin(first) || isBuiltin(file) {
				repair += " (--forms " + BuiltinFamily + " installs both shipped editions; --forms " + BuiltinV1alpha1 + " or --forms " + BuiltinV1beta1 + " installs only that one)"
			}
			findings = append(findings, form.Finding{File: file, Message: fmt.Sprintf("%s is also defined by %s; lane %s installs one document per identity line and version: %s", what, first, l.Name, repair)})
			return
		}
		seen[key] = file
	}
	for _, f := range u.Forms {
		r := f.Definition.Ref()
		claim(forms, r.APIVersion+" "+r.Kind+" "+r.DefinitionVersion, f.Path, "form "+r.APIVersion+" "+r.Kind+" "+r.DefinitionVersion)
	}
	for _, i := range u.Interfaces {
		r := i.Definition.Ref()
		claim(docs, "interface "+r.Name+"@"+r.Version, i.Path, "interface "+r.Name+"@"+r.Version)
	}
	for _, b := range u.Bindings {
		r := b.Definition.Ref()
		claim(docs, "binding "+r.Name+"@"+r.Version, b.Path, "binding "+r.Name+"@"+r.Version)
	}
	for _, f := range u.CheckReferences() {
		f.Message = "on lane " + l.Name + ": " + f.Message
		findings = append(findings, f)
	}
	return findings
}

// isBuiltin says file was read from a built-in edition.
func isBuiltin(file string) bool {
	return strings.HasPrefix(file, BuiltinV1alpha1+"/") || strings.HasPrefix(file, BuiltinV1beta1+"/")
}

// FamilySources turns --forms values into sources: BuiltinFamily is the
// shipped Edge family (two sources, one per edition), BuiltinV1alpha1 and
// BuiltinV1beta1 one edition of it, anything else a directory opened with
// open.
func FamilySources(values []string, open func(dir string) fs.FS) []FamilySource {
	out := make([]FamilySource, 0, len(values)+1)
	for _, v := range values {
		if b, ok := builtinEditions[v]; ok {
			out = append(out, b...)
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
