package replicatest_test

import (
	"fmt"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The sequential model of one resource name of the lane, against which the
// linearizability test checks its history with porcupine
// (spec/host-api-v1alpha3.md §1.4 UID, §1.5 generation, §3.4 (5) apply
// fences, (9) delete, §3.5 idempotent replay):
//
//   - create (If-None-Match: *) on a free name commits generation 1 under a
//     UID never used for that name before; on a taken name it is refused
//     generation_conflict;
//   - update (expectedUid + generation fence): resource_not_found when
//     absent, uid_mismatch on another incarnation, generation_conflict on a
//     stale generation; else the spec is stored and the generation moves by
//     one if and only if the spec changed;
//   - delete (generation fence): resource_not_found, generation_conflict,
//     or 204 and the name is free;
//   - replay: a mutation resent under its idempotency key answers the
//     recorded answer while the record lives (bound to nothing for a
//     refusal or a 204; to the UID a 201/200 reported while that UID is
//     live), and executes as new once it is retired.
//
// A request whose answer was lost (the replica was killed, or it answered
// a retryable backend_unavailable / resource_busy) has an unknown output:
// it may have executed at any point after its call, or never (porcupine
// may place it last). A created UID nobody saw yet is a placeholder bound
// to the first UID an answer reports for that incarnation.

type linKind int

const (
	linRead linKind = iota
	linCreate
	linUpdate
	linDelete
)

func (k linKind) String() string { return [...]string{"read", "create", "update", "delete"}[k] }

// linIn is one request: kind, name, the spec value sent, the fences sent
// (uid and generation for update, generation for delete), the idempotency
// key and whether the key was sent more than once (only then is its record
// modelled).
type linIn struct {
	op      int // unique per attempt: names placeholders
	kind    linKind
	name    string
	value   int
	uid     string
	gen     int
	key     string
	tracked bool
}

// linOut is one answer: unknown, or a code ("200", "201", "204", "404"
// for an absent read, or a refusal code) with the resource it reports.
type linOut struct {
	unknown bool
	code    string
	uid     string
	gen     int
	value   int
}

func (o linOut) hasResource() bool { return o.code == "200" || o.code == "201" }

type linRecord struct {
	out   linOut
	bound string // the UID the record is bound to; "" for none
}

type linState struct {
	present bool
	uid     string
	gen     int
	value   int
	used    map[string]bool
	records map[string]linRecord
}

func (s linState) clone() linState {
	n := s
	n.used = make(map[string]bool, len(s.used))
	for k, v := range s.used {
		n.used[k] = v
	}
	n.records = make(map[string]linRecord, len(s.records))
	for k, v := range s.records {
		n.records[k] = v
	}
	return n
}

func placeholder(uid string) bool { return strings.HasPrefix(uid, "?") }

// bind replaces the placeholder ph by uid everywhere in s.
func (s linState) bind(ph, uid string) linState {
	n := s.clone()
	if n.uid == ph {
		n.uid = uid
	}
	delete(n.used, ph)
	n.used[uid] = true
	for k, r := range n.records {
		if r.bound == ph {
			r.bound = uid
		}
		if r.out.uid == ph {
			r.out.uid = uid
		}
		n.records[k] = r
	}
	return n
}

// match checks the observed answer against the expected one in state s,
// binding a placeholder UID to the observed one when it is new.
func match(s linState, exp, got linOut) (bool, linState) {
	switch {
	case exp.code != got.code:
		return false, s
	case !exp.hasResource():
		return true, s
	case exp.gen != got.gen || exp.value != got.value:
		return false, s
	case exp.uid == got.uid:
		return true, s
	case placeholder(exp.uid) && !s.used[got.uid]:
		return true, s.bind(exp.uid, got.uid)
	}
	return false, s
}

// execute is what the host does with in on state s: its answer and the
// next state.
func execute(s linState, in linIn) (linOut, linState) {
	switch in.kind {
	case linCreate:
		if s.present {
			return linOut{code: "generation_conflict"}, s
		}
		n := s.clone()
		ph := fmt.Sprintf("?%d", in.op)
		n.present, n.uid, n.gen, n.value = true, ph, 1, in.value
		n.used[ph] = true
		return linOut{code: "201", uid: ph, gen: 1, value: in.value}, n
	case linUpdate:
		switch {
		case !s.present:
			return linOut{code: "resource_not_found"}, s
		case s.uid != in.uid:
			return linOut{code: "uid_mismatch"}, s
		case s.gen != in.gen:
			return linOut{code: "generation_conflict"}, s
		}
		n := s.clone()
		if in.value != s.value {
			n.gen++
		}
		n.value = in.value
		return linOut{code: "200", uid: n.uid, gen: n.gen, value: n.value}, n
	case linDelete:
		switch {
		case !s.present:
			return linOut{code: "resource_not_found"}, s
		case s.gen != in.gen:
			return linOut{code: "generation_conflict"}, s
		}
		n := s.clone()
		n.present, n.uid, n.gen, n.value = false, "", 0, 0
		return linOut{code: "204"}, n
	}
	if !s.present {
		return linOut{code: "404"}, s
	}
	return linOut{code: "200", uid: s.uid, gen: s.gen, value: s.value}, s
}

func linStep(state, input, output any) (bool, any) {
	s, in, out := state.(linState), input.(linIn), output.(linOut)
	if in.kind != linRead && in.tracked {
		if r, ok := s.records[in.key]; ok && (r.bound == "" || (s.present && s.uid == r.bound)) {
			if out.unknown {
				return true, s
			}
			return match(s, r.out, out)
		}
	}
	exp, next := execute(s, in)
	if in.kind != linRead && in.tracked {
		next = next.clone()
		bound := ""
		if exp.hasResource() {
			bound = exp.uid
		}
		next.records[in.key] = linRecord{out: exp, bound: bound}
	}
	if out.unknown {
		return true, next
	}
	return match(next, exp, out)
}

func linEqual(a, b any) bool {
	x, y := a.(linState), b.(linState)
	if x.present != y.present || x.uid != y.uid || x.gen != y.gen || x.value != y.value || len(x.used) != len(y.used) || len(x.records) != len(y.records) {
		return false
	}
	for k := range x.used {
		if !y.used[k] {
			return false
		}
	}
	for k, r := range x.records {
		if y.records[k] != r {
			return false
		}
	}
	return true
}

func describeState(state any) string {
	s := state.(linState)
	used := make([]string, 0, len(s.used))
	for u := range s.used {
		used = append(used, u)
	}
	sort.Strings(used)
	if !s.present {
		return fmt.Sprintf("absent (used %v)", used)
	}
	return fmt.Sprintf("%s gen %d value %d (used %v)", s.uid, s.gen, s.value, used)
}

func describeOp(input, output any) string {
	in, out := input.(linIn), output.(linOut)
	req := in.kind.String()
	switch in.kind {
	case linCreate:
		req += fmt.Sprintf("(%d)", in.value)
	case linUpdate:
		req += fmt.Sprintf("(%s@%d, %d)", in.uid, in.gen, in.value)
	case linDelete:
		req += fmt.Sprintf("(@%d)", in.gen)
	}
	if in.tracked {
		req += " key " + in.key[len(in.key)-6:]
	}
	if out.unknown {
		return req + " -> ?"
	}
	if out.hasResource() {
		return fmt.Sprintf("%s -> %s %s gen %d value %d", req, out.code, out.uid, out.gen, out.value)
	}
	return req + " -> " + out.code
}

// linModel is the model, partitioned by resource name.
var linModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var names []string
		for _, op := range h {
			n := op.Input.(linIn).name
			if _, ok := by[n]; !ok {
				names = append(names, n)
			}
			by[n] = append(by[n], op)
		}
		out := make([][]porcupine.Operation, 0, len(names))
		for _, n := range names {
			out = append(out, by[n])
		}
		return out
	},
	Init:              func() any { return linState{used: map[string]bool{}, records: map[string]linRecord{}} },
	Step:              linStep,
	Equal:             linEqual,
	DescribeOperation: describeOp,
	DescribeState:     describeState,
}
