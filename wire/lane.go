package wire

import "strings"

// Lane is one Host API lane a host serves and a client speaks: its name
// (the discovery document's one api_versions entry), the discovery path
// and the API base every route of the endpoint table hangs under
// (spec/host-api-v1alpha3.md §2.1, §2.2; spec/lane-v1beta1.md §2.1, §2.2).
// The wire is identical on every lane (spec/lane-v1beta1.md §0.1); only
// these three strings differ.
type Lane struct {
	Name          string // "forms.takoform.com/v1alpha3"
	DiscoveryPath string // "/.well-known/takoform/v1alpha3"
	APIBase       string // "/apis/forms.takoform.com/v1alpha3"
	// EdgeGroup is the Edge family group our hosts answer on this lane and
	// no other (spec/lane-v1beta1.md §2.5 rule 1): a family of this group
	// is installed on this lane only.
	EdgeGroup string // "edge.forms.takoform.com/v1alpha1"
}

// laneOf builds the lane of one version word of the forms.takoform.com
// group, binding the Edge group of edgeVersion to it.
func laneOf(version, edgeVersion string) Lane {
	return Lane{
		Name:          "forms.takoform.com/" + version,
		DiscoveryPath: "/.well-known/takoform/" + version,
		APIBase:       "/apis/forms.takoform.com/" + version,
		EdgeGroup:     "edge.forms.takoform.com/" + edgeVersion,
	}
}

// The two lanes our hosts serve at once (spec/lane-v1beta1.md §0, §2.5).
var (
	V1alpha3 = laneOf("v1alpha3", "v1alpha1")
	V1beta1  = laneOf("v1beta1", "v1beta1")
)

// DefaultLane is the lane a client speaks when it is not told one.
var DefaultLane = V1alpha3

// Lanes lists every lane a host serves, oldest first.
var Lanes = []Lane{V1alpha3, V1beta1}

// Version is the lane's version word ("v1alpha3"), as the conformance
// suite and the command line name it.
func (l Lane) Version() string { return l.Name[strings.LastIndexByte(l.Name, '/')+1:] }

// String is the lane's name.
func (l Lane) String() string { return l.Name }

// LaneNamed finds a lane by its name ("forms.takoform.com/v1beta1") or
// its version word ("v1beta1").
func LaneNamed(s string) (Lane, bool) {
	for _, l := range Lanes {
		if s == l.Name || s == l.Version() {
			return l, true
		}
	}
	return Lane{}, false
}

// LaneNames lists the lanes' version words, for messages.
func LaneNames() []string {
	out := make([]string, len(Lanes))
	for i, l := range Lanes {
		out[i] = l.Version()
	}
	return out
}
