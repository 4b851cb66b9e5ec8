// Package surface derives, compares and explains a Terraform provider's
// schema surface: every resource type with its schema version and every
// attribute (nested ones by path) with its type and Required / Optional /
// Computed / Sensitive flags. A committed baseline is a FLOOR (seed 0030):
// additions pass; removals, type changes and tightenings are findings that
// name the `<type>_v2` to mint instead.
package surface

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Surface is a provider's schema surface: its resource types and its data
// sources (keyed by type name; a data source joins the floor like a
// resource type does, repo decisions 0004 and 0017).
type Surface struct {
	Types       map[string]Type `json:"types"`
	DataSources map[string]Type `json:"data_sources,omitempty"`
}

// Type is one resource type. Tombstones (baseline only) are attribute
// names retired when a break minted a `_v2`; they may never be reused.
type Type struct {
	Version    int64                `json:"version"`
	Attributes map[string]Attribute `json:"attributes"`
	Tombstones []string             `json:"tombstones,omitempty"`
}

// Attribute is one attribute; nested attributes appear under their path
// ("versions.worker_version").
type Attribute struct {
	Type      string `json:"type"`
	Required  bool   `json:"required,omitempty"`
	Optional  bool   `json:"optional,omitempty"`
	Computed  bool   `json:"computed,omitempty"`
	Sensitive bool   `json:"sensitive,omitempty"`
}

// Flags renders the flags as R/O/C/S letters.
func (a Attribute) Flags() string {
	var b strings.Builder
	for _, f := range []struct {
		on bool
		c  byte
	}{{a.Required, 'R'}, {a.Optional, 'O'}, {a.Computed, 'C'}, {a.Sensitive, 'S'}} {
		if f.on {
			b.WriteByte(f.c)
		}
	}
	return b.String()
}

// Parse reads a surface document (as Snapshot writes it).
func Parse(data []byte) (*Surface, error) {
	var s Surface
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("surface document: %w", err)
	}
	if s.Types == nil {
		return nil, fmt.Errorf("surface document has no types member")
	}
	return &s, nil
}

// JSON renders the surface deterministically (sorted keys, indented).
func (s *Surface) JSON() []byte {
	b, _ := json.MarshalIndent(s, "", "  ")
	return append(b, '\n')
}

// TypeNames lists the types, sorted.
func (s *Surface) TypeNames() []string { return sortedTypes(s.Types) }

// DataSourceNames lists the data sources, sorted.
func (s *Surface) DataSourceNames() []string { return sortedTypes(s.DataSources) }

func sortedTypes(m map[string]Type) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
