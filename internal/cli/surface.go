package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/surface"
)

func newSurfaceCommand() *cobra.Command {
	s := &cobra.Command{Use: "surface", Short: "Terraform schema surface floor: snapshot and check (spec/decisions/0004-surface-floor.md)"}
	var schemaFile, providerName, baseline, baselineFormat string
	var asJSON bool
	load := func(cmd *cobra.Command) (*surface.Surface, error) {
		if schemaFile != "" {
			data, err := os.ReadFile(schemaFile)
			if err != nil {
				return nil, err
			}
			return surface.FromSchemaJSON(data, providerName)
		}
		reg, err := provider.EdgeRegistry()
		if err != nil {
			return nil, err
		}
		srv, err := provider.NewServer("surface", reg)()
		if err != nil {
			return nil, err
		}
		return surface.FromProviderServer(cmd.Context(), srv)
	}
	snapshot := &cobra.Command{
		Use:   "snapshot",
		Short: "Print the current surface (this build's provider, or --schema FILE from `tofu providers schema -json`)",
		Long:  "snapshot only prints; no command rewrites a committed baseline, which a person edits deliberately.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cur, err := load(cmd)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(cur.JSON())
			return err
		},
	}
	check := &cobra.Command{
		Use:   "check --baseline FILE",
		Short: "Hold the current surface to a baseline as a floor; exit 1 with findings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if baseline == "" {
				return usage("--baseline FILE is required")
			}
			data, err := os.ReadFile(baseline)
			if err != nil {
				return err
			}
			var base *surface.Surface
			switch baselineFormat {
			case "surface":
				base, err = surface.Parse(data)
			case "reference":
				base, err = surface.FromReference(data)
			default:
				return usage("--baseline-format %q is not surface or reference", baselineFormat)
			}
			if err != nil {
				return err
			}
			cur, err := load(cmd)
			if err != nil {
				return err
			}
			findings := surface.Check(base, cur)
			out := cmd.OutOrStdout()
			if asJSON {
				b, _ := json.MarshalIndent(map[string]any{"findings": orEmpty(findings)}, "", "  ")
				fmt.Fprintln(out, string(b))
			} else {
				for _, f := range findings {
					fmt.Fprintln(out, f.String())
				}
				fmt.Fprintf(out, "surface: %d types and %d data sources checked against %s; %d findings\n", len(base.Types), len(base.DataSources), baseline, len(findings))
			}
			if len(findings) > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	for _, c := range []*cobra.Command{snapshot, check} {
		c.Flags().StringVar(&schemaFile, "schema", "", "a `FILE` of tofu providers schema -json output instead of this build's provider")
		c.Flags().StringVar(&providerName, "provider", "", "which provider of the schema document (suffix, e.g. takoform/takoform)")
	}
	check.Flags().StringVar(&baseline, "baseline", "", "the committed baseline (e.g. internal/provider/testdata/schema-baseline.json)")
	check.Flags().StringVar(&baselineFormat, "baseline-format", "surface", "`surface` (a document snapshot prints) or `reference` (a public provider's terraform-surface-*.json, e.g. the takoform-v1beta1 data set's terraform-surface-v1beta1-derived.json: spec/lane-v1beta1.md §13.5)")
	check.Flags().BoolVar(&asJSON, "json", false, "print findings as JSON")
	s.AddCommand(snapshot, check)
	return s
}

func orEmpty(f []surface.Finding) []surface.Finding {
	if f == nil {
		return []surface.Finding{}
	}
	return f
}
