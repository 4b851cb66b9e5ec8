package edge

import (
	"strings"
	"testing"
)

func TestCheckDeploymentWeights(t *testing.T) {
	valid := [][]int64{
		{10000},
		{9999, 1},
		{5000, 5000},
		{1250, 1250, 1250, 1250, 1250, 1250, 1250, 1250},
		{1, 1, 1, 1, 1, 1, 1, 9993},
	}
	for _, w := range valid {
		if err := CheckDeploymentWeights(w); err != nil {
			t.Errorf("CheckDeploymentWeights(%v): %v", w, err)
		}
	}
	tests := []struct {
		in            []int64
		rule, pointer string
		says          []string
	}{
		{nil, RuleDeploymentVersionCount, "/versions", []string{"0"}},
		{[]int64{}, RuleDeploymentVersionCount, "/versions", nil},
		{[]int64{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 2000}, RuleDeploymentVersionCount, "/versions", []string{"9", "8"}},
		{[]int64{0}, RuleDeploymentWeightRange, "/versions/0/weight", nil}, // reference negative fixture
		{[]int64{5000, -1, 5001}, RuleDeploymentWeightRange, "/versions/1/weight", nil},
		{[]int64{10001}, RuleDeploymentWeightRange, "/versions/0/weight", nil},
		{[]int64{9999}, RuleDeploymentWeightSum, "/versions", []string{"9999", "10000"}},
		{[]int64{5000, 5001}, RuleDeploymentWeightSum, "/versions", []string{"10001", "10000"}},
		{[]int64{10000, 10000}, RuleDeploymentWeightSum, "/versions", []string{"20000", "10000"}},
	}
	for _, tc := range tests {
		re := wantRuleError(t, CheckDeploymentWeights(tc.in), tc.rule, tc.pointer)
		for _, s := range tc.says {
			if !strings.Contains(re.Message, s) {
				t.Errorf("%v: message %q does not mention %s", tc.in, re.Message, s)
			}
		}
	}
}

func TestCheckDeploymentVersionNames(t *testing.T) {
	if err := CheckDeploymentVersionNames([]string{"v1", "v2"}); err != nil {
		t.Fatal(err)
	}
	err := CheckDeploymentVersionNames([]string{"v1", "v2", "v1"})
	re, ok := err.(*RuleError)
	if !ok || re.Rule != RuleDeploymentDuplicate || re.Pointer != "/versions/2/workerVersion" {
		t.Fatalf("duplicate version: %v", err)
	}
	if got := SpecRules("WorkerDeployment", map[string]any{"versions": []any{
		map[string]any{"weight": 5000.0, "workerVersion": map[string]any{"name": "v1"}},
		map[string]any{"weight": 5000.0, "workerVersion": map[string]any{"name": "v1"}},
	}}); len(got) != 1 || got[0].Rule != RuleDeploymentDuplicate {
		t.Fatalf("SpecRules: %v", got)
	}
}
