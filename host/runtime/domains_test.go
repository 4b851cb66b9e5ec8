package runtime

import (
	"strings"
	"testing"
)

func TestDomainsOwns(t *testing.T) {
	d, err := ParseDomains(strings.NewReader("# operator grants\n\nacme app.Example.COM.\nacme *.acme.test\nglobex *.example.com\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tenant, host string
		want         bool
	}{
		{"acme", "app.example.com", true},
		{"acme", "www.example.com", false},
		{"globex", "www.example.com", true},
		{"globex", "a.b.example.com", true},
		{"globex", "example.com", false}, // *.SUFFIX is not SUFFIX itself
		{"acme", "x.acme.test", true},
		{"acme", "acme.test", false},
		{"globex", "x.acme.test", false},
		{"anyone", "ep-1.workers.takoform.localhost", true}, // .localhost needs no proof
		{"anyone", "localhost", true},
		{"anyone", "notlocalhost", false},
	} {
		if got := d.Owns(c.tenant, c.host); got != c.want {
			t.Errorf("Owns(%q, %q) = %v, want %v", c.tenant, c.host, got, c.want)
		}
	}
	var none *Domains
	if none.Owns("acme", "app.example.com") || !none.Owns("acme", "a.localhost") {
		t.Error("a nil list must grant .localhost names only")
	}
}

func TestParseDomainsRefusals(t *testing.T) {
	for in, want := range map[string]string{
		"acme\n":                    "line 1: want \"TENANT HOSTNAME\"",
		"# c\nacme a.com extra\n":   "line 2: want",
		"acme exa mple..com\n":      "line 1: want",
		"acme bad..example.com\n":   "line 1: \"bad..example.com\"",
		"acme *.bad_name.example\n": "line 1:",
	} {
		_, err := ParseDomains(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDomains(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}
