package cli

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/host/store/sqlite"
)

// newHostSecretsCommand is `takoform host secrets`: the operator's side
// of workers' sensitive values (handbook/secrets.md).
func newHostSecretsCommand() *cobra.Command {
	c := &cobra.Command{Use: "secrets", Short: "Administer the host's sealed sensitive values (key rotation)"}
	var data string
	var rt runtimeFlags
	rekey := &cobra.Command{
		Use:   "rekey --secrets-key NEW --secrets-key-previous OLD",
		Short: "Reseal every stored sensitive value with the current secrets key (the last step of a key rotation)",
		Long: "rekey opens each stored value sealed by another key with --secrets-key-previous and seals it\n" +
			"again with --secrets-key, a page per transaction; safe while hosts serve with both keys. Values\n" +
			"neither key opens are listed by count and left alone: they must be set again. See\n" +
			"handbook/secrets.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			loc, err := dataLocation(data)
			if err != nil {
				return err
			}
			if rt.secretsKey == "" {
				if path, _ := rt.secretsKeyPath(loc); path != "" {
					rt.secretsKey = path // the default beside a SQLite file; it must exist
				}
			}
			if rt.secretsKey == "" || rt.secretsKeyPrevious == "" {
				return usage("rekey needs --secrets-key (the new key) and --secrets-key-previous (the key being retired)")
			}
			keys, _, err := rt.secretKeys(loc, false, slog.New(slog.DiscardHandler))
			if err != nil {
				return err
			}
			st, err := openData(cmd.Context(), loc)
			if err != nil {
				return err
			}
			defer st.Close()
			res, err := secrets.Rekey(cmd.Context(), st, keys)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "takoform host secrets rekey: %d resealed with key %s, %d already under it, %d open with neither key\n", res.Resealed, keys.Current(), res.Current, res.Unopened)
			if res.Unopened > 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "takoform host secrets rekey: values neither key opens must be set again (takoform secret list shows them; their versions answer 503)")
				return &exitError{code: 1}
			}
			return nil
		},
	}
	rekey.Flags().StringVar(&data, "data", "", "the host's data: a SQLite file or postgres:// URL, as host serve takes it (default: the SQLite file "+sqlite.DefaultPath()+")")
	rekey.Flags().StringVar(&rt.secretsKey, "secrets-key", "", "the new key file values are sealed with (default: FILE.secrets-key beside a SQLite data file)")
	rekey.Flags().StringVar(&rt.secretsKeyPrevious, "secrets-key-previous", "", "the key file being retired")
	c.AddCommand(rekey)
	return c
}
