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

// SplitLanes is the lane sets of a catalog installed as one family (a
// Config without Lanes): lanesOf its Forms decides the lanes, and each
// gets the whole catalog. A catalog mixing both Edge groups is refused.
func SplitLanes(cat *form.Catalog) (LaneSets, error) {
	var defs []*form.Definition
	var paths []string
	for _, in := range cat.Forms() {
		defs = append(defs, in.Definition)
		r := in.Definition.Ref()
		paths = append(paths, r.APIVersion+" "+r.Kind+" "+r.DefinitionVersion)
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
