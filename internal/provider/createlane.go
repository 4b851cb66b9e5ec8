package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

// validCreateLane checks the create_lane setting (or
// TAKOFORM_CREATE_LANE): unset, "v1beta1" or "v1alpha3"
// (spec/lane-v1beta1.md §13.6).
func validCreateLane(s string) error {
	switch s {
	case "", wire.V1alpha3.Version(), wire.V1beta1.Version():
		return nil
	}
	return fmt.Errorf("create_lane (or TAKOFORM_CREATE_LANE) is %q; set %q or %q, or leave it unset to create each resource in the family of its relation targets", s, wire.V1beta1.Version(), wire.V1alpha3.Version())
}

// createRefusal is a plan-time refusal of the create family rule: the
// code and the sentence saying what is wrong and how to repair it.
type createRefusal struct {
	code Code
	err  error
}

// target is one relation target named in a planned resource: its kind
// and name; hint marks a revision's owner, looked up as a ModuleWorker
// to pick the family only (it is not a relation, so it never refuses).
type target struct {
	kind, name string
	hint       bool
}

// knownTargets lists the relation targets of plan whose names are known
// (an unknown name is created in the same apply: it passes), then, for a
// revision, its owner as a hint.
func (r *Resource) knownTargets(c *Codec, plan map[string]any) []target {
	var out []target
	var walk func(fields []Field, attrs map[string]any)
	walk = func(fields []Field, attrs map[string]any) {
		for _, f := range fields {
			v := attrs[f.Attr]
			switch f.Kind {
			case KindRelation:
				if s, ok := v.(string); ok && s != "" {
					out = append(out, target{kind: f.Target, name: s})
				}
			case KindBindingList, KindObjectList:
				l, ok := v.([]any)
				if !ok {
					continue
				}
				for _, it := range l {
					m, ok := it.(map[string]any)
					if !ok {
						continue
					}
					if f.Kind == KindObjectList {
						walk(f.Nested, m)
					} else if s, ok := m["target_name"].(string); ok && s != "" {
						out = append(out, target{kind: f.Target, name: s})
					}
				}
			}
		}
	}
	if plan != nil {
		walk(c.Fields, plan)
		if s, ok := plan[attrRevisionOwner].(string); ok && s != "" && r.spec.Revision {
			out = append(out, target{kind: "ModuleWorker", name: s, hint: true})
		}
	}
	return out
}

// createCodec is the codec a new resource of the type is created (or, by
// NAME or SPACE/NAME, imported) under (spec/lane-v1beta1.md §13.6, §13.7):
//
//  1. the family: create_lane's when set; else the one family in which
//     the known relation targets of plan exist (looked up by exact reads
//     in both groups, cached per configuration) or, for a target this
//     run plans to create, the family its plan chose (notePlanned); with
//     none, v1beta1 when
//     that lane is negotiated and its support profiles list the type's
//     v1beta1 ref, else v1alpha3. A target found in both families with no
//     create_lane refuses, naming both and the setting; a target found
//     only in the other family refuses
//     (takoform.provider/relation-target-other-family).
//  2. within the family, our own ref when its lane serves it, else the
//     public equivalent when that is served (repo decision 0016); when
//     neither is, our own, and the plan-time support check refuses naming
//     both (servedNeither).
//
// plan is nil for an import; space is the resource's space.
func (r *Resource) createCodec(ctx context.Context, plan map[string]any, space string) (*Codec, *createRefusal) {
	fams := r.spec.families()
	if r.data == nil {
		return fams[0].ours, nil
	}
	if len(fams) == 1 {
		// a type of one family: create_lane can only name another lane
		// when that family is an Edge group bound to a lane
		if l, ok := edgeLane(fams[0].group); ok && r.data.CreateLane != "" && l.Version() != r.data.CreateLane {
			return fams[0].ours, &createRefusal{CodeHostDoesNotSupportForm, fmt.Errorf("%s exists only in %s, on lane %s; create_lane is %q: unset it or set it to %q",
				r.spec.Name, fams[0].group, l.Name, r.data.CreateLane, l.Version())}
		}
		return r.pickCodec(ctx, fams[0]), nil
	}
	targets := r.knownTargets(fams[0].ours, plan)
	found := make([][]bool, len(targets)) // found[i][f]: target i exists (or is planned) in family f
	planned := make([]bool, len(targets)) // target i does not exist yet: this run plans it
	for i, t := range targets {
		found[i] = make([]bool, len(fams))
		for f, fam := range fams {
			found[i][f] = r.data.targetExists(ctx, space, fam.group, t.kind, t.name)
		}
		if !t.hint && !found[i][0] && !found[i][1] {
			if g, ok := r.data.planned.Load(plannedKey(space, t.kind, t.name)); ok {
				for f, fam := range fams {
					if fam.group == g {
						found[i][f], planned[i] = true, true
					}
				}
			}
		}
	}
	chosen := -1
	if want := r.data.CreateLane; want != "" {
		for f, fam := range fams {
			if l, ok := edgeLane(fam.group); ok && l.Version() == want {
				chosen = f
			}
		}
		if chosen < 0 {
			return fams[0].ours, &createRefusal{CodeHostDoesNotSupportForm, fmt.Errorf("%s has no Form in the family of lane %s (create_lane); unset create_lane or set it to another lane", r.spec.Name, want)}
		}
	} else {
		for i, t := range targets {
			if !t.hint && found[i][0] && found[i][1] {
				return fams[0].ours, &createRefusal{CodeTargetOtherFamily, fmt.Errorf(
					"the relation target %s %q exists in both %s and %s, so the family to create %s in is ambiguous; set the provider's create_lane (or TAKOFORM_CREATE_LANE) to %q or %q",
					t.kind, t.name, fams[0].group, fams[1].group, r.spec.Name, laneWord(fams[1].group), laneWord(fams[0].group))}
			}
		}
		// existing targets decide first, then targets this run plans,
		// then a revision's owner
		rank := func(i int) int {
			switch {
			case targets[i].hint:
				return 2
			case planned[i]:
				return 1
			}
			return 0
		}
		for pass := range 3 {
			for i := range targets {
				if chosen < 0 && rank(i) == pass && found[i][0] != found[i][1] {
					chosen = map[bool]int{true: 0, false: 1}[found[i][0]]
				}
			}
		}
		if chosen < 0 {
			chosen = r.defaultFamily(ctx, fams)
		}
	}
	for i, t := range targets {
		if t.hint || found[i][chosen] {
			continue
		}
		for f := range fams {
			if f != chosen && found[i][f] && planned[i] {
				return fams[chosen].ours, &createRefusal{CodeTargetOtherFamily, fmt.Errorf(
					"%s would be created in %s, but this plan creates its relation target %s %q in %s, and the two families cannot relate to each other "+
						"(nothing ties the target to a family: it has no existing relation target of its own and no revision_owner); "+
						"set the provider's create_lane (or TAKOFORM_CREATE_LANE) to %q so this configuration creates in one family, "+
						"or tie the target to the aggregate (for a revision: revision_owner in place of a pinned name)",
					r.spec.Name, fams[chosen].group, t.kind, t.name, fams[f].group, laneWord(fams[chosen].group))}
			}
			if f != chosen && found[i][f] {
				return fams[chosen].ours, &createRefusal{CodeTargetOtherFamily, fmt.Errorf(
					"%s would be created in %s, but its relation target %s %q exists only in %s, and the two families cannot relate to each other; "+
						"set the provider's create_lane (or TAKOFORM_CREATE_LANE) to %q, or move the aggregate (create the target in %s too, or replace the resources of %s explicitly)",
					r.spec.Name, fams[chosen].group, t.kind, t.name, fams[f].group, laneWord(fams[f].group), fams[chosen].group, fams[f].group)}
			}
		}
	}
	return r.pickCodec(ctx, fams[chosen]), nil
}

// defaultFamily is the family of a new resource with no known existing
// target: the newest family whose lane is negotiated and lists the type's
// ref there (ours or the public equivalent), else the oldest.
func (r *Resource) defaultFamily(ctx context.Context, fams []createFamily) int {
	for f := len(fams) - 1; f > 0; f-- {
		if r.served(ctx, fams[f].ours) || (fams[f].public != nil && r.served(ctx, fams[f].public)) {
			return f
		}
	}
	return 0
}

// served says the lane of c's ref lists it in its support profiles.
func (r *Resource) served(ctx context.Context, c *Codec) bool {
	_, ok, err := r.data.profileOf(ctx, c.Ref)
	return err == nil && ok
}

// pickCodec is repo decision 0016 within one family: ours when served,
// else the public equivalent when served, else ours.
func (r *Resource) pickCodec(ctx context.Context, fam createFamily) *Codec {
	if fam.public == nil || r.data == nil {
		return fam.ours
	}
	p, err := r.data.profilesOn(ctx, r.data.laneOf(ctx, fam.ours.Ref))
	if err != nil {
		return fam.ours
	}
	if _, ok := p[fam.ours.Ref.String()]; ok {
		return fam.ours
	}
	if _, ok := p[fam.public.Ref.String()]; ok {
		return fam.public
	}
	return fam.ours
}

// laneWord is the create_lane value of an Edge group's lane.
func laneWord(group string) string {
	if l, ok := edgeLane(group); ok {
		return l.Version()
	}
	return group
}

// targetExists says whether a resource of kind named name exists in space
// under any ref of group the build supports for that kind, by exact
// reads, cached per configuration (spec/lane-v1beta1.md §13.6 rule 2). A
// ref its lane does not serve, a lane that is unavailable or a read that
// fails count as absent: the host decides at apply.
func (d *Data) targetExists(ctx context.Context, space, group, kind, name string) bool {
	key := strings.Join([]string{space, group, kind, name}, "\x00")
	if v, ok := d.targets.Load(key); ok {
		return v == true // targets holds only bools
	}
	exists := false
	for _, ref := range d.refsOf(group, kind) {
		if _, ok, err := d.profileOf(ctx, ref); err != nil || !ok {
			continue
		}
		c, err := d.clientFor(ctx, ref)
		if err != nil {
			continue
		}
		if _, err := c.Read(ctx, client.Address{Space: space, Ref: ref, Name: name}); err == nil {
			exists = true
			break
		}
	}
	d.targets.Store(key, exists)
	return exists
}

// refsOf lists the refs of group and kind some type of the registry has a
// codec for.
func (d *Data) refsOf(group, kind string) []form.FormRef {
	var out []form.FormRef
	if d.Registry == nil {
		return nil
	}
	for _, t := range d.Registry.Types {
		for _, ref := range t.KnownRefs() {
			if ref.APIVersion == group && ref.Kind == kind {
				out = append(out, ref)
			}
		}
	}
	return out
}

// plannedKey names a planned create by space, Form kind and name.
func plannedKey(space, kind, name string) string {
	return space + "\x00" + kind + "\x00" + name
}

// notePlanned records the family a planned create of kind named name (a
// string; anything else is not recorded) in space was given, so a
// resource planned after it in the same run that names it as a relation
// target sees its family (createCodec). OpenTofu plans a target before
// the resources that reference it.
func (d *Data) notePlanned(space, kind string, name any, group string) {
	if n, ok := name.(string); ok && n != "" {
		d.planned.Store(plannedKey(space, kind, n), group)
	}
}
