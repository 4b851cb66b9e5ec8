package edge

import (
	"encoding/json"
	"strings"
	"testing"
)

func envDecodeSpec(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

// envReferenceVersion mirrors worker-version/fixtures/desired.json.
const envReferenceVersion = `{
  "bucketBindings": [{"name": "MEDIA", "resource": {"apiVersion": "edge.forms.takoform.com/v1alpha1", "kind": "ObjectBucket", "name": "object-bucket"}}],
  "bundle": {"apiVersion": "edge.forms.takoform.com/v1alpha1", "kind": "WorkerBundle", "name": "worker-bundle"},
  "handlers": ["fetch"],
  "kvBindings": [{"name": "CACHE", "resource": {"apiVersion": "edge.forms.takoform.com/v1alpha1", "kind": "EdgeKVNamespace", "name": "edge-kv-namespace"}}],
  "queueProducerBindings": [{"name": "EVENTS", "resource": {"apiVersion": "edge.forms.takoform.com/v1alpha1", "kind": "AtLeastOnceQueue", "name": "at-least-once-queue"}}],
  "requiredSensitiveVars": ["API_SIGNING_TOKEN_NAME"],
  "serviceBindings": [{"name": "AUTH", "resource": {"apiVersion": "edge.forms.takoform.com/v1alpha1", "kind": "ModuleWorker", "name": "auth-worker"}}],
  "sqliteBindings": [{"name": "DB", "resource": {"apiVersion": "edge.forms.takoform.com/v1alpha1", "kind": "SQLiteDatabase", "name": "sqlite-database"}}],
  "vars": {"LOG_LEVEL": "info"},
  "worker": {"apiVersion": "edge.forms.takoform.com/v1alpha1", "kind": "ModuleWorker", "name": "module-worker"}
}`

func TestCheckEnvironmentNamespaceValid(t *testing.T) {
	specs := []string{
		envReferenceVersion,
		`{}`,
		`{"vars": {}, "requiredSensitiveVars": [], "kvBindings": []}`,
		`{"vars": {"cache": 1, "Cache": 2.5, "n": {"deep": [1, 2]}}, "kvBindings": [{"name": "CACHE"}]}`, // case-sensitive
		`{"vars": null, "kvBindings": [{"name": "A"}, {"name": "B"}], "serviceBindings": [{"name": "C"}]}`,
	}
	for _, s := range specs {
		if err := CheckEnvironmentNamespace(envDecodeSpec(t, s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if err := CheckEnvironmentNamespace(nil); err != nil {
		t.Errorf("nil spec: %v", err)
	}
	// Go-typed lists are accepted too.
	typed := map[string]any{
		"requiredSensitiveVars": []string{"A", "B"},
		"kvBindings":            []map[string]any{{"name": "C"}},
	}
	if err := CheckEnvironmentNamespace(typed); err != nil {
		t.Errorf("typed spec: %v", err)
	}
}

func TestCheckEnvironmentNamespaceInvalid(t *testing.T) {
	tests := []struct {
		name, spec, rule, pointer, other string
	}{
		{"var vs kv", `{"vars": {"CACHE": "x"}, "kvBindings": [{"name": "CACHE"}]}`,
			RuleEnvCollision, "/kvBindings/0/name", "/vars/CACHE"},
		{"var vs sensitive", `{"vars": {"TOKEN": 1}, "requiredSensitiveVars": ["TOKEN"]}`,
			RuleEnvCollision, "/requiredSensitiveVars/0", "/vars/TOKEN"},
		{"sensitive twice", `{"requiredSensitiveVars": ["A", "B", "A"]}`,
			RuleEnvCollision, "/requiredSensitiveVars/2", "/requiredSensitiveVars/0"},
		{"sensitive vs service", `{"requiredSensitiveVars": ["AUTH"], "serviceBindings": [{"name": "AUTH"}]}`,
			RuleEnvCollision, "/serviceBindings/0/name", "/requiredSensitiveVars/0"},
		{"same list", `{"bucketBindings": [{"name": "M"}, {"name": "X"}, {"name": "M"}]}`,
			RuleEnvCollision, "/bucketBindings/2/name", "/bucketBindings/0/name"},
		{"across lists", `{"kvBindings": [{"name": "DB"}], "sqliteBindings": [{"name": "X"}, {"name": "DB"}]}`,
			RuleEnvCollision, "/sqliteBindings/1/name", "/kvBindings/0/name"},
		{"queue vs bucket", `{"bucketBindings": [{"name": "Q"}], "queueProducerBindings": [{"name": "Q"}]}`,
			RuleEnvCollision, "/queueProducerBindings/0/name", "/bucketBindings/0/name"},
		{"pointer escaping", `{"vars": {"a/b~c": 1}, "kvBindings": [{"name": "a/b~c"}]}`,
			RuleEnvCollision, "/kvBindings/0/name", "/vars/a~1b~0c"},
		{"vars not object", `{"vars": []}`, RuleEnvShape, "/vars", ""},
		{"sensitive not array", `{"requiredSensitiveVars": "A"}`, RuleEnvShape, "/requiredSensitiveVars", ""},
		{"sensitive entry", `{"requiredSensitiveVars": ["A", 7]}`, RuleEnvShape, "/requiredSensitiveVars/1", ""},
		{"binding list not array", `{"kvBindings": {}}`, RuleEnvShape, "/kvBindings", ""},
		{"binding entry", `{"kvBindings": ["CACHE"]}`, RuleEnvShape, "/kvBindings/0", ""},
		{"binding name missing", `{"serviceBindings": [{"resource": {}}]}`, RuleEnvShape, "/serviceBindings/0/name", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			re := wantRuleError(t, CheckEnvironmentNamespace(envDecodeSpec(t, tc.spec)), tc.rule, tc.pointer)
			for _, p := range []string{tc.pointer, tc.other} {
				if !strings.Contains(re.Message, p) {
					t.Errorf("message %q does not name %s", re.Message, p)
				}
			}
		})
	}
}

func TestBindingLists(t *testing.T) {
	want := map[string]string{
		"kvBindings":            "module-worker.edge-kv",
		"bucketBindings":        "module-worker.object-bucket",
		"sqliteBindings":        "module-worker.sqlite",
		"queueProducerBindings": "module-worker.queue-producer",
		"serviceBindings":       "module-worker.service",
	}
	if len(BindingLists) != len(want) {
		t.Fatalf("BindingLists has %d entries, want %d", len(BindingLists), len(want))
	}
	for _, bl := range BindingLists {
		if want[bl.Field] != bl.Binding || bl.TargetKind == "" || bl.Interface == "" {
			t.Errorf("unexpected entry %+v", bl)
		}
	}
}
