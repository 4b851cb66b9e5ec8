package provider

import (
	"context"
	"fmt"
)

// createCodec is the codec a new resource of the type is created (or, with
// no FormRef in its import ID, imported) under: the type's own default
// create ref when the host serves it, else its public equivalent when the
// host serves that, from the support profiles read once per configuration
// (decision spec/decisions/0016-equivalent-identities.md). When neither is
// served, or the profiles cannot be read, it is the type's own; the
// plan-time support check then refuses naming both (servedNeither).
func (r *Resource) createCodec(ctx context.Context) *Codec {
	c, alt := r.spec.Create, r.spec.CreateEquivalent
	if alt == nil || r.data == nil {
		return c
	}
	profiles, err := r.data.profiles(ctx)
	if err != nil {
		return c
	}
	if _, ok := profiles[c.Ref.String()]; ok {
		return c
	}
	if _, ok := profiles[alt.Ref.String()]; ok {
		return alt
	}
	return c
}

// servedNeither says which identities a host without a profile for c was
// asked for: c alone, or, for a type's create codec with a public
// equivalent, both.
func (r *Resource) servedNeither(c *Codec) error {
	if alt := r.spec.CreateEquivalent; alt != nil && (c == r.spec.Create || c == alt) {
		return fmt.Errorf("the host serves neither %s nor its public equivalent %s; install either family on the host (`takoform host serve --forms`)", r.spec.Create.Ref, alt.Ref)
	}
	return fmt.Errorf("no support profile for %s", c.Ref)
}
