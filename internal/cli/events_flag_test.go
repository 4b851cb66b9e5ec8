package cli

import (
	"strings"
	"testing"
)

// --events: on with a SQLite data file and off on PostgreSQL by default
// (replicas each running a dispatcher would break maxConcurrency and
// release each other's claims until dispatch runs under a lease: repo
// decision 0061); "on" and "off" win either way; anything else is a usage
// error naming the flag.
func TestEventsFlag(t *testing.T) {
	const sqlite, pg = "/var/lib/takoform/host.db", "postgres://takoform@db.internal/takoform"
	for _, tc := range []struct {
		flag, data string
		want       bool
	}{
		{"", sqlite, true}, {"", pg, false}, {"on", pg, true}, {"off", sqlite, false}, {"on", sqlite, true}, {"off", pg, false},
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
