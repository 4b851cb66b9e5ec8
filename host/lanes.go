package host

import (
	"fmt"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

// laneOfGroup binds each lane's Edge group to that lane alone
// (wire.Lane.EdgeGroup, spec/lane-v1beta1.md §2.5 rule 1); a group absent
// here — a third-party family, the probe's second group — is answered on
// every lane.
var laneOfGroup = func() map[string]wire.Lane {
	m := map[string]wire.Lane{}
	for _, l := range wire.Lanes {
		m[l.EdgeGroup] = l
	}
	return m
}()

// LaneSets is the installed set of each lane, keyed by lane name
// (wire.Lane.Name): which exact FormRefs, Interfaces and Bindings that
// lane answers (spec/lane-v1beta1.md §2.5 rules 1–3). Every set is a view
// of the host-wide catalog: the same definitions under the same exact refs.
type LaneSets map[string]*form.Catalog

// lanesOf decides the lanes one family (one --forms source) is installed
// on, from the groups of its Forms: an Edge group binds the family to
// that group's lane, any other group leaves it on every lane. A family
// holding Forms of two Edge groups is a finding naming one file of each.
// paths[i] is where forms[i] was read.
func lanesOf(forms []*form.Definition, paths []string) ([]wire.Lane, *form.Finding) {
	var bound wire.Lane
	var boundGroup, boundFile string
	for i, def := range forms {
		l, ok := laneOfGroup[def.Ref().APIVersion]
		if !ok {
			continue
		}
		if bound.Name != "" && l != bound {
			return nil, &form.Finding{File: paths[i], Message: fmt.Sprintf(
				"is a Form of group %s, but %s in the same family is of group %s; one family serves one lane (spec/lane-v1beta1.md §2.5): install the two Edge families as two --forms directories",
				def.Ref().APIVersion, boundFile, boundGroup)}
		}
		bound, boundGroup, boundFile = l, def.Ref().APIVersion, paths[i]
	}
	if bound.Name == "" {
		return wire.Lanes, nil
	}
	return []wire.Lane{bound}, nil
}

// SplitLanes is the lane sets of a catalog installed without lane sets (a
// Config without Lanes). A catalog holding Forms of at most one Edge
// group is one family: lanesOf its Forms decides the lanes, and each gets
// the whole catalog. A catalog holding both Edge groups (the built-in
// family's, BuiltinFamilies, with or without more Forms) is split the way
// LoadFamilies places two families: each Edge Form goes to its group's
// lane, any other Form to every lane; an Interface or Binding goes to
// every lane one of whose Edge Forms names its exact digest (or whose
// Bindings target it), and one no Edge Form names to every lane
// (spec/lane-v1beta1.md §2.5 rules 1–2). A lane left with two documents
// of one name@version is refused: install such families with
// LoadFamilies, which names the files.
func SplitLanes(cat *form.Catalog) (LaneSets, error) {
	var defs []*form.Definition
	var paths []string
	groups := map[string]bool{}
	for _, in := range cat.Forms() {
		defs = append(defs, in.Definition)
		r := in.Definition.Ref()
		paths = append(paths, r.APIVersion+" "+r.Kind+" "+r.DefinitionVersion)
		if _, edge := laneOfGroup[r.APIVersion]; edge {
			groups[r.APIVersion] = true
		}
	}
	if len(groups) > 1 {
		return splitEdgeGroups(cat)
	}
	lanes, bad := lanesOf(defs, paths)
	if bad != nil {
		return nil, fmt.Errorf("host: form %s %s", bad.File, bad.Message)
	}
	out := LaneSets{}
	for _, l := range lanes {
		out[l.Name] = cat
	}
	return out, nil
}

// splitEdgeGroups is SplitLanes of a catalog holding both Edge groups.
func splitEdgeGroups(cat *form.Catalog) (LaneSets, error) {
	// named[lane] holds the interface and binding refs (as strings) the
	// lane's Edge Forms name; edgeNamed is their union.
	named := map[string]map[string]bool{}
	edgeNamed := map[string]bool{}
	for _, in := range cat.Forms() {
		l, ok := laneOfGroup[in.Definition.Ref().APIVersion]
		if !ok {
			continue
		}
		if named[l.Name] == nil {
			named[l.Name] = map[string]bool{}
		}
		for _, r := range in.Definition.ProvidedInterfaces() {
			named[l.Name][ifaceKey(r)], edgeNamed[ifaceKey(r)] = true, true
		}
		for _, r := range in.Definition.AcceptedBindings() {
			named[l.Name][bindingKey(r)], edgeNamed[bindingKey(r)] = true, true
		}
		for _, rel := range in.Definition.Relations() {
			if ri := rel.RequiredInterface; ri != nil {
				named[l.Name][ifaceKey(*ri)], edgeNamed[ifaceKey(*ri)] = true, true
			}
		}
	}
	// A Binding a lane installs brings the Interface it targets.
	for _, b := range cat.Bindings() {
		t := ifaceKey(b.TargetInterface())
		for _, set := range named {
			if set[bindingKey(b.Ref())] {
				set[t], edgeNamed[t] = true, true
			}
		}
	}
	onLane := func(l wire.Lane, ref string) bool { return !edgeNamed[ref] || named[l.Name][ref] }
	out := LaneSets{}
	for _, l := range wire.Lanes {
		var c *form.Catalog
		var err error
		for _, in := range cat.Forms() {
			if el, edge := laneOfGroup[in.Definition.Ref().APIVersion]; edge && el != l {
				continue
			}
			if c, err = c.AddForm(in.Definition, in.PackageDigest); err != nil {
				return nil, fmt.Errorf("host: lane %s: %w", l.Name, err)
			}
		}
		seen := map[string]string{}
		twice := func(what, name, version, digest string) error {
			k := what + " " + name + "@" + version
			if d, dup := seen[k]; dup && d != digest {
				return fmt.Errorf("host: lane %s would install %s twice (%s and %s): a lane installs one document per name@version; install the families with host.LoadFamilies (takoform host serve --forms), which places each on its lane", l.Name, k, d, digest)
			}
			seen[k] = digest
			return nil
		}
		for _, d := range cat.Interfaces() {
			if r := d.Ref(); onLane(l, ifaceKey(r)) {
				if err := twice("interface", r.Name, r.Version, r.SchemaDigest); err != nil {
					return nil, err
				}
				c = c.AddInterface(d)
			}
		}
		for _, d := range cat.Bindings() {
			if r := d.Ref(); onLane(l, bindingKey(r)) {
				if err := twice("binding", r.Name, r.Version, r.SchemaDigest); err != nil {
					return nil, err
				}
				c = c.AddBinding(d)
			}
		}
		out[l.Name] = c
	}
	return out, nil
}

// ifaceKey and bindingKey key an exact Interface or Binding reference.
func ifaceKey(r form.InterfaceRef) string { return "interface " + r.String() }
func bindingKey(r form.BindingRef) string { return "binding " + r.String() }

// laneView is one lane as the server answers it: the wire lane and its
// installed set.
type laneView struct {
	wire.Lane
	catalog *form.Catalog
}

// laneViews checks sets against the host-wide catalog and returns one
// view per lane the host serves, in wire.Lanes order; a lane with no set
// answers an empty installed set.
func laneViews(all *form.Catalog, sets LaneSets) ([]*laneView, error) {
	var unknown []string
	for name := range sets {
		if l, ok := wire.LaneNamed(name); !ok || l.Name != name {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("host: Config.Lanes names %q, not a lane this host serves (%s)", unknown, strings.Join(wire.LaneNames(), ", "))
	}
	views := make([]*laneView, 0, len(wire.Lanes))
	for _, l := range wire.Lanes {
		cat := sets[l.Name]
		// Execution (relations, rendering, operations committed later)
		// reads the host-wide catalog by exact ref, so it must hold every
		// document of every lane.
		for _, in := range cat.Forms() {
			if _, ok := all.Form(in.Definition.Ref()); !ok {
				return nil, fmt.Errorf("host: lane %s installs form %s, which Config.Catalog lacks", l.Name, in.Definition.Ref())
			}
		}
		for _, d := range cat.Interfaces() {
			if _, ok := all.Interface(d.Ref()); !ok {
				return nil, fmt.Errorf("host: lane %s installs interface %s, which Config.Catalog lacks", l.Name, d.Ref())
			}
		}
		for _, d := range cat.Bindings() {
			if _, ok := all.Binding(d.Ref()); !ok {
				return nil, fmt.Errorf("host: lane %s installs binding %s, which Config.Catalog lacks", l.Name, d.Ref())
			}
		}
		views = append(views, &laneView{Lane: l, catalog: cat})
	}
	return views, nil
}

// otherLanes is the repair clause of a form_unknown for a ref another lane
// installs: where the ref is answered instead, or "" when nowhere.
func (s *Server) otherLanes(r *request, ref form.FormRef) string {
	var on []string
	for _, ln := range s.lanes {
		if ln != r.lane {
			if _, ok := ln.catalog.Form(ref); ok {
				on = append(on, ln.APIBase)
			}
		}
	}
	if len(on) == 0 {
		return ""
	}
	return "; it is installed on " + strings.Join(on, " and ") + ": send the request there"
}
