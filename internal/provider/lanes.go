package provider

import (
	"errors"

	"context"
	"fmt"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"sync"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

// laneConn is one lane of one provider configuration: its negotiated
// client, or the error negotiation failed with, and its support answers
// read at most once (spec/lane-v1beta1.md §13.4). The two lanes' Interfaces
// and Bindings share name@version but not digests, so nothing is shared
// between two laneConns.
type laneConn struct {
	lane    wire.Lane
	client  *client.Client
	err     error
	support supportCache
}

// negotiateLanes negotiates every lane of wire.Lanes independently and
// concurrently, each under the client's own discovery deadline
// (client.Options.Lane): a lane that fails makes only its own resources
// report takoform.provider/lane-unavailable (spec/lane-v1beta1.md §13.4).
func negotiateLanes(ctx context.Context, endpoint string, opts client.Options, userAgent func(wire.Lane) string) map[string]*laneConn {
	out := make(map[string]*laneConn, len(wire.Lanes))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, l := range wire.Lanes {
		wg.Add(1)
		go func(l wire.Lane) {
			defer wg.Done()
			o := opts
			o.Lane = l
			o.UserAgent = userAgent(l)
			c, err := client.New(ctx, endpoint, o)
			mu.Lock()
			out[l.Name] = &laneConn{lane: l, client: c, err: err}
			mu.Unlock()
		}(l)
	}
	wg.Wait()
	return out
}

// laneConnOf returns the configuration's connection on lane l. A Data
// built by hand (tests) with only Client set answers on Client's lane.
func (d *Data) laneConnOf(l wire.Lane) *laneConn {
	d.lanesOnce.Do(func() {
		if d.lanes != nil {
			return
		}
		d.lanes = map[string]*laneConn{}
		for _, x := range wire.Lanes {
			d.lanes[x.Name] = &laneConn{lane: x, err: fmt.Errorf("this provider configuration did not negotiate lane %s", x.Name)}
		}
		if d.Client != nil {
			d.lanes[d.Client.Lane().Name] = &laneConn{lane: d.Client.Lane(), client: d.Client}
		}
	})
	if lc, ok := d.lanes[l.Name]; ok {
		return lc
	}
	return &laneConn{lane: l, err: fmt.Errorf("lane %s is not one this provider speaks", l.Name)}
}

// edgeLane is the lane an Edge group binds to (wire.Lane.EdgeGroup), or
// false for any other group.
func edgeLane(group string) (wire.Lane, bool) {
	for _, l := range wire.Lanes {
		if l.EdgeGroup == group {
			return l, true
		}
	}
	return wire.Lane{}, false
}

// laneOf is the lane a FormRef is spoken on (spec/lane-v1beta1.md §13.4):
// an Edge group's own lane; any other group's v1beta1 when that lane
// installs the ref (its support profiles list it), else v1alpha3.
func (d *Data) laneOf(ctx context.Context, ref form.FormRef) wire.Lane {
	if l, ok := edgeLane(ref.APIVersion); ok {
		return l
	}
	if p, err := d.profilesOn(ctx, wire.V1beta1); err == nil {
		if _, ok := p[ref.String()]; ok {
			return wire.V1beta1
		}
	}
	return wire.V1alpha3
}

// laneUnavailableError says a lane this resource needs could not be
// negotiated; it renders with CodeLaneUnavailable.
type laneUnavailableError struct {
	lane wire.Lane
	ref  form.FormRef
	err  error
}

func (e *laneUnavailableError) Error() string {
	if e.ref == (form.FormRef{}) {
		return fmt.Sprintf("lane %s could not be negotiated with this provider configuration: %v", e.lane.Name, e.err)
	}
	return fmt.Sprintf("%s is spoken on lane %s, which this provider configuration could not negotiate: %v", e.ref, e.lane.Name, e.err)
}

func (e *laneUnavailableError) Unwrap() error { return e.err }

// clientFor returns the client of the lane ref is spoken on, or a
// *laneUnavailableError.
func (d *Data) clientFor(ctx context.Context, ref form.FormRef) (*client.Client, error) {
	l := d.laneOf(ctx, ref)
	lc := d.laneConnOf(l)
	if lc.client == nil {
		return nil, &laneUnavailableError{lane: l, ref: ref, err: lc.err}
	}
	return lc.client, nil
}

// profilesOn returns lane l's support profiles, fetched at most once per
// provider configuration (spec/host-api-v1alpha3.md §8.2), keyed by
// FormRef.String().
func (d *Data) profilesOn(ctx context.Context, l wire.Lane) (map[string]wire.SupportProfile, error) {
	lc := d.laneConnOf(l)
	s := &lc.support
	s.once.Do(func() {
		if lc.client == nil {
			s.err = &laneUnavailableError{lane: l, err: lc.err}
			return
		}
		resp, err := lc.client.SupportForms(ctx)
		if err != nil {
			s.err = err
			return
		}
		s.profiles = map[string]wire.SupportProfile{}
		for _, p := range resp.Profiles {
			if p.FormRef != nil {
				s.profiles[p.FormRef.String()] = p
			}
		}
	})
	return s.profiles, s.err
}

// profileOf returns the support profile of ref on its own lane, whether it
// has one, and the error when the lane's profiles could not be read.
func (d *Data) profileOf(ctx context.Context, ref form.FormRef) (wire.SupportProfile, bool, error) {
	p, err := d.profilesOn(ctx, d.laneOf(ctx, ref))
	if err != nil {
		return wire.SupportProfile{}, false, err
	}
	sp, ok := p[ref.String()]
	return sp, ok, nil
}

// negotiatedNone says no lane could be negotiated.
func negotiatedNone(lanes map[string]*laneConn) bool {
	for _, lc := range lanes {
		if lc.client != nil {
			return false
		}
	}
	return true
}

// laneDiag renders err as takoform.provider/lane-unavailable when it is
// a *laneUnavailableError, else nil.
func laneDiag(err error, id identity) diag.Diagnostics {
	var lu *laneUnavailableError
	if !errors.As(err, &lu) {
		return nil
	}
	return renderError("The host lane of this resource is unavailable", err, withCode(id, CodeLaneUnavailable))
}
