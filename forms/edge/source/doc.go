// Package source is the one hand-written source of both Edge families, each
// an Edition: edge.forms.takoform.com/v1alpha1 (12 Forms with their
// fixtures, 6 Interfaces and 5 Bindings; host API spec/host-api-v1alpha3.md
// §6.3, §6.4, §7) and edge.forms.takoform.com/v1beta1 (the same documents
// with the deltas of spec/lane-v1beta1.md §6.3–§6.7 and §7.1: 15 Forms, 6
// Interfaces, 5 Bindings; repo decision 0054).
//
// Documents are Go values (maps, slices, scalars). A document never spells a
// digest: it names another document with InterfaceRef, BindingRef or FormRef,
// and the generator (forms/edge/internal/gen) computes digests in dependency
// order and replaces each reference with the exact ref object.
package source

// The two Edge groups and the contract groups both families refer to.
const (
	GroupV1alpha1       = "edge.forms.takoform.com/v1alpha1"
	GroupV1beta1        = "edge.forms.takoform.com/v1beta1"
	DefinitionVersion   = "0.1.0"
	InterfaceAPIVersion = "interfaces.takoform.com/v1alpha1"
	BindingAPIVersion   = "bindings.takoform.com/v1alpha1"
	contractVersion     = "1.0.0"
)

// Edition is one family the source builds: its Form group (the apiVersion
// of every Form and every relation node, so the two families never relate
// to each other, spec/lane-v1beta1.md §6.3) and whether it carries the
// lane v1beta1 contract changes (spec/lane-v1beta1.md §6.3–§6.7, §7.1).
type Edition struct {
	// Group is the family's Form group.
	Group string
	// Dir is the generated tree's directory, relative to forms/edge.
	Dir string
	// beta selects the lane v1beta1 deltas.
	beta bool
}

// The two editions: V1alpha1 is served on lane v1alpha3, V1beta1 on lane
// v1beta1 (spec/lane-v1beta1.md §2.5).
var (
	V1alpha1 = Edition{Group: GroupV1alpha1, Dir: "family"}
	V1beta1  = Edition{Group: GroupV1beta1, Dir: "family-v1beta1", beta: true}
)

// Editions lists every edition the source builds.
func Editions() []Edition { return []Edition{V1alpha1, V1beta1} }

// pick returns beta on the v1beta1 edition and alpha on the v1alpha1 one.
func pick[T any](e Edition, alpha, beta T) T {
	if e.beta {
		return beta
	}
	return alpha
}

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

// Interfaces returns the edition's Interfaces in index order.
func (e Edition) Interfaces() []Interface {
	return []Interface{e.edgeKV(), e.edgeObjects(), e.edgeSQL(), e.edgeQueue(), workerService(), e.workerRuntime()}
}

// Bindings returns the edition's Bindings in index order.
func (e Edition) Bindings() []Binding {
	return []Binding{e.kvBinding(), e.bucketBinding(), e.sqliteBinding(), e.queueProducerBinding(), e.serviceBinding()}
}

// Forms returns the edition's Forms in index order; the v1beta1 edition
// adds StaticAssetBundle, SQLiteMigrationSet and SQLiteMigrationApplication
// in the public family's order (spec/lane-v1beta1.md §6.3).
func (e Edition) Forms() []Form {
	if !e.beta {
		return []Form{
			e.moduleWorker(), e.workerBundle(), e.workerVersion(), e.workerDeployment(),
			e.workerCustomDomain(), e.workerEndpoint(), e.workerCronTrigger(),
			e.edgeKVNamespace(), e.objectBucket(), e.sqliteDatabase(),
			e.atLeastOnceQueue(), e.queueConsumer(),
		}
	}
	return []Form{
		e.moduleWorker(), e.workerBundle(), e.staticAssetBundle(), e.workerVersion(), e.workerDeployment(),
		e.workerCustomDomain(), e.workerEndpoint(), e.workerCronTrigger(),
		e.edgeKVNamespace(), e.objectBucket(), e.sqliteDatabase(), e.sqliteMigrationSet(), e.sqliteMigrationApplication(),
		e.atLeastOnceQueue(), e.queueConsumer(),
	}
}
