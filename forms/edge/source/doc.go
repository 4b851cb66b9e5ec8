// Package source is the one hand-written source of the Edge family documents
// (edge.forms.takoform.com/v1alpha1): 12 Forms with their fixtures, 6
// Interfaces and 5 Bindings (host API spec/host-api-v1alpha3.md §6.3, §6.4, §7).
//
// Documents are Go values (maps, slices, scalars). A document never spells a
// digest: it names another document with InterfaceRef, BindingRef or FormRef,
// and the generator (forms/edge/internal/gen) computes digests in dependency
// order and replaces each reference with the exact ref object.
package source

// Family identity and the contract groups it refers to.
const (
	FamilyAPIVersion    = "edge.forms.takoform.com/v1alpha1"
	DefinitionVersion   = "0.1.0"
	InterfaceAPIVersion = "interfaces.takoform.com/v1alpha1"
	BindingAPIVersion   = "bindings.takoform.com/v1alpha1"
	contractVersion     = "1.0.0"
)

// M is a JSON object under construction.
type M = map[string]any

// InterfaceRef names an Interface of this family. The generator replaces it
// with {apiVersion, name, version, schemaDigest} (spec/host-api-v1alpha3.md §7.1).
type InterfaceRef struct{ Name, Version string }

// BindingRef names a Binding of this family. The generator replaces it with
// {apiVersion, name, version, schemaDigest} (spec/host-api-v1alpha3.md §7.3).
type BindingRef struct{ Name, Version string }

// FormRef names a Form of this family by kind. The generator replaces it with
// {apiVersion, kind, definitionVersion, schemaDigest} (spec/host-api-v1alpha3.md §1.3).
type FormRef struct{ Kind string }

// Interface is one Interface Definition document.
type Interface struct {
	Name, Version string
	Doc           M
}

// Binding is one Binding Definition document.
type Binding struct {
	Name, Version string
	Doc           M
}

// Form is one Form Definition with its fixtures. Dir is the kebab-case kind.
type Form struct {
	Kind, Dir, Role string
	Doc             M
	Fixtures        []Fixture
}

// Fixture is one data file of a Form; Path is relative to the Form directory.
type Fixture struct {
	Path  string
	Value any
}

func iface(name string) InterfaceRef { return InterfaceRef{Name: name, Version: contractVersion} }

func binding(name string) BindingRef { return BindingRef{Name: name, Version: contractVersion} }

// Interfaces returns the family's Interfaces in index order.
func Interfaces() []Interface {
	return []Interface{edgeKV(), edgeObjects(), edgeSQL(), edgeQueue(), workerService(), workerRuntime()}
}

// Bindings returns the family's Bindings in index order.
func Bindings() []Binding {
	return []Binding{kvBinding(), bucketBinding(), sqliteBinding(), queueProducerBinding(), serviceBinding()}
}

// Forms returns the family's Forms in index order.
func Forms() []Form {
	return []Form{
		moduleWorker(), workerBundle(), workerVersion(), workerDeployment(),
		workerCustomDomain(), workerEndpoint(), workerCronTrigger(),
		edgeKVNamespace(), objectBucket(), sqliteDatabase(),
		atLeastOnceQueue(), queueConsumer(),
	}
}
