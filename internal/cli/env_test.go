package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{"listen": "TAKOFORM_LISTEN", "tls-cert": "TAKOFORM_TLS_CERT", "token-a1": "TAKOFORM_TOKEN_A1"} {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
}

type envProbe struct {
	name   string
	strict bool
	wait   time.Duration
	list   []string
	array  []string
}

// envTree is a root with one sub-command carrying one flag of each kind,
// bound the way NewRoot binds the real tree.
func envTree(p *envProbe) *cobra.Command {
	root := &cobra.Command{Use: "takoform", SilenceUsage: true, SilenceErrors: true}
	sub := &cobra.Command{Use: "probe", RunE: func(*cobra.Command, []string) error { return nil }}
	sub.Flags().StringVar(&p.name, "probe-name", "default", "a string")
	sub.Flags().BoolVar(&p.strict, "probe-strict", false, "a bool")
	sub.Flags().DurationVar(&p.wait, "probe-wait", time.Second, "a duration")
	sub.Flags().StringSliceVar(&p.list, "probe-list", nil, "a repeatable flag")
	sub.Flags().StringArrayVar(&p.array, "probe-array", nil, "a repeatable flag that never splits on its own")
	root.AddCommand(sub)
	bindEnv(root)
	return root
}

func TestEnvSetsFlagsTheCommandLineLeftAlone(t *testing.T) {
	t.Setenv("TAKOFORM_PROBE_NAME", "from-env")
	t.Setenv("TAKOFORM_PROBE_STRICT", "true")
	t.Setenv("TAKOFORM_PROBE_WAIT", "90s")
	t.Setenv("TAKOFORM_PROBE_LIST", "a,b")
	t.Setenv("TAKOFORM_PROBE_ARRAY", `x,"y,z"`)
	var p envProbe
	root := envTree(&p)
	root.SetArgs([]string{"probe", "--probe-wait", "5s"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if p.name != "from-env" || !p.strict || p.wait != 5*time.Second {
		t.Fatalf("got name %q strict %v wait %s; want from-env, true, 5s (the command line wins over TAKOFORM_PROBE_WAIT)", p.name, p.strict, p.wait)
	}
	if strings.Join(p.list, "|") != "a|b" || strings.Join(p.array, "|") != "x|y,z" {
		t.Fatalf("lists: %q and %q; want [a b] and [x y,z]", p.list, p.array)
	}
}

func TestEnvUnsetOrEmptyKeepsDefaults(t *testing.T) {
	t.Setenv("TAKOFORM_PROBE_NAME", "")
	var p envProbe
	root := envTree(&p)
	root.SetArgs([]string{"probe"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if p.name != "default" || p.strict || p.wait != time.Second || p.list != nil {
		t.Fatalf("defaults changed: %+v", p)
	}
}

func TestEnvInvalidValueNamesTheVariable(t *testing.T) {
	t.Setenv("TAKOFORM_PROBE_WAIT", "soon")
	var p envProbe
	root := envTree(&p)
	root.SetArgs([]string{"probe"})
	err := root.Execute()
	if err == nil || !isUsage(err) || !strings.Contains(err.Error(), "TAKOFORM_PROBE_WAIT") || !strings.Contains(err.Error(), "--probe-wait") {
		t.Fatalf("got %v; want a usage error naming TAKOFORM_PROBE_WAIT and --probe-wait", err)
	}
	// The repair the message offers works: a valid value is taken.
	t.Setenv("TAKOFORM_PROBE_WAIT", "2m")
	root = envTree(&p)
	root.SetArgs([]string{"probe"})
	if err := root.Execute(); err != nil || p.wait != 2*time.Minute {
		t.Fatalf("after fixing the variable: %v, wait %s", err, p.wait)
	}
}

// TestEveryFlagDocumentsItsVariable walks the real command tree: every flag
// of every command (flags other commands add later included) names its
// TAKOFORM_ variable in --help.
func TestEveryFlagDocumentsItsVariable(t *testing.T) {
	root := NewRoot(&bytes.Buffer{}, &bytes.Buffer{})
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			n++
			if !strings.Contains(f.Usage, "(env "+EnvName(f.Name)) {
				t.Errorf("%s --%s: usage %q does not name %s", c.CommandPath(), f.Name, f.Usage, EnvName(f.Name))
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if n < 10 {
		t.Fatalf("only %d flags found in the tree", n)
	}
	code, out, _ := run("host", "serve", "--help")
	if code != 0 || !strings.Contains(out, "(env TAKOFORM_LISTEN)") {
		t.Fatalf("host serve --help (exit %d) does not document TAKOFORM_LISTEN:\n%s", code, out)
	}
}

// TestEnvReachesRealCommands: a variable reaches host serve's own
// validation, exactly as the flag would.
func TestEnvReachesRealCommands(t *testing.T) {
	t.Setenv("TAKOFORM_SYNC_BUDGET", "-1s")
	code, _, errOut := run("host", "serve", "--dev-token", "tok")
	if code != 2 || !strings.Contains(errOut, "--sync-budget must be a positive duration, got -1s") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
