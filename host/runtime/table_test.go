package runtime

import "testing"

// The draw walks the versions in stored order, adding weights; the first
// whose running sum exceeds the draw serves (spec/runtime-v1.md §9.1 (3)).
func TestResolveDrawsByWeightInStoredOrder(t *testing.T) {
	a, b := &Target{Version: "a"}, &Target{Version: "b"}
	tbl := &table{hosts: map[string]*tableRoute{
		"w.example":    {worker: "s/w", entries: []tableEntry{{weight: 2500, target: a}, {weight: 7500, target: b}}},
		"half.example": {worker: "s/h", entries: []tableEntry{{weight: 5000, target: a}, {weight: 5000, reason: "version s/v is not running yet"}}},
		"none.example": {worker: "s/n"},
	}}
	for _, c := range []struct {
		host    string
		draw    int64
		want    *Target
		outcome Outcome
	}{
		{"w.example", 0, a, Routed},
		{"w.example", 2499, a, Routed},
		{"w.example", 2500, b, Routed},
		{"w.example", 9999, b, Routed},
		{"half.example", 4999, a, Routed},
		{"half.example", 5000, nil, NotRunnable},
		{"none.example", 0, nil, NotRunnable},
		{"other.example", 0, nil, UnknownHost},
	} {
		got, outcome, reason := tbl.resolveDraw(c.host, c.draw)
		if got != c.want || outcome != c.outcome {
			t.Errorf("%s at draw %d: %v, outcome %d (%s); want %v, outcome %d", c.host, c.draw, got, outcome, reason, c.want, c.outcome)
		}
	}
}
