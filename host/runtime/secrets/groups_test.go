package secrets_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlite"
	"github.com/takoform/takoform/wire"
)

// TestSecretsOfBothEdgeGroups: a ModuleWorker of either Edge group holds
// sensitive values, and each lists the names its own versions require; a
// worker of a group that is no Edge group is refused naming both.
func TestSecretsOfBothEdgeGroups(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "host.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	keys, err := secrets.NewKeyring(newKey(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	add := func(group, kind, uid, spec string, worker string) {
		t.Helper()
		err := st.Update(context.Background(), func(tx store.Tx) error {
			r := &store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: group, Kind: kind, Name: "api"}, UID: uid,
				FormRef:    form.FormRef{APIVersion: group, Kind: kind, DefinitionVersion: "0.1.0", SchemaDigest: "sha256:" + strings.Repeat("1", 64)},
				Generation: 1, Revision: 1, Spec: []byte(spec), SpecDigest: "sha256:" + strings.Repeat("2", 64), Status: []byte(`{}`),
				CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(1, 0)}
			if err := tx.CreateResource(r); err != nil {
				return err
			}
			if worker == "" {
				return nil
			}
			return tx.ReplacePins(uid, []store.Pin{{SourceUID: uid, Pointer: "/worker", RelationPointer: "/worker", TargetAPIVersion: group,
				TargetKind: "ModuleWorker", TargetName: "api", TargetUID: worker, TargetFormRef: r.FormRef}})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []struct{ group, need string }{{edge.GroupV1alpha1, "ALPHA_TOKEN"}, {edge.GroupV1beta1, "BETA_TOKEN"}} {
		add(g.group, "ModuleWorker", "w-"+g.need, `{}`, "")
		add(g.group, "WorkerVersion", "v-"+g.need, `{"requiredSensitiveVars":["`+g.need+`"]}`, "w-"+g.need)
	}
	s := &secrets.Service{Store: st, Keys: keys}
	ctx := context.Background()
	for _, g := range []struct{ group, need string }{{edge.GroupV1alpha1, "ALPHA_TOKEN"}, {edge.GroupV1beta1, "BETA_TOKEN"}} {
		w := store.Key{Tenant: "acme", Space: "prod", APIVersion: g.group, Name: "api"}
		info, err := s.Set(ctx, w, g.need, []byte("value"))
		if err != nil || len(info.RequiredBy) != 1 {
			t.Fatalf("set %s on the %s worker: %+v %v", g.need, g.group, info, err)
		}
		list, err := s.List(ctx, w)
		if err != nil || len(list.Secrets) != 1 || list.Secrets[0].Name != g.need || list.Worker.Group != g.group {
			t.Errorf("list of the %s worker: %+v %v", g.group, list, err)
		}
	}
	_, err = s.List(ctx, store.Key{Tenant: "acme", Space: "prod", APIVersion: "example.com/v1", Name: "api"})
	if code(err) != wire.InvalidArgument || !strings.Contains(err.Error(), edge.GroupV1beta1) {
		t.Errorf("a worker of another group: %v", err)
	}
}
