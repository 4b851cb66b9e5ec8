package provider

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
)

// The plugin-go server against the framework, RPC for RPC (repo decision
// 0066): for every type of every registry the package has, each resource
// and data-source RPC gets the same request from both servers, neither
// configured, and their answers must be equal — states and identities as
// values, private state as bytes, diagnostics included (answerOf). The
// host-backed half is server_host_test.go.

// differential is one registry's pair of servers.
type differential struct {
	reg     *Registry
	fw, srv tfprotov6.ProviderServer
}

// registries are the Edge registry and the registries of the host's
// built-in families declared as they are (DeclareCatalog): the v1alpha1
// family of lane v1alpha3 and the v1beta1 family of lane v1beta1.
func registries(t *testing.T) map[string]differential {
	t.Helper()
	out := map[string]differential{}
	edge, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	regs := map[string]*Registry{"edge": edge}
	alpha, err := host.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	beta, err := v1beta1Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for name, cat := range map[string]*form.Catalog{"v1alpha3": alpha, "v1beta1": beta} {
		r, err := NewRegistry(cat, DeclareCatalog(cat))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		regs[name] = r
	}
	for name, reg := range regs {
		fw, err := providerserver.NewProtocol6WithError(New("test", reg)())()
		if err != nil {
			t.Fatal(err)
		}
		out[name] = differential{reg: reg, fw: fw, srv: muxed(t, reg)}
	}
	return out
}

// answerOf is an answer in a form two answers compare by: each field by
// name, a DynamicValue decoded (as typ, or as the identity type in an
// identity field), diagnostics sorted (the framework reports a schema's
// checks in map order) and with the host's request IDs blanked (one per
// request), private state and everything else as it is.
func answerOf(t *testing.T, typ tftypes.Type, answer any) string {
	t.Helper()
	var b strings.Builder
	var walk func(name string, v reflect.Value)
	walk = func(name string, v reflect.Value) {
		switch x := v.Interface().(type) {
		case *tfprotov6.DynamicValue:
			ty := typ
			if strings.Contains(name, "Identity") {
				ty = identityType
			}
			if x == nil {
				fmt.Fprintf(&b, "%s: none\n", name)
				return
			}
			fmt.Fprintf(&b, "%s: %s\n", name, decoded(t, ty, x))
			return
		case []*tfprotov6.Diagnostic:
			fmt.Fprintf(&b, "%s: %q\n", name, diagStrings(x))
			return
		case []*tftypes.AttributePath:
			fmt.Fprintf(&b, "%s: %q\n", name, pathStrings(x))
			return
		case []byte:
			fmt.Fprintf(&b, "%s: %q\n", name, x)
			return
		}
		switch v.Kind() {
		case reflect.Interface: // an event's type
			if v.IsNil() {
				fmt.Fprintf(&b, "%s: nil\n", name)
				return
			}
			walk(name, v.Elem())
		case reflect.Pointer:
			if v.IsNil() {
				fmt.Fprintf(&b, "%s: nil\n", name)
				return
			}
			walk(name, v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.IsExported() {
					walk(name+"."+f.Name, v.Field(i))
				}
			}
		case reflect.Map:
			keys := v.MapKeys()
			sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
			for _, k := range keys {
				walk(fmt.Sprintf("%s[%v]", name, k), v.MapIndex(k))
			}
		case reflect.Slice:
			fmt.Fprintf(&b, "%s: %d\n", name, v.Len())
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", name, i), v.Index(i))
			}
		default:
			fmt.Fprintf(&b, "%s: %v\n", name, v.Interface())
		}
	}
	walk("", reflect.ValueOf(answer))
	return requestID.ReplaceAllString(b.String(), "Request: req-…")
}

// requestID is the host's request ID in a diagnostic, one per request.
var requestID = regexp.MustCompile(`Request: req-[0-9a-f]+`)

// sameAnswer requires equal answers of the framework (want) and the
// plugin-go server (got) to one request.
func sameAnswer(t *testing.T, what string, typ tftypes.Type, got, want any) {
	t.Helper()
	if g, w := answerOf(t, typ, got), answerOf(t, typ, want); g != w {
		t.Errorf("%s:\nplugin-go:\n%s\nframework:\n%s", what, g, w)
	}
}

// importMarked is the private state the framework gives an imported
// resource.
var importMarked = []byte(`{".import_before_read":"dHJ1ZQ=="}`)

// TestServerAnswersAsTheFramework: for every type of every registry, the
// plugin-go server and the framework, neither configured, answer alike:
// validation (valid, a required attribute missing, a read-only one set),
// plans (create, destroy) with and without private state (the import
// marker, a provider key, a private state the framework discards, one it
// refuses), apply (create, update, delete), read (with the import
// marker), import (an ID, a bad ID, an identity, a bad identity), state
// upgrade (current version, every prior one, one with no upgrader),
// identity upgrade, move (from another type, without a source state,
// with a private state refused), config generation (from an applied
// state, from one whose every string is empty, from none), data-source
// validation and read; and, per registry, the provider-level RPCs that
// mux fans out (repo decision 0070): provider validation and
// configuration (a configuration without endpoint, with a bad space,
// with an unknown one), stop.
func TestServerAnswersAsTheFramework(t *testing.T) {
	ctx := context.Background()
	privates := map[string][]byte{"none": nil, "import marker": importMarked, "provider key": []byte(`{"k":"eyJhIjoxfQ=="}`),
		"discarded": []byte(`{"k":1}`), "refused": []byte(`[1]`)}
	for rname, d := range registries(t) {
		ps, err := d.fw.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
		if err != nil {
			t.Fatal(err)
		}
		pt := ps.Provider.ValueType().(tftypes.Object)
		for cname, c := range map[string]map[string]tftypes.Value{"empty": {}, "bad space": {"endpoint": str64("http://127.0.0.1:1"), "space": str64("Not A Space")},
			"unknown space": {"endpoint": str64("http://127.0.0.1:1"), "space": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)}} {
			cfg := dynamicOf(t, pt, object(pt, c))
			compare(t, rname+" validate provider "+cname, pt, d, func(s tfprotov6.ProviderServer) (any, error) {
				return s.ValidateProviderConfig(ctx, &tfprotov6.ValidateProviderConfigRequest{Config: cfg})
			})
			compare(t, rname+" configure provider "+cname, pt, d, func(s tfprotov6.ProviderServer) (any, error) {
				return s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: cfg})
			})
		}
		compare(t, rname+" stop", tftypes.String, d, func(s tfprotov6.ProviderServer) (any, error) {
			return s.StopProvider(ctx, &tfprotov6.StopProviderRequest{})
		})
		for _, name := range d.reg.names() {
			spec := d.reg.Types[name]
			pt := serverOf(t, d.srv).types[name]
			dt := serverOf(t, d.srv).data[name]
			if pt == nil || dt == nil {
				t.Fatalf("%s %s: the server has no resource or data source for it", rname, name)
			}
			typ := pt.rules.typ
			at := func(what string) string { return rname + " " + name + " " + what }
			dv := func(ty tftypes.Type, v tftypes.Value) *tfprotov6.DynamicValue { return dynamicOf(t, ty, v) }
			named := map[string]tftypes.Value{"name": str64("x-1")}
			configs := map[string]map[string]tftypes.Value{"empty": {}, "named": named, "read-only set": with(named, "uid", str64("u"))}
			state := appliedState(t, spec, named)
			null := tftypes.NewValue(typ, nil)
			for cname, c := range configs {
				req := &tfprotov6.ValidateResourceConfigRequest{TypeName: name, Config: dv(typ, object(typ, c))}
				compare(t, at("validate "+cname), typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ValidateResourceConfig(ctx, req) })
				dreq := &tfprotov6.ValidateDataResourceConfigRequest{TypeName: name, Config: dv(dt.typ, object(dt.typ, c))}
				compare(t, at("validate data "+cname), dt.typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ValidateDataResourceConfig(ctx, dreq) })
				rreq := &tfprotov6.ReadDataSourceRequest{TypeName: name, Config: dv(dt.typ, object(dt.typ, c))}
				compare(t, at("read data "+cname), dt.typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ReadDataSource(ctx, rreq) })
			}
			for pname, private := range privates {
				create := &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: dv(typ, object(typ, named)),
					ProposedNewState: dv(typ, object(typ, named)), PriorState: dv(typ, null), PriorPrivate: private}
				compare(t, at("plan create, private "+pname), typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.PlanResourceChange(ctx, create) })
				destroy := &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: dv(typ, null),
					ProposedNewState: dv(typ, null), PriorState: dv(typ, object(typ, state)), PriorPrivate: private}
				compare(t, at("plan destroy, private "+pname), typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.PlanResourceChange(ctx, destroy) })
				for aname, a := range map[string][2]tftypes.Value{"create": {object(typ, named), null}, "update": {object(typ, state), object(typ, state)}, "delete": {null, object(typ, state)}} {
					req := &tfprotov6.ApplyResourceChangeRequest{TypeName: name, Config: dv(typ, a[0]), PlannedState: dv(typ, a[0]), PriorState: dv(typ, a[1]), PlannedPrivate: private}
					compare(t, at("apply "+aname+", private "+pname), typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ApplyResourceChange(ctx, req) })
				}
				read := &tfprotov6.ReadResourceRequest{TypeName: name, CurrentState: dv(typ, object(typ, state)), Private: private}
				compare(t, at("read, private "+pname), typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ReadResource(ctx, read) })
			}
			ident := func(m map[string]string) *tfprotov6.ResourceIdentityData {
				vals := map[string]tftypes.Value{}
				for _, mem := range identityMembers {
					vals[mem.attr] = tftypes.NewValue(tftypes.String, nil)
					if v, ok := m[mem.attr]; ok {
						vals[mem.attr] = str64(v)
					}
				}
				return &tfprotov6.ResourceIdentityData{IdentityData: dv(identityType, tftypes.NewValue(identityType, vals))}
			}
			for iname, req := range map[string]*tfprotov6.ImportResourceStateRequest{
				"id": {TypeName: name, ID: "s1/x-1"}, "bad id": {TypeName: name, ID: "S1/X"},
				"identity":     {TypeName: name, Identity: ident(map[string]string{"name": "x-1"})},
				"bad identity": {TypeName: name, Identity: ident(map[string]string{"name": "x-1", "kind": "K"})},
			} {
				compare(t, at("import "+iname), typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ImportResourceState(ctx, req) })
			}
			source := &tfprotov6.RawState{JSON: []byte(`{"name":"x-1","space":"s1"}`)}
			for mname, req := range map[string]*tfprotov6.MoveResourceStateRequest{
				"from another type": {SourceProviderAddress: "registry.opentofu.org/takoform/takoform", SourceTypeName: "takoform_other", SourceSchemaVersion: 2,
					SourceState: source, TargetTypeName: name},
				"without a source state": {SourceTypeName: "takoform_other", TargetTypeName: name},
				"private refused":        {SourceTypeName: "takoform_other", SourceState: source, SourcePrivate: []byte(`[1]`), TargetTypeName: name},
			} {
				compare(t, at("move "+mname), typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.MoveResourceState(ctx, req) })
			}
			blank := map[string]tftypes.Value{}
			for k, v := range state {
				blank[k] = v
			}
			for k, at := range typ.AttributeTypes {
				if at.Is(tftypes.String) {
					blank[k] = str64("")
				}
			}
			for gname, st := range map[string]*tfprotov6.DynamicValue{"applied": dv(typ, object(typ, state)), "blank strings": dv(typ, object(typ, blank)), "none": nil} {
				req := &tfprotov6.GenerateResourceConfigRequest{TypeName: name, State: st}
				compare(t, at("generate config from "+gname), typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.GenerateResourceConfig(ctx, req) })
			}
			for v := int64(0); v <= spec.Schema.Version+1; v++ {
				for _, raw := range []string{`{"name":"x-1","space":"s1","gone":1}`, `{"name":1}`, `null`} {
					req := &tfprotov6.UpgradeResourceStateRequest{TypeName: name, Version: v, RawState: &tfprotov6.RawState{JSON: []byte(raw)}}
					compare(t, at(fmt.Sprintf("upgrade from %d %s", v, raw)), typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.UpgradeResourceState(ctx, req) })
				}
				req := &tfprotov6.UpgradeResourceIdentityRequest{TypeName: name, Version: v, RawIdentity: &tfprotov6.RawState{JSON: []byte(`{"name":"x-1"}`)}}
				compare(t, at(fmt.Sprintf("upgrade identity from %d", v)), identityType, d, func(s tfprotov6.ProviderServer) (any, error) { return s.UpgradeResourceIdentity(ctx, req) })
			}
		}
	}
}

// compare sends one request through call to both servers of d and
// requires equal answers.
func compare(t *testing.T, what string, typ tftypes.Type, d differential, call func(tfprotov6.ProviderServer) (any, error)) {
	t.Helper()
	want, err := call(d.fw)
	if err != nil {
		t.Fatalf("%s: framework: %v", what, err)
	}
	got, err := call(d.srv)
	if err != nil {
		t.Fatalf("%s: plugin-go: %v", what, err)
	}
	sameAnswer(t, what, typ, got, want)
}

// TestServerSchemasAreTheFrameworks: the schemas the server answers
// (built once, server_meta.go) are the framework's, and each resource
// type's, data source's and the identity's value type is the type the
// server decodes requests with.
func TestServerSchemasAreTheFrameworks(t *testing.T) {
	ctx := context.Background()
	for rname, d := range registries(t) {
		// mux states its own capabilities (tf6muxserver's): the
		// framework's and GenerateResourceConfig, which the framework
		// v1.19 serves too but does not state
		stated := func(s tfprotov6.ProviderServer, c *tfprotov6.ServerCapabilities) *tfprotov6.ServerCapabilities {
			if s != d.fw || c == nil {
				return c
			}
			out := *c
			out.GenerateResourceConfig = true
			return &out
		}
		compare(t, rname+" schemas", tftypes.String, d, func(s tfprotov6.ProviderServer) (any, error) {
			ps, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
			if err != nil {
				return nil, err
			}
			out := *ps
			out.ServerCapabilities = stated(s, ps.ServerCapabilities)
			return &out, nil
		})
		compare(t, rname+" metadata", tftypes.String, d, func(s tfprotov6.ProviderServer) (any, error) {
			m, err := s.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{})
			if err != nil {
				return nil, err
			}
			out := *m // the framework lists the types in no fixed order
			out.ServerCapabilities = stated(s, m.ServerCapabilities)
			out.Resources = slices.SortedFunc(slices.Values(m.Resources), func(a, b tfprotov6.ResourceMetadata) int { return strings.Compare(a.TypeName, b.TypeName) })
			out.DataSources = slices.SortedFunc(slices.Values(m.DataSources), func(a, b tfprotov6.DataSourceMetadata) int { return strings.Compare(a.TypeName, b.TypeName) })
			return &out, nil
		})
		compare(t, rname+" identity schemas", tftypes.String, d, func(s tfprotov6.ProviderServer) (any, error) {
			return s.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
		})
		srv := serverOf(t, d.srv)
		first, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
		if err != nil {
			t.Fatal(err)
		}
		again, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
		if err != nil || again != first {
			t.Errorf("%s: the schemas were built again (%v)", rname, err)
		}
		if first.Provider != nil {
			t.Errorf("%s: our server answers a provider block; the framework server in the mux answers it", rname)
		}
		// mux states its own capabilities, so ours are compared alone
		fwMeta, err := d.fw.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{})
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := srv.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{})
		if !reflect.DeepEqual(meta.ServerCapabilities, fwMeta.ServerCapabilities) || !reflect.DeepEqual(first.ServerCapabilities, fwMeta.ServerCapabilities) {
			t.Errorf("%s: our server states capabilities %+v (metadata) and %+v (schema), the framework %+v", rname, meta.ServerCapabilities, first.ServerCapabilities, fwMeta.ServerCapabilities)
		}
		ids, err := srv.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(first.ResourceSchemas) != len(srv.types) || len(first.DataSourceSchemas) != len(srv.data) {
			t.Errorf("%s: %d resource and %d data source schemas for %d types", rname, len(first.ResourceSchemas), len(first.DataSourceSchemas), len(srv.types))
		}
		for name, pt := range srv.types {
			if got := first.ResourceSchemas[name].ValueType(); !got.Equal(pt.rules.typ) {
				t.Errorf("%s %s: the schema's type %s, the server decodes %s", rname, name, got, pt.rules.typ)
			}
			if got := first.DataSourceSchemas[name].ValueType(); !got.Equal(srv.data[name].typ) {
				t.Errorf("%s %s data source: the schema's type %s, the server decodes %s", rname, name, got, srv.data[name].typ)
			}
			id := ids.IdentitySchemas[name]
			attrs := map[string]tftypes.Type{}
			for _, a := range id.IdentityAttributes {
				attrs[a.Name] = a.Type
			}
			if got := (tftypes.Object{AttributeTypes: attrs}); !got.Equal(identityType) || id.Version != identityVersion {
				t.Errorf("%s %s: identity schema %s version %d, the server decodes %s version %d", rname, name, got, id.Version, identityType, identityVersion)
			}
		}
	}
}
