package cli

import (
	"strings"
	"testing"
)

// --events: on by default with either store (replicas take turns under
// the events lease: repo decision 0062); "on" and "off" win either way;
// anything else is a usage error naming the flag.
func TestEventsFlag(t *testing.T) {
	const sqlite, pg = "/var/lib/takoform/host.db", "postgres://takoform@db.internal/takoform"
	for _, tc := range []struct {
		flag, data string
		want       bool
	}{
		{"", sqlite, true}, {"", pg, true}, {"on", pg, true}, {"off", sqlite, false}, {"on", sqlite, true}, {"off", pg, false},
	} {
		f := &runtimeFlags{events: tc.flag}
		got, err := f.eventsOn(tc.data)
		if err != nil || got != tc.want {
			t.Errorf("--events %q with %s: %v %v; want %v", tc.flag, tc.data, got, err, tc.want)
		}
	}
	f := &runtimeFlags{events: "yes"}
	if _, err := f.eventsOn(sqlite); err == nil || !strings.Contains(err.Error(), `--events is "on" or "off", not "yes"`) {
		t.Errorf("--events yes: %v; want a usage error naming the flag", err)
	}
}
