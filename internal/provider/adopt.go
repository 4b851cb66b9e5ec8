package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/takoform/takoform/client"
)

// Orphan is a planned create whose address the host already holds: most
// often what a killed OpenTofu created without recording it
// (spec/decisions/0007-orphan-recovery.md).
type Orphan struct {
	Address    string // the resource instance address in the configuration
	Type       string // takoform_… resource type
	Space      string
	Name       string
	UID        string // the host object's uid
	Generation string
}

// ImportID is the SPACE/NAME import ID (default create FormRef).
func (o Orphan) ImportID() string { return o.Space + "/" + o.Name }

// FindOrphans reads every planned create of a type reg knows in plan (the
// JSON of `tofu show -json PLANFILE`) and asks the host, through c, for
// the address it would create under the type's default create FormRef.
// It returns the creates the host already holds, sorted by address, and a
// note for each create it could not check (space or name unknown at plan).
// It changes nothing. Errors: a host answer other than found or
// resource_not_found (the *wire.Error, *client.TransportError … of Read).
func FindOrphans(ctx context.Context, c *client.Client, reg *Registry, plan *tfjson.Plan) ([]Orphan, []string, error) {
	var orphans []Orphan
	var notes []string
	for _, rc := range plan.ResourceChanges {
		t, ok := reg.Types[rc.Type]
		if rc.Mode != tfjson.ManagedResourceMode || !ok || rc.Change == nil || !rc.Change.Actions.Create() {
			continue
		}
		after, isObject := rc.Change.After.(map[string]any)
		space, sok := after[attrSpace].(string)
		name, nok := after[attrName].(string)
		if !isObject || !sok || !nok {
			notes = append(notes, fmt.Sprintf("%s: its space or name is known only after apply; not checked", rc.Address))
			continue
		}
		res, err := c.Read(ctx, client.Address{Space: space, Ref: t.DefaultCreate, Name: name})
		if client.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: read %s %q in space %q: %w", rc.Address, t.DefaultCreate.Kind, name, space, err)
		}
		orphans = append(orphans, Orphan{Address: rc.Address, Type: rc.Type, Space: space, Name: name, UID: res.Metadata.UID, Generation: res.Metadata.Generation})
	}
	sort.Slice(orphans, func(i, j int) bool { return orphans[i].Address < orphans[j].Address })
	return orphans, notes, nil
}

// ImportBlocks renders one OpenTofu import block per orphan, each after a
// comment naming the host object (kind-independent: uid and generation).
func ImportBlocks(orphans []Orphan) string {
	var b strings.Builder
	for _, o := range orphans {
		fmt.Fprintf(&b, "# %s is on the host (uid %s, generation %s) but in no state\nimport {\n  to = %s\n  id = %s\n}\n\n",
			o.Address, o.UID, o.Generation, o.Address, hclQuote(o.ImportID()))
	}
	return b.String()
}

// hclQuote is s as an HCL quoted string: backslash, quote and the
// whitespace escapes, and template openers "${" and "%{" doubled.
func hclQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`, "${", "$${", "%{", "%%{")
	return `"` + r.Replace(s) + `"`
}
