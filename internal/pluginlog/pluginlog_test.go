package pluginlog

import (
	"slices"
	"testing"
)

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		quiet   bool
	}{
		{[]string{"HOME=/root", "PATH=/bin"}, true},
		{[]string{"TF_LOG="}, true}, // set but empty: the CLI keeps nothing
		{[]string{"TF_LOG=trace"}, false},
		{[]string{"TF_LOG_PROVIDER=debug"}, false},
		{[]string{"TF_LOG_PATH=/tmp/tf.log"}, false},
		{[]string{"TF_LOG_SDK_FRAMEWORK=trace"}, false},
	} {
		got := Defaults(tc.environ)
		if tc.quiet != slices.Equal(got, quieted) || (!tc.quiet && got != nil) {
			t.Errorf("Defaults(%q) = %q, quiet want %v", tc.environ, got, tc.quiet)
		}
	}
}
