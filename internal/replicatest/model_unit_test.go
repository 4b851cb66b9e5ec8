package replicatest_test

import (
	"math"
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestModelRejectsWhatTheLaneForbids holds the linearizability model
// honest: hand-made histories of one name that break a promise of the
// lane are rejected, and their lawful twins accepted.
func TestModelRejectsWhatTheLaneForbids(t *testing.T) {
	op := func(client int, call, ret int64, in linIn, out linOut) porcupine.Operation {
		in.name = "n"
		return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out}
	}
	created := op(0, 0, 1, linIn{op: 1, kind: linCreate, value: 60, key: "k1"}, linOut{code: "201", uid: "u1", gen: 1, value: 60})
	cases := []struct {
		name string
		ok   bool
		h    []porcupine.Operation
	}{
		{"two fenced updates from one generation both admitted (lost update)", false, []porcupine.Operation{created,
			op(1, 2, 5, linIn{op: 2, kind: linUpdate, uid: "u1", gen: 1, value: 61, key: "k2"}, linOut{code: "200", uid: "u1", gen: 2, value: 61}),
			op(2, 2, 5, linIn{op: 3, kind: linUpdate, uid: "u1", gen: 1, value: 62, key: "k3"}, linOut{code: "200", uid: "u1", gen: 2, value: 62})}},
		{"two fenced updates from one generation, one refused", true, []porcupine.Operation{created,
			op(1, 2, 5, linIn{op: 2, kind: linUpdate, uid: "u1", gen: 1, value: 61, key: "k2"}, linOut{code: "200", uid: "u1", gen: 2, value: 61}),
			op(2, 2, 5, linIn{op: 3, kind: linUpdate, uid: "u1", gen: 1, value: 62, key: "k3"}, linOut{code: "generation_conflict"})}},
		{"a re-created name reuses the old UID", false, []porcupine.Operation{created,
			op(0, 2, 3, linIn{op: 2, kind: linDelete, gen: 1, key: "k2"}, linOut{code: "204"}),
			op(0, 4, 5, linIn{op: 3, kind: linCreate, value: 60, key: "k3"}, linOut{code: "201", uid: "u1", gen: 1, value: 60})}},
		{"a re-created name gets a new UID", true, []porcupine.Operation{created,
			op(0, 2, 3, linIn{op: 2, kind: linDelete, gen: 1, key: "k2"}, linOut{code: "204"}),
			op(0, 4, 5, linIn{op: 3, kind: linCreate, value: 60, key: "k3"}, linOut{code: "201", uid: "u2", gen: 1, value: 60})}},
		{"a read misses an acknowledged update", false, []porcupine.Operation{created,
			op(0, 2, 3, linIn{op: 2, kind: linUpdate, uid: "u1", gen: 1, value: 61, key: "k2"}, linOut{code: "200", uid: "u1", gen: 2, value: 61}),
			op(1, 4, 5, linIn{op: 3, kind: linRead}, linOut{code: "200", uid: "u1", gen: 1, value: 60})}},
		{"a spec-identical update moves the generation", false, []porcupine.Operation{created,
			op(0, 2, 3, linIn{op: 2, kind: linUpdate, uid: "u1", gen: 1, value: 60, key: "k2"}, linOut{code: "200", uid: "u1", gen: 2, value: 60})}},
		{"a resent create executes twice", false, []porcupine.Operation{
			op(0, 0, 1, linIn{op: 1, kind: linCreate, value: 60, key: "k1", tracked: true}, linOut{code: "201", uid: "u1", gen: 1, value: 60}),
			op(0, 2, 3, linIn{op: 2, kind: linCreate, value: 60, key: "k1", tracked: true}, linOut{code: "generation_conflict"})}},
		{"a resent create replays", true, []porcupine.Operation{
			op(0, 0, 1, linIn{op: 1, kind: linCreate, value: 60, key: "k1", tracked: true}, linOut{code: "201", uid: "u1", gen: 1, value: 60}),
			op(0, 2, 3, linIn{op: 2, kind: linCreate, value: 60, key: "k1", tracked: true}, linOut{code: "201", uid: "u1", gen: 1, value: 60})}},
		{"a create cut by a kill, then seen by a read", true, []porcupine.Operation{
			op(0, 0, math.MaxInt64, linIn{op: 1, kind: linCreate, value: 60, key: "k1"}, linOut{unknown: true}),
			op(1, 2, 3, linIn{op: 2, kind: linRead}, linOut{code: "200", uid: "u7", gen: 1, value: 60})}},
		{"a create cut by a kill is resent and replays while a read saw it", true, []porcupine.Operation{
			op(0, 0, math.MaxInt64, linIn{op: 1, kind: linCreate, value: 60, key: "k1", tracked: true}, linOut{unknown: true}),
			op(1, 2, 3, linIn{op: 2, kind: linRead}, linOut{code: "200", uid: "u7", gen: 1, value: 60}),
			op(0, 4, 5, linIn{op: 3, kind: linCreate, value: 60, key: "k1", tracked: true}, linOut{code: "201", uid: "u7", gen: 1, value: 60})}},
		{"a resent create answers another incarnation than the one it made", false, []porcupine.Operation{
			op(0, 0, math.MaxInt64, linIn{op: 1, kind: linCreate, value: 60, key: "k1", tracked: true}, linOut{unknown: true}),
			op(1, 2, 3, linIn{op: 2, kind: linRead}, linOut{code: "200", uid: "u7", gen: 1, value: 60}),
			op(0, 4, 5, linIn{op: 3, kind: linCreate, value: 60, key: "k1", tracked: true}, linOut{code: "201", uid: "u8", gen: 1, value: 60})}},
	}
	for _, c := range cases {
		if got := porcupine.CheckOperations(linModel, c.h); got != c.ok {
			t.Errorf("%s: linearizable %v, want %v", c.name, got, c.ok)
		}
	}
}
