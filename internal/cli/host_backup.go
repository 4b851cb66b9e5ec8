package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/host/store/sqlite"
	"github.com/takoform/takoform/host/store/storeurl"
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
			path, err := backupPath(data)
			if err != nil {
				return err
			}
			if err := sqlite.Backup(cmd.Context(), path, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "takoform host backup of %s written to %s\n", path, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "SQLite data file of the host (a path or sqlite:///PATH; default "+sqlite.DefaultPath()+")")
	return cmd
}

// backupPath resolves --data as serve does (dataLocation, storeurl) to the
// SQLite file to copy. A PostgreSQL location is a usage error naming it
// redacted: its backup is pg_dump -Fc (handbook/backups.md;
// spec/decisions/0011-postgres-concurrency.md).
func backupPath(flag string) (string, error) {
	data, err := dataLocation(flag)
	if err != nil {
		return "", err
	}
	kind, path, err := storeurl.Parse(data)
	if err != nil {
		return "", usage("--data: %v", err)
	}
	if kind != storeurl.SQLite {
		return "", usage("--data: %s is a PostgreSQL database; host backup copies a SQLite file only: back it up with pg_dump -Fc", storeurl.Redact(data))
	}
	return path, nil
}
