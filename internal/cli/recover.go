package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/spf13/cobra"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/provider"
)

// newRecoverCommand is `takoform recover`: after OpenTofu was killed
// mid-apply, print the import blocks that adopt, in one reviewed step,
// the planned creates the host already holds
// (spec/decisions/0007-orphan-recovery.md).
func newRecoverCommand() *cobra.Command {
	var planPath, endpoint, token, out string
	var ca caFlags
	c := &cobra.Command{
		Use:   "recover --plan PLAN.json",
		Short: "Print import blocks for the planned creates the host already holds (after a killed tofu apply)",
		Long: "recover reads the JSON of a saved plan (tofu plan -out=PLAN; tofu show -json PLAN > PLAN.json),\n" +
			"asks the host about every planned create of a takoform_ resource, and prints an OpenTofu import\n" +
			"block for each the host already holds: what a killed apply created without recording it.\n" +
			"It changes nothing. Review the blocks (an object another configuration owns is listed too: the\n" +
			"host records no owner), save them beside the configuration and run tofu apply.\n" +
			"The host is --endpoint/--token, else TAKOFORM_ENDPOINT/TAKOFORM_TOKEN.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if planPath == "" {
				return usage("recover needs --plan PLAN.json (the output of tofu show -json PLAN, or - for stdin)")
			}
			plan, err := readPlan(planPath, cmd.InOrStdin())
			if err != nil {
				return err
			}
			if endpoint == "" {
				endpoint = os.Getenv("TAKOFORM_ENDPOINT")
			}
			if token == "" {
				token = os.Getenv("TAKOFORM_TOKEN")
			}
			if endpoint == "" {
				return usage("recover needs the host: --endpoint or TAKOFORM_ENDPOINT")
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			hc, err := client.New(ctx, endpoint, ca.options(client.Options{Token: token, UserAgent: "takoform-recover"}))
			if err != nil {
				return err
			}
			reg, err := provider.EdgeRegistry()
			if err != nil {
				return err
			}
			orphans, notes, err := provider.FindOrphans(ctx, hc, reg, plan)
			if err != nil {
				return err
			}
			for _, n := range notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "takoform recover:", n)
			}
			blocks := provider.ImportBlocks(orphans)
			if out != "" && len(orphans) > 0 {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					return fmt.Errorf("--out %s: %w (recover never overwrites a file; name a new one)", out, err)
				}
				if _, err := io.WriteString(f, blocks); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			} else {
				fmt.Fprint(cmd.OutOrStdout(), blocks)
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "takoform recover:", recoverSummary(len(orphans), out))
			return nil
		},
	}
	c.Flags().StringVar(&planPath, "plan", "", "JSON of a saved plan (tofu show -json PLAN), or - for stdin")
	c.Flags().StringVar(&endpoint, "endpoint", "", "host origin (default TAKOFORM_ENDPOINT)")
	c.Flags().StringVar(&token, "token", "", "bearer token (default TAKOFORM_TOKEN)")
	c.Flags().StringVar(&out, "out", "", "write the import blocks to this new file instead of stdout")
	ca.add(c)
	return c
}

// recoverSummary is recover's closing line for n import blocks: none
// found, written to the --out file out, or printed to stdout
// (spec/decisions/0007-orphan-recovery.md).
func recoverSummary(n int, out string) string {
	switch {
	case n == 0:
		return "no planned create is already on the host: nothing to import; run tofu apply"
	case out != "":
		return fmt.Sprintf("%d planned create(s) already on the host; the import blocks are written to %s: review it, then run tofu apply", n, out)
	}
	return fmt.Sprintf("%d planned create(s) already on the host; review the import blocks, save them beside the configuration, then run tofu apply", n)
}

// readPlan decodes the JSON plan at path ("-": r).
func readPlan(path string, r io.Reader) (*tfjson.Plan, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(r)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	var p tfjson.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s is not the JSON of a plan (tofu show -json PLAN): %w", path, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.ResourceChanges == nil && p.PlannedValues == nil {
		return nil, errors.New(path + " holds no planned changes: give the JSON of a saved plan (tofu show -json PLAN), not of state")
	}
	return &p, nil
}
