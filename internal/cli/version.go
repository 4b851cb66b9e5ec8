package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/internal/version"
)

// newVersionCommand prints "takoform <version>" (internal/version.String).
func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print this build's version (release tag, or module version and VCS revision)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "takoform", version.String())
			return nil
		},
	}
}
