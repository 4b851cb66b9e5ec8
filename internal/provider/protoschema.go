package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// resourceSchemas are the schemas the provider serves for reg's resource
// types and data sources, by type name, as protocol 6 states them: each
// converted from the type's own attribute tree (TypeSpec.Attrs,
// TypeSpec.DataAttrs; tfschema.Schema.Proto), never from a framework
// schema (repo decision 0069, ARCHITECTURE.md §3.1 D28). They are what
// terraform-plugin-framework answers for the schemas derived from the same
// trees (TestServerSchemasAreTheFrameworks).
func resourceSchemas(reg *Registry) (resources, dataSources map[string]*tfprotov6.Schema) {
	resources = make(map[string]*tfprotov6.Schema, len(reg.Types))
	dataSources = make(map[string]*tfprotov6.Schema, len(reg.Types))
	for name, t := range reg.Types {
		resources[name] = t.Attrs.Proto()
		dataSources[name] = t.DataAttrs.Proto()
	}
	return resources, dataSources
}
