package form

import (
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/takoform/takoform/ijson"
)

var operationNamePattern = regexp.MustCompile(`^[a-z][a-zA-Z0-9]{0,63}$`)

var consistencies = map[string]bool{"eventual": true, "read_after_write": true, "per_key_linearizable": true, "serializable": true}

// Operation is one operation of an Interface Definition (spec/host-api-v1alpha3.md §7.1); its
// schemas and error vocabulary stay raw.
type Operation struct {
	Name         string          `json:"name"`
	Description  *string         `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Errors       json.RawMessage `json:"errors"`
	Idempotent   *bool           `json:"idempotent"`
}

// Semantics is an Interface's declared consistency and delivery behaviour.
type Semantics struct {
	Consistency string `json:"consistency"`
	Pagination  string `json:"pagination,omitempty"`
	Delivery    string `json:"delivery,omitempty"`
	Ordering    string `json:"ordering,omitempty"`
}

// InterfaceDefinition is a parsed Interface contract (spec/host-api-v1alpha3.md §7.1),
// identified by its InterfaceRef.
type InterfaceDefinition struct {
	doc struct {
		contractHead
		Operations []Operation      `json:"operations"`
		Semantics  Semantics        `json:"semantics"`
		Limits     map[string]int64 `json:"limits"`
		Fixtures   json.RawMessage  `json:"fixtures"`
	}
	ref InterfaceRef
	raw []byte
}

// ParseInterface strictly decodes and checks an Interface Definition and
// computes its digest. Errors are *ijson.Error or *ContractError.
func ParseInterface(data []byte) (*InterfaceDefinition, error) { return parseInterface(data, "") }

// parseInterface is ParseInterface with a recorded digest (parse).
func parseInterface(data []byte, digest string) (*InterfaceDefinition, error) {
	d := &InterfaceDefinition{raw: append([]byte(nil), data...)}
	dg, err := decodeContract(data, &d.doc, digest)
	if err != nil {
		return nil, err
	}
	d.ref = InterfaceRef{APIVersion: interfaceRefAPIVersion, Name: d.doc.Name, Version: d.doc.Version, SchemaDigest: dg}
	v := &verifier{}
	d.doc.check(v, "an Interface Definition", interfaceRefAPIVersion, interfaceDefinitionKind, d.ref)
	if n := len(d.doc.Operations); n < 1 || n > 64 {
		v.add("/operations", "an Interface declares 1..64 operations")
	}
	seen := map[string]bool{}
	for i, op := range d.doc.Operations {
		at := fmt.Sprintf("/operations/%d", i)
		if !operationNamePattern.MatchString(op.Name) || seen[op.Name] {
			v.add(at+"/name", "operation name %q is invalid or repeated", op.Name)
		}
		seen[op.Name] = true
		if len(op.InputSchema) == 0 || len(op.OutputSchema) == 0 || len(op.Errors) == 0 {
			v.add(at, "an operation declares inputSchema, outputSchema and errors")
		}
	}
	if !consistencies[d.doc.Semantics.Consistency] {
		v.add("/semantics/consistency", "consistency %q is not eventual, read_after_write, per_key_linearizable or serializable", d.doc.Semantics.Consistency)
	}
	if err := d.doc.refused(v, "interface"); err != nil {
		return nil, err
	}
	return d, nil
}

// Ref is the Interface's exact reference, digest included.
func (d *InterfaceDefinition) Ref() InterfaceRef { return d.ref }

// Raw is the document as parsed.
func (d *InterfaceDefinition) Raw() []byte { return d.raw }

// OperationNames lists the operations in document order.
func (d *InterfaceDefinition) OperationNames() []string {
	out := make([]string, len(d.doc.Operations))
	for i, op := range d.doc.Operations {
		out[i] = op.Name
	}
	return out
}

// Limits returns the named integer minima every host accepts.
func (d *InterfaceDefinition) Limits() map[string]int64 {
	out := make(map[string]int64, len(d.doc.Limits))
	for k, v := range d.doc.Limits {
		out[k] = v
	}
	return out
}

// GroupKind names a Form line without a definition version.
type GroupKind struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// BindingDefinition is a parsed Binding contract (spec/host-api-v1alpha3.md §7.3).
type BindingDefinition struct {
	doc struct {
		contractHead
		SourceRole         Role         `json:"sourceRole"`
		TargetInterface    InterfaceRef `json:"targetInterface"`
		AllowedTargetForms []GroupKind  `json:"allowedTargetForms"`
		BindingNameGrammar string       `json:"bindingNameGrammar"`
		RuntimeProjection  struct {
			Operations  []string        `json:"operations"`
			AccessModes json.RawMessage `json:"accessModes"`
		} `json:"runtimeProjection"`
		Lifecycle struct {
			TargetDeletion string `json:"targetDeletion"`
		} `json:"lifecycle"`
	}
	ref     BindingRef
	raw     []byte
	grammar *regexp.Regexp
}

// ParseBinding strictly decodes and checks a Binding Definition and
// computes its digest. Errors are *ijson.Error or *ContractError.
func ParseBinding(data []byte) (*BindingDefinition, error) { return parseBinding(data, "") }

// parseBinding is ParseBinding with a recorded digest (parse).
func parseBinding(data []byte, digest string) (*BindingDefinition, error) {
	d := &BindingDefinition{raw: append([]byte(nil), data...)}
	dg, err := decodeContract(data, &d.doc, digest)
	if err != nil {
		return nil, err
	}
	d.ref = BindingRef{APIVersion: bindingRefAPIVersion, Name: d.doc.Name, Version: d.doc.Version, SchemaDigest: dg}
	v := &verifier{}
	d.doc.check(v, "a Binding Definition", bindingRefAPIVersion, bindingDefinitionKind, d.ref)
	if !knownRoles[d.doc.SourceRole] {
		v.add("/sourceRole", "sourceRole %q is not a Form role", d.doc.SourceRole)
	}
	if err := d.doc.TargetInterface.Validate(); err != nil {
		v.add("/targetInterface", "%v", err)
	}
	if n := len(d.doc.AllowedTargetForms); n < 1 || n > 32 {
		v.add("/allowedTargetForms", "a Binding allows 1..32 target Forms")
	}
	for i, gk := range d.doc.AllowedTargetForms {
		if ValidateAPIVersion(gk.APIVersion) != nil || ValidateKind(gk.Kind) != nil {
			v.add(fmt.Sprintf("/allowedTargetForms/%d", i), "target Form %s %s is not a valid group and kind", gk.APIVersion, gk.Kind)
		}
	}
	g := d.doc.BindingNameGrammar
	if len(g) < 3 || g[0] != '^' || g[len(g)-1] != '$' {
		v.add("/bindingNameGrammar", "the binding name grammar is an anchored regular expression ^...$")
	} else if d.grammar, err = regexp.Compile(g); err != nil {
		v.add("/bindingNameGrammar", "the binding name grammar does not compile as RE2: %v", err)
	}
	if n := len(d.doc.RuntimeProjection.Operations); n < 1 || n > 64 {
		v.add("/runtimeProjection/operations", "a Binding projects 1..64 operations")
	}
	if d.doc.Lifecycle.TargetDeletion != "refuse_while_bound" {
		v.add("/lifecycle/targetDeletion", "targetDeletion is refuse_while_bound")
	}
	if err := d.doc.refused(v, "binding"); err != nil {
		return nil, err
	}
	return d, nil
}

// Ref is the Binding's exact reference, digest included.
func (d *BindingDefinition) Ref() BindingRef { return d.ref }

// Raw is the document as parsed.
func (d *BindingDefinition) Raw() []byte { return d.raw }

// SourceRole is the Form role allowed to hold this binding (rule 3).
func (d *BindingDefinition) SourceRole() Role { return d.doc.SourceRole }

// TargetInterface is the Interface the target must provide (rule 5).
func (d *BindingDefinition) TargetInterface() InterfaceRef { return d.doc.TargetInterface }

// AllowedTargetForms lists the target group+kinds (rule 4).
func (d *BindingDefinition) AllowedTargetForms() []GroupKind {
	return append([]GroupKind(nil), d.doc.AllowedTargetForms...)
}

// ValidBindingName reports whether a binding instance name matches the
// Binding's name grammar.
func (d *BindingDefinition) ValidBindingName(name string) bool { return d.grammar.MatchString(name) }

// ProjectedOperations lists the projected target operations.
func (d *BindingDefinition) ProjectedOperations() []string {
	return append([]string(nil), d.doc.RuntimeProjection.Operations...)
}

// ContractError lists the structural problems of an Interface or Binding.
type ContractError struct {
	What     string
	Problems []Problem
}

func (e *ContractError) Error() string {
	s := e.What + " is not valid:"
	for _, p := range e.Problems {
		s += "\n  " + p.Pointer + ": " + p.Message
	}
	return s
}

// contractHead is what an Interface and a Binding Definition both open
// with (spec/host-api-v1alpha3.md §7.1, §7.3).
type contractHead struct {
	APIVersion  string  `json:"apiVersion"`
	Kind        string  `json:"kind"`
	Name        string  `json:"name"`
	Version     string  `json:"version"`
	Title       *string `json:"title"`
	Description *string `json:"description"`
}

// decodeContract strictly decodes data into doc (which embeds a
// contractHead) and returns data's digest. Errors are *ijson.Error.
func decodeContract(data []byte, doc any, digest string) (string, error) {
	if err := ijson.Unmarshal(data, doc); err != nil {
		return "", err
	}
	return digestOf(data, digest)
}

// digestOf is the recorded digest when there is one, else data's digest
// (spec/host-api-v1alpha3.md §1.3).
func digestOf(data []byte, recorded string) (string, error) {
	if recorded != "" {
		return recorded, nil
	}
	return ijson.Digest(data)
}

// check adds the head's problems: the contract's apiVersion and kind
// (article names it, "an Interface Definition"), its ref and its title.
func (h *contractHead) check(v *verifier, article, apiVersion, kind string, ref interface{ Validate() error }) {
	if h.APIVersion != apiVersion || h.Kind != kind {
		v.add("", "%s has apiVersion %s and kind %s", article, apiVersion, kind)
	}
	if err := ref.Validate(); err != nil {
		v.add("/name", "%v", err)
	}
	checkTitle(v, h.Title, h.Description)
}

// refused is the *ContractError for v's problems ("interface name@version"),
// nil when there are none.
func (h *contractHead) refused(v *verifier, what string) error {
	if len(v.problems) == 0 {
		return nil
	}
	return &ContractError{What: what + " " + h.Name + "@" + h.Version, Problems: v.problems}
}

func checkTitle(v *verifier, title, description *string) {
	if title != nil {
		if n := utf8.RuneCountInString(*title); n < 1 || n > 160 {
			v.add("/title", "title is 1..160 characters")
		}
	}
	if description != nil && utf8.RuneCountInString(*description) > 4096 {
		v.add("/description", "description is at most 4096 characters")
	}
}
