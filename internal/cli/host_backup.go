package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/host/store/sqlite"
)

// newHostBackupCommand is `takoform host backup --data FILE OUT`: a
// consistent copy of a host's SQLite file, safe while the host serves it
// (sqlite.Backup: VACUUM INTO one read snapshot).
func newHostBackupCommand() *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:   "backup OUT",
		Short: "Write a consistent copy of the host's SQLite data file to OUT, safely while it serves",
		Long: "backup copies one consistent snapshot of the data file (SQLite VACUUM INTO) to OUT, which\n" +
			"must not exist. Copying the file with cp is not a backup: recent commits live in the\n" +
			"write-ahead log beside it (FILE-wal) until a checkpoint. Restore by serving the copy:\n" +
			"  takoform host serve --data OUT",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sqlite.Backup(cmd.Context(), data, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "takoform host backup of %s written to %s\n", data, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", sqlite.DefaultPath(), "SQLite data file of the host")
	return cmd
}
