package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/storecopy"
	"github.com/takoform/takoform/host/store/storeurl"
)

// newHostCopyCommand is `takoform host copy --from FILE --to postgres://…`
// (spec/decisions/0012-copy-sqlite-to-postgres.md).
func newHostCopyCommand() *cobra.Command {
	var from, to, workerData string
	cmd := &cobra.Command{
		Use:   "copy --from FILE --to postgres://USER:PASSWORD@HOST:PORT/DATABASE",
		Short: "Copy a host's SQLite file into an empty PostgreSQL database",
		Long: "copy moves a host from its SQLite file to PostgreSQL: every table, in one transaction on\n" +
			"the target (a failure leaves it empty), sequences past the source's values, the SQLite\n" +
			"databases of its worker data directory, and row counts\n" +
			"and content digests compared before it commits. Stop the host first; the target must be a\n" +
			"new, empty database. Then start `takoform host serve --data postgres://…` on it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return usage("give both --from (the SQLite file) and --to (a postgres:// URL)")
			}
			path, err := copyLocation("--from", from, storeurl.SQLite, "a SQLite file path (or sqlite:///PATH)")
			if err != nil {
				return err
			}
			if _, err := copyLocation("--to", to, storeurl.Postgres, "a postgres://USER:PASSWORD@HOST:PORT/DATABASE URL"); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if workerData == "" {
				workerData = path + ".workers"
			}
			tables, err := storecopy.CopyWithWorkerData(ctx, path, workerData, to)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			width := 0
			for _, t := range tables {
				width = max(width, len(t.Name))
			}
			var rows int64
			for _, t := range tables {
				fmt.Fprintf(out, "%-*s %8d rows  %s\n", width, t.Name, t.Rows, t.Digest)
				rows += t.Rows
			}
			left := 0
			for _, t := range tables {
				for _, l := range t.Left {
					fmt.Fprintf(out, "left behind: %s row %s: its %s holds %s, which PostgreSQL cannot hold (%s)\n", t.Name, l.Key, l.Column, l.Reason, storecopy.LeftMeans(t.Name))
					left++
				}
			}
			fmt.Fprintf(out, "copied %d tables (%d rows) from %s to %s; counts and digests match", len(tables), rows, path, postgres.Redact(to))
			if left > 0 {
				fmt.Fprintf(out, "; %d rows left behind, listed above", left)
			}
			fmt.Fprintln(out)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the host's SQLite data file")
	cmd.Flags().StringVar(&workerData, "worker-data", "", "the host's worker data directory, whose SQLite databases are copied too (default FILE.workers beside --from)")
	cmd.Flags().StringVar(&to, "to", "", "an empty PostgreSQL database: postgres://USER:PASSWORD@HOST:PORT/DATABASE")
	return cmd
}

// copyLocation checks one side of host copy: a location storeurl cannot
// parse is refused with its diagnosis (a postgres URL missing its "://"
// names the URL it meant), one of the other kind names what the flag takes;
// both show value redacted. It returns the SQLite path of a SQLite location.
func copyLocation(flag, value string, want storeurl.Kind, takes string) (string, error) {
	kind, path, err := storeurl.Parse(value)
	if err != nil {
		return "", usage("%s: %v", flag, err)
	}
	if kind != want {
		return "", usage("%s must be %s, got %s", flag, takes, storeurl.Redact(value))
	}
	return path, nil
}
