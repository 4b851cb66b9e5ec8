package runtime

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/takoform/takoform/forms/edge"
)

// Domains is the operator's allow-list of custom hostnames by tenant: the
// proof of ownership spec/runtime-v1.md §10.6 asks before the front routes
// a WorkerCustomDomain outside .localhost. The zero value grants nothing.
type Domains struct {
	exact    map[string]map[string]bool // hostname → tenants
	suffixes map[string]map[string]bool // ".example.com" → tenants (from "*.example.com")
}

// ParseDomains reads an allow-list: one grant a line, "TENANT HOSTNAME",
// where HOSTNAME is an exact name or "*.SUFFIX" (every name under SUFFIX,
// not SUFFIX itself); blank lines and lines starting with # are skipped.
// Hostnames take the canonical form of spec/runtime-v1.md §9.1. Errors
// name the line and what is wrong with it.
func ParseDomains(r io.Reader) (*Domains, error) {
	d := &Domains{exact: map[string]map[string]bool{}, suffixes: map[string]map[string]bool{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d: want \"TENANT HOSTNAME\" (or \"TENANT *.SUFFIX\"), got %q", n, line)
		}
		tenant, name := fields[0], fields[1]
		into, wild := d.exact, strings.HasPrefix(name, "*.")
		if wild {
			into, name = d.suffixes, name[2:]
		}
		h, err := edge.CanonicalHostname(name)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q: %v", n, fields[1], err)
		}
		if wild {
			h = "." + h
		}
		if into[h] == nil {
			into[h] = map[string]bool{}
		}
		into[h][tenant] = true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return d, nil
}

// Owns reports whether tenant may route the canonical hostname h: every
// .localhost name (no proof needed, spec/runtime-v1.md §10.6), a name the
// list grants tenant exactly, or a name under a suffix granted to tenant.
func (d *Domains) Owns(tenant, h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if d == nil {
		return false
	}
	if d.exact[h][tenant] {
		return true
	}
	for i := strings.IndexByte(h, '.'); i >= 0; {
		if d.suffixes[h[i:]][tenant] {
			return true
		}
		j := strings.IndexByte(h[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}
