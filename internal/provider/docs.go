package provider

import (
	"fmt"
	"strings"

	pschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"

	"github.com/takoform/takoform/internal/provider/tfschema"
)

// envelopeDocs is the description of every envelope attribute, written
// once, in Markdown (plain derives the plain-text Description): the
// resource schemas and the data source schemas both read it. Desired
// members carry their Form schema's own description instead (fieldDoc).
// The envelope is the representation of spec/host-api-v1alpha3.md §5.1
// (conditions §5.2, declared outputs §5.3) and the state identity of §1.6.
var envelopeDocs = map[string]string{
	"name":                            "The resource's `metadata.name`: 1-63 characters, a lowercase letter then lowercase letters, digits or hyphens. Changing it replaces the resource.",
	"name@revision":                   "The resource's `metadata.name`: 1-63 characters, a lowercase letter then lowercase letters, digits or hyphens. When omitted, the provider derives it from `revision_owner` and the content, so changed content gets a new name and a new revision.",
	"space":                           "The exact SpaceID of the resource (never trimmed or case-folded); the provider's `space` when omitted. Changing it replaces the resource.",
	"create_timeout":                  "Go duration the create may take, e.g. `5m` (default `20m`). Provider-side only: changing it makes no host call.",
	"update_timeout":                  "Go duration an update may take, e.g. `5m` (default `20m`). Provider-side only: changing it makes no host call.",
	"delete_timeout":                  "Go duration the delete may take, e.g. `5m` (default `30m`). Provider-side only: changing it makes no host call.",
	"revision_owner":                  "Provider-only input naming the revision's owner (usually the worker's name); required when `name` is omitted, which derives the name from content.",
	"uid":                             "Host-issued incarnation identity (`metadata.uid`): a resource deleted and created again under the same name has a new one.",
	"generation":                      "Desired-state generation (a decimal string): the host increments it on every change of the desired spec.",
	"revision":                        "Representation revision (a decimal string): the host increments it on every change of the stored representation, status included.",
	"conditions":                      "The whole condition list as the host reports it (`status.conditions`).",
	"conditions.type":                 "Condition type, e.g. `Ready`.",
	"conditions.status":               "`True`, `False` or `Unknown`.",
	"conditions.reason":               "Portable reason code of the condition, e.g. `Provisioned`, `ExternalChange`.",
	"conditions.message":              "Human-readable message; null when the host gives none.",
	"conditions.host_reason":          "The host's own reason code; null when the host gives none.",
	"conditions.observed_generation":  "The generation the host had observed when it reported the condition (a decimal string).",
	"conditions.last_transition_time": "RFC 3339 time of the condition's last status change.",
	"ready":                           "Whether the `Ready` condition is `True`.",
	"outputs_json":                    "The whole `status.outputs` document as JSON; `{}` when the Form declares no outputs.",
	"form_api_version":                "Group (`apiVersion`) of the exact FormRef the resource is bound to.",
	"form_kind":                       "Kind of the exact FormRef the resource is bound to.",
	"form_definition_version":         "Definition version of the exact FormRef the resource is bound to.",
	"form_schema_digest":              "Schema digest of the exact FormRef the resource is bound to; reads, updates and deletes dispatch on it.",
	"form_package_digest":             "Package digest of the Form as the host reports it: audit evidence only, never identity; null when the host reports none.",
	"relation_drift_reason":           "`ExternalChange` or `DependencyMissing` while a resource this one references was replaced or removed; null otherwise. Applying again re-pins the relation.",
	"pending_operation_id":            "Operation id of a mutation the host accepted and has not settled yet; null in steady state. The next apply or refresh settles it.",
}

// plain is the plain-text Description of a Markdown description: code
// spans and bold markers removed.
func plain(md string) string {
	return strings.NewReplacer("`", "", "**", "").Replace(md)
}

// fieldDoc is a desired member's description: the Form schema's own, or,
// for a Form whose schema gives none, a sentence naming the member.
func fieldDoc(f Field) string {
	if f.Doc != "" {
		return f.Doc
	}
	return fmt.Sprintf("Desired member `%s` of the Form (its schema gives no description).", f.Member)
}

// resourceDoc is a resource type's description: the default create
// definition's title and description (formDoc), and the FormRef new
// resources are created under (spec/host-api-v1alpha3.md §1.3).
func resourceDoc(t *TypeSpec) string {
	ref := t.DefaultCreate
	return formDoc(t) + fmt.Sprintf("\n\nNew resources are created under the FormRef `%s` `%s` `%s` (schema digest `%s`); reads, updates and deletes follow the FormRef recorded in state.",
		ref.APIVersion, ref.Kind, ref.DefinitionVersion, ref.SchemaDigest)
}

// formDoc is the default create definition's title (bold) and description.
func formDoc(t *TypeSpec) string {
	def := t.Create.Def
	var b strings.Builder
	if title := def.Title(); title != "" {
		fmt.Fprintf(&b, "**%s.** ", strings.TrimSuffix(title, "."))
	}
	if d := def.Description(); d != "" {
		b.WriteString(d)
	} else {
		fmt.Fprintf(&b, "A resource of the Form kind `%s`.", t.DefaultCreate.Kind)
	}
	return b.String()
}

// describeResource gives every attribute of a resource schema (nested ones
// by path, "conditions.type") its Description and MarkdownDescription: the
// envelope's from envelopeDocs, the others from the description they were
// built with. revision selects the revision types' name description. A
// single nested attribute and its members keep the description they were
// built with, as plain text only (as the schemas have always stated it).
func describeResource(attrs map[string]*tfschema.Attr, prefix string, revision bool) {
	for name, a := range attrs {
		if a.Kind == tfschema.SingleNested {
			continue
		}
		key := prefix + name
		if key == "name" && revision {
			key = "name@revision"
		}
		md := envelopeDocs[key]
		if md == "" {
			md = a.Description
		}
		a.Description, a.MarkdownDescription = plain(md), md
		if a.Kind == tfschema.ListNested {
			describeResource(a.Nested, prefix+name+".", false)
		}
	}
}

// describeProvider gives the provider schema and each of its string
// attributes a MarkdownDescription equal to its Description where it has
// none (the provider's descriptions are plain sentences).
func describeProvider(s *pschema.Schema) {
	if s.MarkdownDescription == "" {
		s.MarkdownDescription = s.Description
	}
	for name, a := range s.Attributes {
		if v, ok := a.(pschema.StringAttribute); ok && v.MarkdownDescription == "" {
			v.MarkdownDescription = v.Description
			s.Attributes[name] = v
		}
	}
}
