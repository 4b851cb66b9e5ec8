package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/spaceid"
)

func newSpaceCommand() *cobra.Command {
	space := &cobra.Command{Use: "space", Short: "SpaceID tools (spec/decisions/0002-space-id.md)"}
	space.AddCommand(&cobra.Command{
		Use:   "check VALUE...",
		Short: "Check each VALUE against the SpaceID rule; exit 1 naming the rule if any is invalid",
		Long: "check validates each argument exactly as given (never trimmed, normalised or case-folded)\n" +
			"against the one SpaceID rule: 1..255 code points of valid UTF-8, no control characters or '/',\n" +
			"and no Unicode White_Space or U+FEFF as the first or last code point.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, v := range args {
				if err := spaceid.Validate(v); err != nil {
					bad++
					e := err.(*spaceid.Error)
					fmt.Fprintf(cmd.ErrOrStderr(), "invalid %s [%s]\n", err, e.Rule)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "valid %q\n", v)
			}
			if bad > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	})
	return space
}
