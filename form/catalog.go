package form

import (
	"fmt"
	"sort"
)

// Installed is one installed Form Definition with its optional package
// digest: audit evidence of the Form Package it came from, never part of
// any key (spec/host-api-v1alpha3.md §1.3).
type Installed struct {
	Definition    *Definition
	PackageDigest string
}

// Catalog is an immutable installed set (decision 0022): Form Definitions
// keyed by the whole FormRef 4-tuple, Interfaces by InterfaceRef and
// Bindings by BindingRef. Add* return a new Catalog and leave the receiver
// unchanged, so readers never lock. The zero value is an empty catalog.
type Catalog struct {
	forms      map[FormRef]Installed
	byVersion  map[versionKey]FormRef
	interfaces map[InterfaceRef]*InterfaceDefinition
	bindings   map[BindingRef]*BindingDefinition
}

type versionKey struct{ apiVersion, kind, definitionVersion string }

// ConflictError refuses a second definition under one (group, kind,
// definition version): a host installs one digest per definition version
// (spec/host-api-v1alpha3.md §8.1, form_identity_conflict).
type ConflictError struct {
	Installed, Refused FormRef
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("form %s %s %s is already installed with schema digest %s; a definition version carries one definition, so %s needs a new definitionVersion",
		e.Installed.APIVersion, e.Installed.Kind, e.Installed.DefinitionVersion, e.Installed.SchemaDigest, e.Refused.SchemaDigest)
}

func (c *Catalog) clone() *Catalog {
	n := &Catalog{
		forms:      make(map[FormRef]Installed, c.Len()+1),
		byVersion:  map[versionKey]FormRef{},
		interfaces: map[InterfaceRef]*InterfaceDefinition{},
		bindings:   map[BindingRef]*BindingDefinition{},
	}
	if c == nil {
		return n
	}
	for k, v := range c.forms {
		n.forms[k] = v
	}
	for k, v := range c.byVersion {
		n.byVersion[k] = v
	}
	for k, v := range c.interfaces {
		n.interfaces[k] = v
	}
	for k, v := range c.bindings {
		n.bindings[k] = v
	}
	return n
}

// AddForm returns a copy of c with def installed. Installing the identical
// FormRef again keeps the first entry (its package digest included); a
// different digest under an installed definition version is a
// *ConflictError.
func (c *Catalog) AddForm(def *Definition, packageDigest string) (*Catalog, error) {
	ref := def.Ref()
	key := versionKey{ref.APIVersion, ref.Kind, ref.DefinitionVersion}
	if c != nil {
		if have, ok := c.byVersion[key]; ok {
			if have == ref {
				return c, nil
			}
			return nil, &ConflictError{Installed: have, Refused: ref}
		}
	}
	n := c.clone()
	n.forms[ref] = Installed{Definition: def, PackageDigest: packageDigest}
	n.byVersion[key] = ref
	return n, nil
}

// AddInterface returns a copy of c with the Interface installed.
func (c *Catalog) AddInterface(d *InterfaceDefinition) *Catalog {
	n := c.clone()
	n.interfaces[d.Ref()] = d
	return n
}

// AddBinding returns a copy of c with the Binding installed.
func (c *Catalog) AddBinding(d *BindingDefinition) *Catalog {
	n := c.clone()
	n.bindings[d.Ref()] = d
	return n
}

// Len is the number of installed Form Definitions.
func (c *Catalog) Len() int {
	if c == nil {
		return 0
	}
	return len(c.forms)
}

// Form returns the definition installed under exactly ref (all four
// members); there is no fallback to group and kind.
func (c *Catalog) Form(ref FormRef) (Installed, bool) {
	if c == nil {
		return Installed{}, false
	}
	in, ok := c.forms[ref]
	return in, ok
}

// FormByVersion returns the one definition installed for a group, kind and
// definition version (the support-form route, spec/host-api-v1alpha3.md §8.1).
func (c *Catalog) FormByVersion(apiVersion, kind, definitionVersion string) (Installed, bool) {
	if c == nil {
		return Installed{}, false
	}
	ref, ok := c.byVersion[versionKey{apiVersion, kind, definitionVersion}]
	if !ok {
		return Installed{}, false
	}
	return c.forms[ref], true
}

// Forms lists every installed definition sorted by group, kind, then
// definition version text.
func (c *Catalog) Forms() []Installed {
	if c == nil {
		return nil
	}
	out := make([]Installed, 0, len(c.forms))
	for _, in := range c.forms {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return lessRef(out[i].Definition.Ref(), out[j].Definition.Ref()) })
	return out
}

// Versions lists the installed definitions of one group and kind.
func (c *Catalog) Versions(apiVersion, kind string) []Installed {
	var out []Installed
	for _, in := range c.Forms() {
		if r := in.Definition.Ref(); r.APIVersion == apiVersion && r.Kind == kind {
			out = append(out, in)
		}
	}
	return out
}

// Interface returns the Interface installed under exactly ref.
func (c *Catalog) Interface(ref InterfaceRef) (*InterfaceDefinition, bool) {
	if c == nil {
		return nil, false
	}
	d, ok := c.interfaces[ref]
	return d, ok
}

// Binding returns the Binding installed under exactly ref.
func (c *Catalog) Binding(ref BindingRef) (*BindingDefinition, bool) {
	if c == nil {
		return nil, false
	}
	d, ok := c.bindings[ref]
	return d, ok
}

// Interfaces lists installed Interfaces sorted by name then version.
func (c *Catalog) Interfaces() []*InterfaceDefinition {
	if c == nil {
		return nil
	}
	out := make([]*InterfaceDefinition, 0, len(c.interfaces))
	for _, d := range c.interfaces {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref().String() < out[j].Ref().String() })
	return out
}

// Bindings lists installed Bindings sorted by name then version.
func (c *Catalog) Bindings() []*BindingDefinition {
	if c == nil {
		return nil
	}
	out := make([]*BindingDefinition, 0, len(c.bindings))
	for _, d := range c.bindings {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref().String() < out[j].Ref().String() })
	return out
}

func lessRef(a, b FormRef) bool {
	if a.APIVersion != b.APIVersion {
		return a.APIVersion < b.APIVersion
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.DefinitionVersion < b.DefinitionVersion
}
