package form

import (
	"regexp"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/grammartest"
)

// grammars pairs each hand-written matcher with the regular expression of
// spec/host-api-v1alpha3.md §1.2, §1.3 (and SemVer 2.0.0's) it replaces.
var grammars = []grammartest.Grammar{
	{Name: "apiVersion", Re: regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+/v[0-9]+(?:(?:alpha|beta)[0-9]+)?$`), Match: matchAPIVersion},
	{Name: "kind", Re: regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,63}$`), Match: matchKind},
	{Name: "name", Re: regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`), Match: matchResourceName},
	{Name: "semver", Re: regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-((0|[1-9][0-9]*|[0-9A-Za-z-]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9A-Za-z-]*[A-Za-z-][0-9A-Za-z-]*))*))?(\+([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?$`), Match: matchSemver},
	{Name: "strictVersion", Re: regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`), Match: matchStrictVersion},
}

// grammarCorpus is values on and just off every edge of the grammars.
var grammarCorpus = []string{
	"", "a", "A", "-", ".", "/", "a/", "/v1", "a.b/v1", "a.b/v1alpha1", "a.b/v1beta2", "a.b/v1gamma1", "a.b/v1alpha",
	"a.b/valpha1", "a.b/1", "a/v1", "a..b/v1", ".a.b/v1", "a.b./v1", "-a.b/v1", "a-.b/v1", "a-b.c-d/v10", "a.b/v1/x",
	"A.b/v1", "a.b/V1", "edge.forms.takoform.com/v1alpha1", "forms.takoform.com/v1alpha2", "a.b/v01", "0.0/v0",
	strings.Repeat("a", 63) + ".b/v1", strings.Repeat("a", 64) + ".b/v1", "a.b/v1\n", "a.b/v1 ", "é.b/v1",
	"Kind", "kind", "K", "K1", "K-1", "K_", strings.Repeat("K", 64), strings.Repeat("K", 65), "WorkerVersion", "K\xff",
	"my-name", "my-name-", "9name", "n" + strings.Repeat("a", 62), "n" + strings.Repeat("a", 63), "a.b", "a_b",
	"0.0.0", "1.2.3", "01.2.3", "1.02.3", "1.2.03", "1.2", "1.2.3.4", "1.2.3-", "1.2.3-a", "1.2.3-0", "1.2.3-00",
	"1.2.3-01", "1.2.3-0a", "1.2.3-a.b.c", "1.2.3-a..b", "1.2.3-a.", "1.2.3--", "1.2.3-x-y", "1.2.3+", "1.2.3+b",
	"1.2.3+01", "1.2.3+b.c", "1.2.3+b..c", "1.2.3-a+b", "1.2.3-a+b+c", "1.2.3+b-c", "1.2.3-a+", "1.2.3-+b", "10.20.30",
	"1.2.3-α", "1.2.3 ", " 1.2.3", "1.2.3-rc.1+build.5",
}

// TestGrammarAgreement: each matcher accepts exactly what its regexp
// accepts, on a table near every edge.
func TestGrammarAgreement(t *testing.T) { grammartest.Table(t, grammars, grammarCorpus) }

// FuzzGrammarAgreement: each matcher agrees with its regexp on any value.
func FuzzGrammarAgreement(f *testing.F) { grammartest.Fuzz(f, grammars, grammarCorpus) }
