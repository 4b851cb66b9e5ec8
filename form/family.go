package form

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/takoform/takoform/ijson"
)

// DefinitionFile is the file name every Form, Interface and Binding
// definition has inside its own directory.
const DefinitionFile = "definition.json"

// Family is every definition found under one directory tree: Forms,
// Interfaces and Bindings, each with the slash path of its definition file.
type Family struct {
	Forms      []FamilyForm
	Interfaces []FamilyInterface
	Bindings   []FamilyBinding
}

// FamilyForm is a Form Definition and where it was read.
type FamilyForm struct {
	Path       string
	Definition *Definition
}

// FamilyInterface is an Interface Definition and where it was read.
type FamilyInterface struct {
	Path       string
	Definition *InterfaceDefinition
}

// FamilyBinding is a Binding Definition and where it was read.
type FamilyBinding struct {
	Path       string
	Definition *BindingDefinition
}

// Finding is one problem found while loading or verifying a family: the
// file (slash path inside the tree), the JSON pointer inside it ("" for
// the whole file) and what is wrong.
type Finding struct {
	File    string `json:"file"`
	Pointer string `json:"pointer,omitempty"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	if f.Pointer != "" {
		return f.File + " " + f.Pointer + ": " + f.Message
	}
	return f.File + ": " + f.Message
}

// LoadFamily reads every file named definition.json under fsys and parses
// it as a Form, Interface or Binding Definition by its kind. It returns
// what parsed and one Finding per file that did not.
func LoadFamily(fsys fs.FS) (*Family, []Finding) { return LoadFamilyDigested(fsys, nil) }

// LoadFamilyDigested is LoadFamily for a tree whose documents' digests
// (JCS + SHA-256, spec/host-api-v1alpha3.md §1.3) were recorded when it was
// generated, and which a test compares against its bytes: the built-in
// family a binary embeds (forms/edge's TestFamilyDigestCascade). digests
// maps a definition's slash path to its digest; a document it lists is
// given that digest instead of digesting its bytes again, one it does not
// list is digested. Every other check runs as in LoadFamily. A family read
// from a file or a URL is loaded with LoadFamily
// (spec/decisions/0037-provider-start.md).
func LoadFamilyDigested(fsys fs.FS, digests map[string]string) (*Family, []Finding) {
	fam := &Family{}
	var findings []Finding
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			findings = append(findings, Finding{File: p, Message: err.Error()})
			return nil
		}
		if e.IsDir() || e.Name() != DefinitionFile {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			findings = append(findings, Finding{File: p, Message: err.Error()})
			return nil
		}
		findings = append(findings, fam.add(p, data, digests[p])...)
		return nil
	})
	if err != nil {
		findings = append(findings, Finding{File: ".", Message: err.Error()})
	}
	return fam, findings
}

// add parses one definition by its kind; digest is its recorded digest, ""
// to compute it. Only the kind is read here (exact member name, other
// members skipped); the parser it picks checks the whole document (I-JSON,
// closed members) and reports its errors, the same as for any document.
func (fam *Family) add(p string, data []byte, digest string) []Finding {
	var head struct {
		Kind string `json:"kind"`
	}
	if jsonv2.Unmarshal(data, &head) != nil {
		head.Kind = "" // Parse refuses it with the checker's error
	}
	switch head.Kind {
	case interfaceDefinitionKind:
		d, err := parseInterface(data, digest)
		if err != nil {
			return errorFindings(p, err)
		}
		fam.Interfaces = append(fam.Interfaces, FamilyInterface{Path: p, Definition: d})
	case bindingDefinitionKind:
		d, err := parseBinding(data, digest)
		if err != nil {
			return errorFindings(p, err)
		}
		fam.Bindings = append(fam.Bindings, FamilyBinding{Path: p, Definition: d})
	default:
		d, err := parse(data, digest)
		if err != nil {
			return errorFindings(p, err)
		}
		fam.Forms = append(fam.Forms, FamilyForm{Path: p, Definition: d})
	}
	return nil
}

func errorFindings(file string, err error) []Finding {
	var je *ijson.Error
	var de *DefinitionError
	var ce *ContractError
	var out []Finding
	switch {
	case errors.As(err, &je):
		out = append(out, Finding{File: file, Pointer: je.Pointer, Message: je.Detail})
	case errors.As(err, &de):
		for _, p := range de.Problems {
			out = append(out, Finding{File: file, Pointer: p.Pointer, Message: p.Message})
		}
	case errors.As(err, &ce):
		for _, p := range ce.Problems {
			out = append(out, Finding{File: file, Pointer: p.Pointer, Message: p.Message})
		}
	default:
		out = append(out, Finding{File: file, Message: err.Error()})
	}
	return out
}

// Catalog installs the whole family into a new Catalog.
func (fam *Family) Catalog() (*Catalog, error) {
	var c *Catalog
	var err error
	for _, f := range fam.Forms {
		if c, err = c.AddForm(f.Definition, ""); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	for _, i := range fam.Interfaces {
		c = c.AddInterface(i.Definition)
	}
	for _, b := range fam.Bindings {
		c = c.AddBinding(b.Definition)
	}
	return c, nil
}

// CheckFixtures validates every Form's fixtures as a host would (defaults
// materialised, then the schema of the fixture's stage): every canonical
// fixture must be valid, every negative fixture must be refused.
func (fam *Family) CheckFixtures(fsys fs.FS) []Finding {
	var out []Finding
	for _, f := range fam.Forms {
		dir := path.Dir(f.Path)
		def := f.Definition
		for _, fx := range def.Fixtures() {
			for _, stage := range []struct{ stage, p string }{{"desired", fx.DesiredPath}, {"output", fx.OutputPath}} {
				if stage.p == "" {
					continue
				}
				file := path.Join(dir, stage.p)
				diags, err := checkFixture(fsys, def, stage.stage, file)
				if err != nil {
					out = append(out, Finding{File: file, Message: err.Error()})
				}
				for _, d := range diags {
					out = append(out, Finding{File: file, Pointer: d.Pointer, Message: fmt.Sprintf("canonical fixture %q is refused: %s", fx.Name, d.Message)})
				}
			}
		}
		for _, fx := range def.NegativeFixtures() {
			file := path.Join(dir, fx.InputPath)
			diags, err := checkFixture(fsys, def, fx.Stage, file)
			if err != nil {
				out = append(out, Finding{File: file, Message: err.Error()})
				continue
			}
			if len(diags) == 0 {
				out = append(out, Finding{File: file, Message: fmt.Sprintf("negative fixture %q (%s) is accepted by the %s schema; it must be refused", fx.Name, fx.ExpectedFailure, fx.Stage)})
			}
		}
	}
	return out
}

func checkFixture(fsys fs.FS, def *Definition, stage, file string) ([]Diagnostic, error) {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("fixture cannot be read: %w", err)
	}
	v, err := ijson.Decode(data)
	if err != nil {
		var je *ijson.Error
		if errors.As(err, &je) {
			return []Diagnostic{{Pointer: je.Pointer, Message: je.Detail}}, nil
		}
		return nil, err
	}
	switch stage {
	case "desired":
		return def.ValidateSpec(def.Materialize(v)), nil
	case "output":
		return def.ValidateOutputs(v), nil
	default:
		return nil, fmt.Errorf("fixtures of stage %q are not checked: no Edge Form declares an observed schema", stage)
	}
}

// CheckReferences checks that every exact reference one document makes to
// another document of the same family names that document's digest: Form
// → Interface (providedInterfaces, required-interface relations), Form →
// Binding (acceptedBindings), Form → Form (target FormRefs) and Binding →
// Interface. References to documents outside the family are not judged.
func (fam *Family) CheckReferences() []Finding {
	ifaces := map[string]string{}
	for _, i := range fam.Interfaces {
		r := i.Definition.Ref()
		ifaces[r.Name+"@"+r.Version] = r.SchemaDigest
	}
	binds := map[string]string{}
	for _, b := range fam.Bindings {
		r := b.Definition.Ref()
		binds[r.Name+"@"+r.Version] = r.SchemaDigest
	}
	forms := map[versionKey]string{}
	for _, f := range fam.Forms {
		r := f.Definition.Ref()
		forms[versionKey{r.APIVersion, r.Kind, r.DefinitionVersion}] = r.SchemaDigest
	}
	var out []Finding
	mismatch := func(file, ptr, what, named, actual string) {
		out = append(out, Finding{File: file, Pointer: ptr, Message: fmt.Sprintf("%s is named with digest %s but the family's document digests to %s; regenerate the referring document", what, named, actual)})
	}
	for _, f := range fam.Forms {
		def := f.Definition
		for i, r := range def.ProvidedInterfaces() {
			if have, ok := ifaces[r.Name+"@"+r.Version]; ok && have != r.SchemaDigest {
				mismatch(f.Path, fmt.Sprintf("/providedInterfaces/%d", i), "interface "+r.Name+"@"+r.Version, r.SchemaDigest, have)
			}
		}
		for i, r := range def.AcceptedBindings() {
			if have, ok := binds[r.Name+"@"+r.Version]; ok && have != r.SchemaDigest {
				mismatch(f.Path, fmt.Sprintf("/acceptedBindings/%d", i), "binding "+r.Name+"@"+r.Version, r.SchemaDigest, have)
			}
		}
		for _, rel := range def.Relations() {
			if ri := rel.RequiredInterface; ri != nil {
				if have, ok := ifaces[ri.Name+"@"+ri.Version]; ok && have != ri.SchemaDigest {
					mismatch(f.Path, "/desiredSchema"+rel.Pointer, "interface "+ri.Name+"@"+ri.Version, ri.SchemaDigest, have)
				}
			}
			for _, t := range rel.TargetFormRefs {
				if have, ok := forms[versionKey{t.APIVersion, t.Kind, t.DefinitionVersion}]; ok && have != t.SchemaDigest {
					mismatch(f.Path, "/desiredSchema"+rel.Pointer, "form "+t.Kind+" "+t.DefinitionVersion, t.SchemaDigest, have)
				}
			}
		}
	}
	for _, b := range fam.Bindings {
		r := b.Definition.TargetInterface()
		if have, ok := ifaces[r.Name+"@"+r.Version]; ok && have != r.SchemaDigest {
			mismatch(b.Path, "/targetInterface", "interface "+r.Name+"@"+r.Version, r.SchemaDigest, have)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}
