package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/wire"
)

func newConformanceCommand() *cobra.Command {
	c := &cobra.Command{Use: "conformance", Short: "Black-box conformance checks: the Host API v1alpha3 (run) and the runtime (runtime)"}
	var endpoint, groups, only, lane string
	var creds conformance.Credentials
	var probe bool
	var ca caFlags
	run := &cobra.Command{
		Use:   "run",
		Short: "Run the checks against a host and print pass/fail per check ID",
		Long: "run drives the host at --endpoint with three credentials: two principals of one tenant\n" +
			"(--token-a1, --token-a2) and one principal of another tenant (--token-b); the tokens may\n" +
			"also come from TAKOFORM_TOKEN_A1, TAKOFORM_TOKEN_A2 and TAKOFORM_TOKEN_B. It exits 1 if any\n" +
			"check fails. The host must serve an Edge family on the lane checked (--lane v1alpha3, the default:\n" +
			"edge.forms.takoform.com/v1alpha1, ours or the public specification's; --lane v1beta1:\n" +
			"edge.forms.takoform.com/v1beta1). Each run uses a space of its own, so runs on both lanes of one\n" +
			"host, one after the other or at once, never collide.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, t := range []struct {
				v    *string
				flag string
			}{{&creds.A1, "token-a1"}, {&creds.A2, "token-a2"}, {&creds.B, "token-b"}} {
				if *t.v == "" { // bindEnv already applied TAKOFORM_TOKEN_A1 …
					return usage("missing credential: set --token-a1, --token-a2 and --token-b (or %s)", EnvName(t.flag))
				}
			}
			if creds.A1 == creds.A2 || creds.A1 == creds.B || creds.A2 == creds.B {
				return usage("the three credentials must be three different tokens: two principals of one tenant (--token-a1, --token-a2) and one of another tenant (--token-b)")
			}
			if endpoint == "" {
				return usage("--endpoint is required (e.g. http://127.0.0.1:8080)")
			}
			l, ok := wire.LaneNamed(lane)
			if !ok {
				return usage("unknown lane %q; lanes are %s", lane, strings.Join(wire.LaneNames(), ", "))
			}
			checks := conformance.ChecksFor(l)
			groupsKnown, idsKnown := map[string]bool{}, map[string]bool{}
			for _, c := range checks {
				groupsKnown[c.Group], idsKnown[c.ID] = true, true
			}
			for _, g := range splitList(groups) {
				if !groupsKnown[g] {
					return usage("unknown group %q; groups are %s", g, strings.Join(slices.Sorted(maps.Keys(groupsKnown)), ", "))
				}
			}
			for _, id := range splitList(only) {
				if !idsKnown[id] {
					return usage("unknown check ID %q on lane %s (see spec/host-api-v1alpha3.md Appendix A, and spec/lane-v1beta1.md Appendix A for lane v1beta1)", id, l.Name)
				}
			}
			env, err := conformance.NewEnvOptions(cmd.Context(), endpoint, creds, probe, ca.options(client.Options{Lane: l}))
			if err != nil {
				return err
			}
			want := func(c conformance.Check) bool {
				return (groups == "" || contains(strings.Split(groups, ","), c.Group)) && (only == "" || contains(strings.Split(only, ","), c.ID))
			}
			out := cmd.OutOrStdout()
			pass, fail, skip := 0, 0, 0
			for _, c := range checks {
				if !want(c) {
					continue
				}
				r := conformance.RunCheck(cmd.Context(), env, c)
				switch {
				case r.Skipped:
					skip++
					fmt.Fprintf(out, "SKIP %-55s %v\n", c.ID, r.Err)
				case r.Err != nil:
					fail++
					fmt.Fprintf(out, "FAIL %-55s %v\n", c.ID, r.Err)
				default:
					pass++
					fmt.Fprintf(out, "PASS %-55s %s\n", c.ID, r.Duration.Round(1e6))
				}
			}
			fmt.Fprintf(out, "conformance: %d passed, %d failed, %d skipped\n", pass, fail, skip)
			if fail > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	f := run.Flags()
	f.StringVar(&endpoint, "endpoint", "", "host origin, e.g. http://127.0.0.1:8080")
	f.StringVar(&creds.A1, "token-a1", "", "token of tenant A, principal 1")
	f.StringVar(&creds.A2, "token-a2", "", "token of tenant A, principal 2")
	f.StringVar(&creds.B, "token-b", "", "token of tenant B")
	f.BoolVar(&probe, "probe", false, "the host honours Takoform-Conformance-Probe (test hosts only)")
	f.StringVar(&groups, "group", "", "only these groups (comma-separated): artifacts, discovery, edge, import, lifecycle, operations, relations, tenancy")
	f.StringVar(&only, "only", "", "only these check IDs (comma-separated)")
	f.StringVar(&lane, "lane", wire.DefaultLane.Version(), "the lane to check: "+strings.Join(wire.LaneNames(), " or ")+" (spec/lane-v1beta1.md §2.5)")
	ca.add(run)
	c.AddCommand(run, newConformanceRuntimeCommand())
	return c
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
