package provider

import (
	"fmt"
)

// servedNeither says which identities a host without a profile for c was
// asked for: c alone, or, for a type's create codec with a public
// equivalent, both.
func (r *Resource) servedNeither(c *Codec) error {
	for _, fam := range r.spec.families() {
		if alt := fam.public; alt != nil && (c == fam.ours || c == alt) {
			return fmt.Errorf("the host serves neither %s nor its public equivalent %s; install either family on the host (`takoform host serve --forms`)", fam.ours.Ref, alt.Ref)
		}
	}
	return fmt.Errorf("no support profile for %s", c.Ref)
}
