package edge

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"testing"
)

// v1beta1Doc decodes a definition of the v1beta1 tree with encoding/json
// (numbers float64), failing the test when absent.
func v1beta1Doc(t *testing.T, fsys fs.FS, path string) map[string]any {
	t.Helper()
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// at is the member at the object path of v (array indexes as numbers in
// path are not needed here), nil when absent.
func at(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// hasMember reports whether any object within v has the member name.
func hasMember(v any, name string) bool {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t[name]; ok {
			return true
		}
		for _, x := range t {
			if hasMember(x, name) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if hasMember(x, name) {
				return true
			}
		}
	}
	return false
}

// TestV1beta1ContractChanges checks our own v1beta1 documents for the
// contract changes of spec/lane-v1beta1.md §6.4, §6.6, §6.7, §7.1 and §7.3,
// and our v1alpha1 ones for the values they replace, without the
// reference data.
func TestV1beta1ContractChanges(t *testing.T) {
	alpha, beta := Family(), FamilyV1beta1()
	limits := []struct {
		iface, member string
		alpha, beta   float64
	}{
		{"edge.kv", "maxKeyBytes", 512, 467},
		{"edge.objects", "maxKeyBytes", 1024, 979},
		{"edge.queue", "maxMessageBytes", 131072, 127000},
		{"worker.runtime", "maxQueueMessageBytes", 131072, 127000},
	}
	for _, l := range limits {
		p := "interfaces/" + l.iface + "/definition.json"
		if got := at(v1beta1Doc(t, alpha, p), "limits", l.member); got != l.alpha {
			t.Errorf("v1alpha1 %s %s = %v, want %v", l.iface, l.member, got, l.alpha)
		}
		if got := at(v1beta1Doc(t, beta, p), "limits", l.member); got != l.beta {
			t.Errorf("v1beta1 %s %s = %v, want %v", l.iface, l.member, got, l.beta)
		}
	}
	kvGet := at(v1beta1Doc(t, beta, "interfaces/edge.kv/definition.json"), "operations").([]any)[0]
	if got := at(kvGet, "inputSchema", "properties", "key", "maxLength"); got != 467.0 {
		t.Errorf("v1beta1 edge.kv get key maxLength %v, want 467", got)
	}

	sql := v1beta1Doc(t, beta, "interfaces/edge.sql/definition.json")
	if hasMember(sql, "lastInsertRowId") {
		t.Error("v1beta1 edge.sql still has a lastInsertRowId member")
	}
	if !hasMember(v1beta1Doc(t, alpha, "interfaces/edge.sql/definition.json"), "lastInsertRowId") {
		t.Error("v1alpha1 edge.sql lost its lastInsertRowId member")
	}
	wantLimits := map[string]any{
		"maxBlobBytesPerValue": 1000000.0, "maxBoundParameters": 100.0, "maxColumnNameBytes": 128.0,
		"maxColumnsPerRow": 100.0, "maxResultBytesPerCall": 8388608.0, "maxRowBytes": 2000000.0,
		"maxRowsPerStatement": 10000.0, "maxStatementBytes": 100000.0, "maxStatementsPerTransaction": 100.0,
		"maxTextBytesPerValue": 1000000.0,
	}
	if got := sql["limits"]; !reflect.DeepEqual(got, wantLimits) {
		t.Errorf("v1beta1 edge.sql limits %v, want %v", got, wantLimits)
	}
	for _, o := range sql["operations"].([]any) {
		op := o.(map[string]any)
		if errs := op["errors"].([]any); len(errs) != 4 || errs[1] != "numeric_out_of_range" {
			t.Errorf("v1beta1 edge.sql %v errors %v", op["name"], errs)
		}
		if op["name"] == "query" {
			if rw := at(op, "outputSchema", "properties", "rowsWritten", "const"); rw != 0.0 {
				t.Errorf("v1beta1 query rowsWritten const %v, want 0: query always rolls back", rw)
			}
			if op["idempotent"] != true {
				t.Error("v1beta1 query is not idempotent")
			}
		}
	}
	value := at(sql, "operations").([]any)[0]
	number := at(value, "inputSchema", "properties", "params", "items", "oneOf").([]any)[1]
	if at(number, "maximum") != 9007199254740991.0 || at(number, "minimum") != -9007199254740991.0 {
		t.Errorf("v1beta1 edge.sql number value %v, want ±9007199254740991", number)
	}

	// Every Binding allows only targets of its own family.
	for _, b := range []string{"module-worker.edge-kv", "module-worker.object-bucket", "module-worker.sqlite", "module-worker.queue-producer", "module-worker.service"} {
		p := "bindings/" + b + "/definition.json"
		for fam, fsys := range map[string]fs.FS{GroupV1alpha1: alpha, GroupV1beta1: beta} {
			for _, a := range v1beta1Doc(t, fsys, p)["allowedTargetForms"].([]any) {
				if g := at(a, "apiVersion"); g != fam {
					t.Errorf("%s of %s allows target group %v", b, fam, g)
				}
			}
		}
	}

	wv := v1beta1Doc(t, beta, "forms/worker-version/definition.json")
	assets := at(wv, "desiredSchema", "properties", "assets")
	if at(assets, "additionalProperties") != false || !reflect.DeepEqual(at(assets, "required"), []any{"bundle", "notFoundHandling", "runWorkerFirst"}) ||
		!reflect.DeepEqual(at(assets, "properties", "notFoundHandling", "enum"), []any{"none", "single_page_application"}) ||
		at(assets, "properties", "bundle", "properties", "kind", "const") != "StaticAssetBundle" {
		t.Errorf("v1beta1 WorkerVersion.assets is not the closed {bundle, runWorkerFirst, notFoundHandling} of §6.4: %v", assets)
	}
	if imm := wv["immutableFields"].([]any); imm[0] != "/assets" {
		t.Errorf("v1beta1 WorkerVersion immutableFields %v lack /assets", imm)
	}
	if at(v1beta1Doc(t, alpha, "forms/worker-version/definition.json"), "desiredSchema", "properties", "assets") != nil {
		t.Error("v1alpha1 WorkerVersion has assets")
	}

	for _, f := range []struct{ dir, role string }{
		{"static-asset-bundle", "revision"}, {"sqlite-migration-set", "revision"}, {"sqlite-migration-application", "attachment"},
	} {
		d := v1beta1Doc(t, beta, "forms/"+f.dir+"/definition.json")
		if d["role"] != f.role || !reflect.DeepEqual(d["lifecycleCapabilities"], []any{"create", "read", "delete", "import", "observe"}) {
			t.Errorf("%s: role %v, capabilities %v", f.dir, d["role"], d["lifecycleCapabilities"])
		}
	}

	// Ten of the eleven contracts have new bytes; worker.service is the
	// same document in both families (spec/lane-v1beta1.md §0, §7.1).
	ia, _ := IndexOf(alpha)
	ib, _ := IndexOf(beta)
	same := 0
	for _, pair := range [][2][]ContractEntry{{ia.Interfaces, ib.Interfaces}, {ia.Bindings, ib.Bindings}} {
		for i := range pair[0] {
			if pair[0][i].SchemaDigest == pair[1][i].SchemaDigest {
				same++
				if pair[0][i].Name != "worker.service" {
					t.Errorf("%s has the same digest in both families", pair[0][i].Name)
				}
			}
		}
	}
	if same != 1 {
		t.Errorf("%d contracts keep their digest across the families, want 1 (worker.service)", same)
	}
}
