package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/wire"
)

// Shared fixtures of the evolution tests (decisions 0017, 0030; repo decisions
// 0003, 0004): the Gizmo line at 1.0.0 (testdata/forms), a synthetic additive
// 1.1.0 (an optional coating and a declared output serialUrl) and a
// synthetic breaking 2.0.0 (finish removed, labels required), both under
// testdata/evolution.

const gizmoGroup = "forms.example.com/v1alpha1"

// evolutionCatalog is the Edge family plus every Gizmo version.
func evolutionCatalog(t *testing.T) *form.Catalog {
	t.Helper()
	cat := gizmoCatalog(t)
	extra, err := host.LoadCatalog(os.DirFS("testdata/evolution"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range extra.Forms() {
		if cat, err = cat.AddForm(in.Definition, in.PackageDigest); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

// gizmoRef is the exact FormRef of one Gizmo definition version.
func gizmoRef(t *testing.T, cat *form.Catalog, version string) form.FormRef {
	t.Helper()
	in, ok := cat.FormByVersion(gizmoGroup, "Gizmo", version)
	if !ok {
		t.Fatalf("no Gizmo %s in the catalog", version)
	}
	return in.Definition.Ref()
}

// gizmoBuild is a test build of the provider: the Edge types plus the
// given Gizmo type declarations.
func gizmoBuild(t *testing.T, cat *form.Catalog, decls ...provider.TypeDecl) *provider.Registry {
	t.Helper()
	all := []provider.TypeDecl{}
	for _, d := range provider.DeclareCatalog(cat) {
		if d.DefaultCreate.APIVersion != gizmoGroup {
			all = append(all, d)
		}
	}
	reg, err := provider.NewRegistry(cat, append(all, decls...))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// gizmoType declares a Gizmo type creating under create and supporting
// create plus also.
func gizmoType(name string, create form.FormRef, also ...form.FormRef) provider.TypeDecl {
	return provider.TypeDecl{Name: name, DefaultCreate: create, Supported: append([]form.FormRef{create}, also...)}
}

// gizmoFamily is the host's Edge semantics plus the outputs a Gizmo
// definition declares: serialUrl, derived from the serial number.
type gizmoFamily struct{ *edgehost.Family }

func (f gizmoFamily) Render(tx store.Tx, def *form.Definition, res *store.Resource) ([]wire.Condition, map[string]any, error) {
	if def.Ref().APIVersion != gizmoGroup {
		return f.Family.Render(tx, def, res)
	}
	if len(def.OutputNames()) == 0 {
		return nil, nil, nil
	}
	var spec struct {
		SerialNumber string `json:"serialNumber"`
	}
	if err := json.Unmarshal(res.Spec, &spec); err != nil {
		return nil, nil, err
	}
	return nil, map[string]any{"serialUrl": "https://gizmos.example/" + spec.SerialNumber}, nil
}

// evolutionHost starts a host with every Gizmo version installed beside
// the Edge family, behind a refLog.
func evolutionHost(t *testing.T, cat *form.Catalog) (*hosttest.Host, *refLog) {
	h := accHost(t, hosttest.Options{Catalog: cat, Family: gizmoFamily{edgehost.New()}})
	log := &refLog{next: h.Server}
	front := httptest.NewServer(log)
	t.Cleanup(front.Close)
	return &hosttest.Host{URL: front.URL}, log
}

// refLog sits in front of a host and records, for every request on a
// resource path, "METHOD name@definitionVersion": the exact FormRef's
// version from the query (read, delete) or the body (prepare, apply,
// import).
type refLog struct {
	next http.Handler
	mu   sync.Mutex
	seen []string
}

func (l *refLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	prefix := wire.V1alpha3.APIBase + "/resources/"
	if strings.HasPrefix(r.URL.Path, prefix) {
		segs := strings.Split(strings.TrimPrefix(r.URL.Path, prefix), "/") // group, version, kind, name[, verb] | prepare
		name, version := "", r.URL.Query().Get("definitionVersion")
		if len(segs) >= 4 {
			name = segs[3]
		}
		if r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var doc struct {
				Form     wire.FormReference `json:"form"`
				Metadata wire.Metadata      `json:"metadata"`
			}
			if json.Unmarshal(body, &doc) == nil {
				if v := doc.Form.FormRef.DefinitionVersion; v != "" {
					version = v
				}
				if name == "" {
					name = doc.Metadata.Name
				}
			}
		}
		l.mu.Lock()
		l.seen = append(l.seen, fmt.Sprintf("%s %s@%s", r.Method, name, version))
		l.mu.Unlock()
	}
	l.next.ServeHTTP(w, r)
}

// versionsOf returns the sorted set of definition versions the provider
// named in requests about name.
func (l *refLog) versionsOf(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	set := map[string]bool{}
	for _, s := range l.seen {
		if n, v, _ := strings.Cut(strings.Fields(s)[1], "@"); n == name {
			set[v] = true
		}
	}
	var out []string
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// refsOnly checks that every request about name named exactly the
// definition versions want.
func refsOnly(log *refLog, name string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := log.versionsOf(name); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("the provider addressed %s under definition versions %v; want only %v", name, got, want)
		}
		return nil
	}
}

// createOnHost creates a resource through the Go client, as another
// client (or an earlier provider build) would.
func createOnHost(t *testing.T, h *hosttest.Host, space string, ref form.FormRef, name, spec string) *wire.Resource {
	t.Helper()
	c, ctx := hostClient(t, h), context.Background()
	req := wire.ResourceRequest{APIVersion: ref.APIVersion, Kind: ref.Kind, Form: wire.FormReference{FormRef: ref},
		Metadata: wire.Metadata{Name: name, Space: space}, Spec: []byte(spec)}
	p, err := c.Prepare(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// jsonImportID is the JSON import ID of an exact identity.
func jsonImportID(space string, ref form.FormRef, name string) string {
	b, _ := json.Marshal(map[string]string{"space": space, "apiVersion": ref.APIVersion, "kind": ref.Kind,
		"definitionVersion": ref.DefinitionVersion, "schemaDigest": ref.SchemaDigest, "name": name})
	return string(b)
}
