package host_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

// TestServesTheReferenceFamily installs the public reference family the
// way `takoform host serve --forms DIR` does and checks the host answers
// its exact FormRefs and serves each desiredSchema byte-for-byte.
func TestServesTheReferenceFamily(t *testing.T) {
	dir := testref.Dir(t)
	cat, err := host.LoadCatalog(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	h := hosttest.Start(t, hosttest.Options{Catalog: cat})
	ctx := context.Background()
	c, err := client.New(ctx, h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	fam, _ := form.LoadFamily(os.DirFS(dir))
	if len(fam.Forms) != 12 {
		t.Fatalf("%d reference forms", len(fam.Forms))
	}
	for _, f := range fam.Forms {
		ref := f.Definition.Ref()
		file, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		avail, err := c.Forms(ctx, "ref", ref)
		if err != nil || len(avail.Forms) != 1 || avail.Forms[0].Identity.FormRef != ref {
			t.Fatalf("%s: forms answered %+v, %v", ref.Kind, avail, err)
		}
		q := "?space=ref&group=" + ref.APIVersion + "&kind=" + ref.Kind + "&definitionVersion=" + ref.DefinitionVersion + "&schemaDigest=" + ref.SchemaDigest
		req, _ := http.NewRequest(http.MethodGet, h.URL+wire.V1alpha3.APIBase+"/form-definitions/"+ref.APIVersion+"/"+ref.Kind+q, nil)
		req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		member := f.Definition.DesiredSchemaJSON()
		if resp.StatusCode != 200 || !bytes.Contains(file, member) || !bytes.Contains(body, append([]byte(`"desiredSchema":`), member...)) {
			t.Fatalf("%s: form-definitions does not carry the definition's desiredSchema bytes (HTTP %d)", ref.Kind, resp.StatusCode)
		}
		def, err := c.FormDefinition(ctx, "ref", ref)
		if err != nil || def.Identity.FormRef != ref {
			t.Fatalf("%s: client form-definition: %v", ref.Kind, err)
		}
	}
}
