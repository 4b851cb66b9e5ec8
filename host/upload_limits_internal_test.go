package host

import (
	"net/http/httptest"
	"testing"

	"github.com/takoform/takoform/wire"
)

// An upload started or committed under lane v1beta1's base is held to the
// MigrationBundle application/sql rule; one under lane v1alpha3's base is
// held to exactly the rules it had (spec/lane-v1beta1.md §3.6, §0.1).
func TestUploadLimitsFollowTheLane(t *testing.T) {
	for path, strict := range map[string]bool{
		wire.APIBase + "/artifacts/uploads":                              false,
		wire.APIBase + "/artifacts/uploads/up_1/commit":                  false,
		"/apis/forms.takoform.com/v1beta1/artifacts/uploads":             true,
		"/apis/forms.takoform.com/v1beta1/artifacts/uploads/up_1/commit": true,
	} {
		r := &request{Request: httptest.NewRequest("POST", path, nil)}
		lim := uploadLimits(r)
		if lim.SQLMigrationFiles != strict {
			t.Errorf("%s: application/sql rule %v, want %v", path, lim.SQLMigrationFiles, strict)
		}
		if lim.MaximumBundleBytes != ArtifactLimits.MaximumBundleBytes || lim.MaxEntries != ArtifactLimits.MaxEntries {
			t.Errorf("%s: limits %+v moved from the host's %+v", path, lim, ArtifactLimits)
		}
	}
}
