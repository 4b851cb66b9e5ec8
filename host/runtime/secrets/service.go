package secrets

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// The Edge kinds a secret is addressed through (spec/host-api-v1alpha3.md §6).
const (
	kindWorker  = "ModuleWorker"
	kindVersion = "WorkerVersion"
)

// MaxPerWorker is how many names a worker may hold values for.
const MaxPerWorker = 128

// Service serves the host's secret route (spec/runtime-v1.md §3.2): it
// finds the addressed ModuleWorker in the caller's tenant, checks the
// name and the value, seals the value with Keys and stores it under the
// worker's UID, then calls Notify so the data plane starts the shard's
// next generation. Refusals are *wire.Error values naming what was wrong
// and never carrying the value.
type Service struct {
	Store store.Store
	// Keys seals and opens values; nil refuses every call (this host
	// keeps no sensitive values: it has no secrets key).
	Keys *Keyring
	// NoKeys says why Keys is nil, for the refusal.
	NoKeys string
	// Notify, when set, is called with the worker's key after a
	// committed change (runtime.Runtime.Notify).
	Notify func(store.Key)
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// List answers a worker's sensitive variables: every name with a value
// and every name one of its versions requires, by name.
func (s *Service) List(ctx context.Context, w store.Key) (*wire.SecretList, error) {
	if err := s.ready(w); err != nil {
		return nil, err
	}
	var out *wire.SecretList
	err := s.Store.View(ctx, func(tx store.Tx) error {
		res, err := worker(tx, w)
		if err != nil {
			return err
		}
		rows, err := tx.SecretsOf(res.UID)
		if err != nil {
			return err
		}
		required, err := requiredBy(tx, res.UID)
		if err != nil {
			return err
		}
		byName := map[string]*wire.SecretInfo{}
		for _, r := range rows {
			byName[r.Name] = &wire.SecretInfo{Name: r.Name, Set: true, UpdatedAt: stamp(r.UpdatedAt)}
		}
		for name, versions := range required {
			if byName[name] == nil {
				byName[name] = &wire.SecretInfo{Name: name}
			}
			byName[name].RequiredBy = versions
		}
		out = &wire.SecretList{Worker: workerOf(res), Secrets: []wire.SecretInfo{}}
		for _, name := range sortedNames(byName) {
			out.Secrets = append(out.Secrets, *byName[name])
		}
		return nil
	})
	return out, err
}

// Set seals value under the worker's UID and name, replacing any value.
func (s *Service) Set(ctx context.Context, w store.Key, name string, value []byte) (*wire.SecretInfo, error) {
	if err := s.ready(w); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := CheckValue(value); err != nil {
		return nil, wire.Errorf(wire.InvalidArgument, "%v", err).WithHostCode("secret_value")
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	info := &wire.SecretInfo{Name: name, Set: true, UpdatedAt: stamp(now)}
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		res, err := worker(tx, w)
		if err != nil {
			return err
		}
		rows, err := tx.SecretsOf(res.UID)
		if err != nil {
			return err
		}
		if len(rows) >= MaxPerWorker && !slices.ContainsFunc(rows, func(r *store.Secret) bool { return r.Name == name }) {
			return wire.Errorf(wire.PolicyDenied, "worker %q already holds values for %d names, this host's limit; unset one it no longer needs", w.Name, MaxPerWorker).WithHostCode("secret_limit")
		}
		row := &store.Secret{Tenant: res.Tenant, Space: res.Space, Worker: res.UID, Name: name, UpdatedAt: now}
		if err := s.Keys.Seal(row, value); err != nil {
			return err
		}
		if err := tx.SecretPut(row); err != nil {
			return err
		}
		required, err := requiredBy(tx, res.UID)
		info.RequiredBy = required[name]
		return err
	})
	if err != nil {
		return nil, err
	}
	s.notify(w)
	return info, nil
}

// Unset deletes the worker's value for name; unsetting a name with no
// value changes nothing and answers Set false.
func (s *Service) Unset(ctx context.Context, w store.Key, name string) (*wire.SecretInfo, error) {
	if err := s.ready(w); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	info := &wire.SecretInfo{Name: name}
	had := false
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		res, err := worker(tx, w)
		if err != nil {
			return err
		}
		if had, err = tx.SecretDelete(res.UID, name); err != nil {
			return err
		}
		required, err := requiredBy(tx, res.UID)
		info.RequiredBy = required[name]
		return err
	})
	if err != nil {
		return nil, err
	}
	if had {
		s.notify(w)
	}
	return info, nil
}

// CheckValue refuses a value no sensitive variable may hold: empty,
// longer than wire.MaxSecretBytes, not UTF-8 (a value is a JS string) or
// holding a NUL byte (which a process environment cannot carry). The
// error never quotes the value.
func CheckValue(v []byte) error {
	switch {
	case len(v) == 0:
		return errors.New("the value is empty; send the value itself (an empty value is not a value: unset the name instead)")
	case len(v) > wire.MaxSecretBytes:
		return errors.New("the value is " + itoa(len(v)) + " bytes, over this host's limit of " + itoa(wire.MaxSecretBytes) + "; keep large material elsewhere (a bucket) and store a key to it")
	case !utf8.Valid(v):
		return errors.New("the value is not UTF-8 text (a sensitive value reaches the worker as a JS string); encode binary material, e.g. as base64")
	case slices.Contains(v, 0):
		return errors.New("the value holds a NUL byte, which a process environment cannot carry; encode it, e.g. as base64")
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

func (s *Service) ready(w store.Key) error {
	if s.Keys == nil {
		why := s.NoKeys
		if why == "" {
			why = "it was started without a secrets key (--secrets-key)"
		}
		return wire.Errorf(wire.UnsupportedCapability, "this host keeps no sensitive values: %s; ask its operator to configure one", why).WithHostCode("no_secrets_key")
	}
	if !edge.IsGroup(w.APIVersion) {
		return wire.Errorf(wire.InvalidArgument, "workers of group %q do not run on this host's data plane; give --group %s or %s", w.APIVersion, edge.GroupV1alpha1, edge.GroupV1beta1).WithHostCode("secret_group")
	}
	return nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) notify(w store.Key) {
	if s.Notify != nil {
		s.Notify(w)
	}
}

func checkName(name string) error {
	if err := edge.CheckSensitiveVarName(name); err != nil {
		var re *edge.RuleError
		if errors.As(err, &re) {
			return wire.Errorf(wire.InvalidArgument, "%s", re.Message).WithHostCode("secret_name")
		}
		return err
	}
	return nil
}

// worker reads the addressed ModuleWorker; ResourceNotFound names it.
func worker(tx store.Tx, w store.Key) (*store.Resource, error) {
	w.Kind = kindWorker
	res, err := tx.Resource(w)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.Errorf(wire.ResourceNotFound, "no ModuleWorker %q in space %q (group %s) of this tenant; check --space, --worker and --group", w.Name, w.Space, w.APIVersion).WithHostCode("secret_worker")
	}
	return res, err
}

func workerOf(r *store.Resource) wire.SecretWorker {
	return wire.SecretWorker{Space: r.Space, Group: r.APIVersion, Name: r.Name, UID: r.UID}
}

// requiredBy maps each name the worker's versions declare in
// requiredSensitiveVars to those versions' names, sorted.
func requiredBy(tx store.Tx, workerUID string) (map[string][]string, error) {
	pins, err := tx.PinsTo(workerUID)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range pins {
		if p.Pointer != "/worker" {
			continue
		}
		v, err := tx.ResourceByUID(p.SourceUID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !edge.IsGroup(v.APIVersion) || v.Kind != kindVersion {
			continue
		}
		spec, err := ijson.DecodeObject(v.Spec)
		if err != nil {
			return nil, err
		}
		for _, n := range ijson.As[[]any](spec["requiredSensitiveVars"]) {
			name := ijson.As[string](n)
			if !slices.Contains(out[name], v.Name) {
				out[name] = append(out[name], v.Name)
			}
		}
	}
	for _, vs := range out {
		slices.Sort(vs)
	}
	return out, nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
