package provider

import (
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/internal/provider/tfschema"
)

// SchemaVersion is the current state layout version of this build's Edge
// types (EdgeLineage; decision 0030: version 1 is the first numbered
// layout). It never goes down.
const SchemaVersion = 1

// TypeDecl declares one resource type: its name, the FormRef it creates
// under, every exact FormRef it carries a codec for, and its state layout
// history. Default create refs are per TYPE, not per kind: a `<type>_v2`
// minted for a breaking definition of the same kind declares its own
// (decision 0030).
type TypeDecl struct {
	Name          string
	DefaultCreate form.FormRef
	Supported     []form.FormRef // must include DefaultCreate
	Lineage       *Lineage       // nil = EdgeLineage
}

// TypeSpec is a registered resource type: one schema (from its default
// create definition plus the envelope), one default create ref, one codec
// per supported exact FormRef.
type TypeSpec struct {
	Name          string
	DefaultCreate form.FormRef
	Codecs        map[form.FormRef]*Codec
	Create        *Codec
	// CreateEquivalent is the public family's identity of DefaultCreate
	// (addEquivalents), created under when the host serves only it; nil
	// when there is none.
	CreateEquivalent *Codec
	// Families are the families the type creates in, when more than one
	// (registry_v1beta1.go; families() gives the single one otherwise).
	Families     []createFamily
	Revision     bool   // revision role: optional name derived from content
	NamePrefix   string // prefix of derived names
	LocalModules bool   // bundle authoring from local module files
	FilesKind    string // manifest kind of local files authoring (localfiles.go); "" = none
	HasUpdate    bool
	Lineage      *Lineage // state layout history; Schema.Version is Lineage.Version
	// SchemaFields are the desired fields the schema has: the default
	// create definition's, then each other supported ref's attribute it
	// lacks (sorted by attribute), Optional there (schemaFields).
	SchemaFields []Field
	// Attrs is the resource schema, built once from the fields
	// (buildSchema), and DataAttrs the data source's, derived from it
	// (dataSourceSchema): the provider's own attribute trees, from which
	// the served schemas, value types and plan rules are read (repo
	// decision 0069).
	Attrs, DataAttrs *tfschema.Schema
	// Schema is the framework's schema of Attrs (frameworkSchema), for
	// the framework adapter that is the differential tests' oracle.
	Schema schema.Schema
	// ObjectType is Attrs' Terraform object type, built once here:
	// building it walks every attribute (repo decision 0019).
	ObjectType tftypes.Object
}

// Codec returns the codec of an exact ref and whether the type has one.
func (t *TypeSpec) Codec(ref form.FormRef) (*Codec, bool) {
	c, ok := t.Codecs[ref]
	return c, ok
}

// KnownRefs lists the refs the type has codecs for.
func (t *TypeSpec) KnownRefs() []form.FormRef {
	out := make([]form.FormRef, 0, len(t.Codecs))
	for r := range t.Codecs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Exception is per-kind data the generic mapping cannot derive
// (terraform-surface.md "Per-type specifics").
type Exception struct {
	TypeName     string // overrides takoform_<snake kind>
	NamePrefix   string // derived revision names
	LocalModules bool   // main_module + modules authoring; manifest_digest becomes Optional+Computed
	// FilesKind is the manifest kind a `files` list is committed as
	// (spec/lane-v1beta1.md §13.2); manifest_digest becomes
	// Optional+Computed.
	FilesKind string
	// Canonical names the family rule that canonicalises a top-level string
	// member at the host's entry point (spec/host-api-v1alpha3.md §5.6), by member. State keeps
	// the configured spelling while the host's value is its canonical form.
	Canonical map[string]func(string) (string, error)
}

// Exceptions is the small per-kind table; everything else is derived.
var Exceptions = map[string]Exception{
	"ObjectBucket":   {TypeName: "takoform_edge_object_bucket"},
	"SQLiteDatabase": {TypeName: "takoform_sqlite_database"},
	"WorkerBundle":   {NamePrefix: "bundle", LocalModules: true},
	"WorkerVersion":  {NamePrefix: "version"},
	// local files authoring (spec/lane-v1beta1.md §13.2)
	"StaticAssetBundle":          {FilesKind: artifact.KindStaticAssetBundle},
	"SQLiteMigrationSet":         {TypeName: "takoform_sqlite_migration_set", NamePrefix: "sqlite-migration-set", FilesKind: artifact.KindMigrationBundle},
	"SQLiteMigrationApplication": {TypeName: "takoform_sqlite_migration_application"},
	// the host canonicalises the hostname (edge.CanonicalHostname)
	"WorkerCustomDomain": {Canonical: map[string]func(string) (string, error){"hostname": edge.CanonicalHostname}},
}

// Registry is every resource type of a provider build.
type Registry struct {
	Types   map[string]*TypeSpec
	Catalog *form.Catalog
}

// NewRegistry builds the types declared over a catalog: each supported
// ref's codec from THAT definition (NewCodec), the schema from the default
// create definition. It fails when a ref is not in the catalog, a type is
// declared twice, or a lineage is malformed (Lineage.Validate).
func NewRegistry(cat *form.Catalog, decls []TypeDecl) (*Registry, error) {
	r := &Registry{Types: map[string]*TypeSpec{}, Catalog: cat}
	valid := map[*Lineage]bool{} // types share a lineage; one check each
	for _, d := range decls {
		in, ok := cat.Form(d.DefaultCreate)
		if !ok {
			return nil, fmt.Errorf("type %s: default create form %s is not in the catalog", d.Name, d.DefaultCreate)
		}
		if d.Lineage == nil {
			d.Lineage = EdgeLineage
		}
		if !valid[d.Lineage] {
			if err := d.Lineage.Validate(); err != nil {
				return nil, fmt.Errorf("type %s: %w", d.Name, err)
			}
			valid[d.Lineage] = true
		}
		ex := Exceptions[d.DefaultCreate.Kind]
		t := &TypeSpec{Name: d.Name, DefaultCreate: d.DefaultCreate, Codecs: map[form.FormRef]*Codec{},
			Revision: in.Definition.Role() == form.RoleRevision, NamePrefix: ex.NamePrefix, LocalModules: ex.LocalModules,
			FilesKind: ex.FilesKind,
			HasUpdate: in.Definition.Has(form.CapUpdate), Lineage: d.Lineage}
		if t.NamePrefix == "" {
			t.NamePrefix = snakeDash(d.DefaultCreate.Kind)
		}
		for _, ref := range d.Supported {
			def, ok := cat.Form(ref)
			if !ok {
				return nil, fmt.Errorf("type %s: supported form %s is not in the catalog", d.Name, ref)
			}
			t.Codecs[ref] = NewCodec(def.Definition)
		}
		if _, ok := t.Codecs[d.DefaultCreate]; !ok {
			t.Codecs[d.DefaultCreate] = NewCodec(in.Definition)
		}
		t.Create = t.Codecs[d.DefaultCreate]
		t.SchemaFields = schemaFields(t)
		t.Attrs = buildSchema(t)
		t.DataAttrs = dataSourceSchema(t)
		t.Schema = frameworkSchema(t.Attrs)
		t.ObjectType = t.Attrs.Type()
		if _, dup := r.Types[d.Name]; dup {
			return nil, fmt.Errorf("type %s declared twice", d.Name)
		}
		r.Types[d.Name] = t
	}
	return r, nil
}

// TypeName is the default resource type name of a kind.
func TypeName(kind string) string {
	if ex := Exceptions[kind]; ex.TypeName != "" {
		return ex.TypeName
	}
	return "takoform_" + snake(kind)
}

// DeclareCatalog declares one type per Form of a catalog, each creating
// under and supporting only its own ref.
func DeclareCatalog(cat *form.Catalog) []TypeDecl {
	var out []TypeDecl
	for _, in := range cat.Forms() {
		ref := in.Definition.Ref()
		out = append(out, TypeDecl{Name: TypeName(ref.Kind), DefaultCreate: ref, Supported: []form.FormRef{ref}})
	}
	return out
}

// EdgeRegistry is the registry of this provider build: the 12 Edge types,
// each with codecs for both Edge families (spec/lane-v1beta1.md §13.4),
// and the three types only the v1beta1 family has (withV1beta1,
// spec/lane-v1beta1.md §13.1).
// The embedded family is loaded with the digests its generator recorded in
// family.json (form.LoadFamilyDigested; spec/decisions/0037-provider-start.md).
func EdgeRegistry() (*Registry, error) {
	idx, err := edge.Index()
	if err != nil {
		return nil, fmt.Errorf("built-in Edge family: %w", err)
	}
	fam, findings := form.LoadFamilyDigested(edge.Family(), edgeDigests(idx))
	if len(findings) > 0 {
		return nil, fmt.Errorf("built-in Edge family: %s", findings[0])
	}
	cat, err := fam.Catalog()
	if err != nil {
		return nil, err
	}
	cat, decls, err := withV1beta1(cat, DeclareCatalog(cat))
	if err != nil {
		return nil, err
	}
	r, err := NewRegistry(cat, decls)
	if err != nil {
		return nil, err
	}
	addEquivalents(r)
	recordFamilies(r)
	return r, nil
}

// edgeDigests maps every document's path within edge.Family() to the
// digest the generator recorded in family.json (forms/edge's
// TestFamilyDigestCascade compares each with the digest of the embedded
// bytes).
func edgeDigests(idx edge.FamilyIndex) map[string]string {
	out := make(map[string]string, len(idx.Forms)+len(idx.Interfaces)+len(idx.Bindings))
	for _, f := range idx.Forms {
		out[f.Path] = f.FormRef.SchemaDigest
	}
	for _, e := range idx.Interfaces {
		out[e.Path] = e.SchemaDigest
	}
	for _, e := range idx.Bindings {
		out[e.Path] = e.SchemaDigest
	}
	return out
}

func snakeDash(kind string) string {
	b := []byte(snake(kind))
	for i, c := range b {
		if c == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}

func (r *Registry) names() []string {
	out := make([]string, 0, len(r.Types))
	for n := range r.Types {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
