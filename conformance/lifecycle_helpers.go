package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/wire"
)

// Helpers of the discovery (forms.go) and lifecycle checks about Forms.

// fmFamily is this build's Edge family, loaded once.
var fmFamily = sync.OnceValue(func() *form.Family {
	fam, _ := form.LoadFamily(edge.Family())
	return fam
})

// fmFamilyDef is this build's Edge definition with exactly ref, if any.
func fmFamilyDef(ref form.FormRef) *form.Definition {
	fam := fmFamily()
	if fam == nil {
		return nil
	}
	for _, ff := range fam.Forms {
		if ff.Definition.Ref() == ref {
			return ff.Definition
		}
	}
	return nil
}

// fmCaps lists a definition's lifecycle capabilities as strings.
func fmCaps(def *form.Definition) []string {
	out := []string{}
	for _, c := range def.Capabilities() {
		out = append(out, string(c))
	}
	return out
}

// fmSameSet reports whether a and b hold the same strings.
func fmSameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// fmCheckOperations checks an operations list: closed vocabulary, no
// duplicates, never refresh, and the base capabilities present.
func fmCheckOperations(ops []string) error {
	seen := map[string]bool{}
	for _, o := range ops {
		if !slices.Contains(fmOperations, o) || seen[o] {
			return fmt.Errorf("operations %v: %q is unknown, duplicated or refresh", ops, o)
		}
		seen[o] = true
	}
	for _, o := range []string{"create", "read", "delete"} {
		if !seen[o] {
			return fmt.Errorf("operations %v lack %s", ops, o)
		}
	}
	return nil
}

// fmFlip changes the last hex digit of a digest.
func fmFlip(d string) string {
	last := d[len(d)-1]
	repl := byte('0')
	if last == '0' {
		repl = '1'
	}
	return d[:len(d)-1] + string(repl)
}

// fmBool is 1 for true.
func fmBool(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fmEmptyValid reports whether an empty spec is valid under ref.
func (e *Env) fmEmptyValid(ctx context.Context, ref form.FormRef) bool {
	v, err := e.A1.Validate(ctx, e.RequestIn(e.Space, ref, "probe", map[string]any{}))
	return err == nil && v.Valid
}

// fmCreate creates name under an exact ref with an empty spec as c.
func (e *Env) fmCreate(ctx context.Context, c *client.Client, space string, ref form.FormRef, name string) (*wire.Resource, error) {
	res, err := e.Apply(ctx, c, e.RequestIn(space, ref, name, map[string]any{}), nil)
	if err != nil {
		return nil, fmt.Errorf("create %s %q under %s: %w", ref.Kind, name, ref, err)
	}
	if res.Form.FormRef != ref {
		return nil, fmt.Errorf("create under %s answered form %s", ref, res.Form.FormRef)
	}
	return res, nil
}

// fmCreateIn creates an empty-spec resource of ref in space as A1.
func (e *Env) fmCreateIn(ctx context.Context, space string, ref form.FormRef, name string) (*wire.Resource, error) {
	return e.fmCreate(ctx, e.A1, space, ref, name)
}

// lcUIDGrammar is the UID pattern (spec/host-api-v1alpha3.md §1.4).
var lcUIDGrammar = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// fmOperations is the closed operation vocabulary of a v1alpha3 Form.
var fmOperations = []string{"create", "read", "update", "delete", "import", "observe"}

// fmZeroDigest is a well-formed digest nothing binds.
const fmZeroDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// fmSchemaAgrees checks a served desiredSchema is a closed Draft 2020-12
// object schema without a name property, admitting every enum value the
// host's support profile advertises.
func fmSchemaAgrees(raw json.RawMessage, p wire.SupportProfile) error {
	var s struct {
		Schema     string                     `json:"$schema"`
		Type       string                     `json:"type"`
		Additional *bool                      `json:"additionalProperties"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("desiredSchema is not an object: %v", err)
	}
	if s.Schema != form.Draft202012 || s.Type != "object" || s.Additional == nil || *s.Additional {
		return fmt.Errorf("desiredSchema is not a closed Draft 2020-12 object schema: it must declare $schema %q, type object and additionalProperties false (form-definition v1alpha3); it has $schema %q, type %q", form.Draft202012, s.Schema, s.Type)
	}
	if _, ok := s.Properties["name"]; ok {
		return fmt.Errorf("desiredSchema has a name property; the envelope owns the name")
	}
	for field, vals := range p.SupportedEnums {
		var node struct {
			Enum  []any `json:"enum"`
			Items *struct {
				Enum []any `json:"enum"`
			} `json:"items"`
		}
		if err := json.Unmarshal(s.Properties[field], &node); err != nil {
			return fmt.Errorf("supportedEnums names %s, which the schema does not define", field)
		}
		enum := node.Enum
		if node.Items != nil && enum == nil {
			enum = node.Items.Enum
		}
		for _, v := range vals {
			if !slices.Contains(enum, any(v)) {
				return fmt.Errorf("the support profile advertises %s value %q, which the schema's enum %v does not admit", field, v, enum)
			}
		}
	}
	return nil
}

// lcQueueAtGeneration2 creates a queue and updates it once, so fences have
// a stale generation (1) and a current one (2) to tell apart.
func lcQueueAtGeneration2(ctx context.Context, e *Env) (*wire.Resource, error) {
	res, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
	if err != nil {
		return nil, err
	}
	return e.Update(ctx, e.A1, res, lcQueue(7200))
}
