package surface

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Rule is one floor rule: a stable ID, one line saying what it protects,
// and the check (buf-style catalogue).
type Rule struct {
	ID  string
	Doc string
}

// The rules, in report order.
var (
	TypeRemoved      = Rule{"TYPE_REMOVED", "a resource type never disappears: configurations and state name it"}
	AttributeRemoved = Rule{"ATTRIBUTE_REMOVED", "an attribute never disappears: configurations and state name it"}
	TypeChanged      = Rule{"ATTRIBUTE_TYPE_CHANGED", "an attribute keeps its type, element and nested types included"}
	BecameRequired   = Rule{"BECAME_REQUIRED", "an optional attribute never becomes required: existing configurations omit it"}
	NewRequired      = Rule{"NEW_REQUIRED_ATTRIBUTE", "a new attribute is never required: existing configurations lack it"}
	OptionalLost     = Rule{"OPTIONAL_LOST", "an attribute a configuration may set stays settable"}
	ComputedLost     = Rule{"COMPUTED_LOST", "a computed-only attribute stays computed: configurations never set it"}
	SensitiveLost    = Rule{"SENSITIVE_LOST", "a sensitive attribute stays sensitive: plans and logs must not start showing it"}
	VersionDecreased = Rule{"SCHEMA_VERSION_DECREASED", "a schema version never goes down: state written at the higher version exists"}
	TombstoneReused  = Rule{"RETIRED_NAME_REUSED", "a name retired by a break is never reused with a new meaning"}
	Rules            = []Rule{TypeRemoved, AttributeRemoved, TypeChanged, BecameRequired, NewRequired, OptionalLost, ComputedLost, SensitiveLost, VersionDecreased, TombstoneReused}
)

// Finding is one violation: the rule, the element and what to do.
type Finding struct {
	Rule      string `json:"rule"`
	Type      string `json:"type"`
	Attribute string `json:"attribute,omitempty"`
	Message   string `json:"message"`
	Remedy    string `json:"remedy"`
}

func (f Finding) String() string {
	el := f.Type
	if f.Attribute != "" {
		el += "." + f.Attribute
	}
	return fmt.Sprintf("%s %s: %s. %s", f.Rule, el, f.Message, f.Remedy)
}

// DataPrefix marks a data source in a finding's Type ("data.takoform_x").
const DataPrefix = "data."

func remedy(typeName string) string {
	return fmt.Sprintf("Keep the old surface and mint %s_v2 for the breaking change (decision 0030); edit the baseline only to record a deliberate compatibility decision.", strings.TrimPrefix(typeName, DataPrefix))
}

// Check holds current to baseline as a floor and returns every finding,
// sorted by type, attribute and rule. Data sources are held by the same
// rules; their findings name the element "data.<name>".
func Check(baseline, current *Surface) []Finding {
	out := checkTypes(baseline.Types, current.Types, "", "resource type")
	out = append(out, checkTypes(baseline.DataSources, current.DataSources, DataPrefix, "data source")...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].Attribute < out[j].Attribute
	})
	return out
}

func checkTypes(baseline, current map[string]Type, prefix, what string) []Finding {
	var out []Finding
	add := func(r Rule, typ, attr, format string, args ...any) {
		out = append(out, Finding{Rule: r.ID, Type: prefix + typ, Attribute: attr, Message: fmt.Sprintf(format, args...), Remedy: remedy(typ)})
	}
	for _, tn := range sortedTypes(baseline) {
		bt := baseline[tn]
		ct, ok := current[tn]
		if !ok {
			add(TypeRemoved, tn, "", "%s %s is gone", what, tn)
			continue
		}
		if ct.Version < bt.Version {
			add(VersionDecreased, tn, "", "schema version went from %d to %d", bt.Version, ct.Version)
		}
		for _, an := range slices.Sorted(maps.Keys(bt.Attributes)) {
			ba := bt.Attributes[an]
			ca, ok := ct.Attributes[an]
			if !ok {
				add(AttributeRemoved, tn, an, "attribute %s is gone", an)
				continue
			}
			if ca.Type != ba.Type {
				add(TypeChanged, tn, an, "type changed from %s to %s", ba.Type, ca.Type)
			}
			switch {
			case ba.Optional && ca.Required:
				add(BecameRequired, tn, an, "optional attribute became required")
			case ba.Optional && !ca.Optional:
				add(OptionalLost, tn, an, "attribute lost Optional (%s → %s)", ba.Flags(), ca.Flags())
			}
			if ba.Computed && !ba.Optional && !ba.Required && !ca.Computed {
				add(ComputedLost, tn, an, "computed-only attribute lost Computed (%s → %s)", ba.Flags(), ca.Flags())
			}
			if ba.Sensitive && !ca.Sensitive {
				add(SensitiveLost, tn, an, "attribute lost Sensitive")
			}
		}
		for _, an := range slices.Sorted(maps.Keys(ct.Attributes)) {
			if _, had := bt.Attributes[an]; had {
				continue
			}
			// A nested member added under an existing attribute changes that
			// attribute's type, which TypeChanged reports.
			if ct.Attributes[an].Required && !strings.Contains(an, ".") {
				add(NewRequired, tn, an, "new attribute %s is required", an)
			}
			for _, tomb := range bt.Tombstones {
				if tomb == an {
					add(TombstoneReused, tn, an, "name %s was retired and is used again", an)
				}
			}
		}
	}
	return out
}
