package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/wire"
)

// secretFlags address a worker on the host's secret route
// (spec/runtime-v1.md §3.2).
type secretFlags struct {
	endpoint, token, space, worker, group string
	ca                                    caFlags
}

func (f *secretFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.endpoint, "endpoint", "", "host origin, e.g. https://takoform.example")
	fl.StringVar(&f.token, "token", "", "bearer token of the worker's tenant")
	fl.StringVar(&f.space, "space", "", "the worker's space")
	fl.StringVar(&f.worker, "worker", "", "the ModuleWorker's name")
	fl.StringVar(&f.group, "group", edge.Group, "the worker's Form group (apiVersion)")
	f.ca.add(c)
}

// connect checks the address flags and negotiates with the host.
func (f *secretFlags) connect(cmd *cobra.Command) (*client.Client, client.Worker, error) {
	switch {
	case f.endpoint == "":
		return nil, client.Worker{}, usage("the host is needed: --endpoint (or %s)", EnvName("endpoint"))
	case f.space == "":
		return nil, client.Worker{}, usage("the worker's space is needed: --space (or %s)", EnvName("space"))
	case f.worker == "":
		return nil, client.Worker{}, usage("the worker is needed: --worker NAME (a ModuleWorker's name)")
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	hc, err := client.New(ctx, f.endpoint, f.ca.options(client.Options{Token: f.token, UserAgent: "takoform-secret"}))
	if err != nil {
		return nil, client.Worker{}, err
	}
	return hc, client.Worker{Space: f.space, Group: f.group, Name: f.worker}, nil
}

func newSecretCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "secret",
		Short: "Set, unset and list a worker's sensitive variables (values never leave the host)",
		Long: "A WorkerVersion names the sensitive variables it needs in requiredSensitiveVars; their values\n" +
			"are set here, per worker (space, name and Form group), and reach the worker's env as strings.\n" +
			"Values are read from stdin or --from-file, never from the command line, and are never shown\n" +
			"again. See handbook/secrets.md.",
	}
	c.AddCommand(newSecretSetCommand(), newSecretUnsetCommand(), newSecretListCommand())
	return c
}

func newSecretSetCommand() *cobra.Command {
	var f secretFlags
	var fromFile string
	c := &cobra.Command{
		Use:   "set --space S --worker W NAME",
		Short: "Set NAME's value for a worker, read from stdin (one trailing newline dropped) or --from-file (verbatim)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usage("secret set takes only NAME: a value on the command line would show in ps and shell history; pipe it on stdin or give --from-file")
			}
			if len(args) == 0 {
				return usage("secret set needs NAME, the sensitive variable's name (e.g. API_TOKEN)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSecretName(args[0]); err != nil {
				return err
			}
			value, err := readSecretValue(cmd.InOrStdin(), fromFile)
			if err != nil {
				return err
			}
			hc, w, err := f.connect(cmd)
			if err != nil {
				return err
			}
			info, err := hc.SetSecret(cmd.Context(), w, args[0], value)
			clear(value)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s set for worker %s in space %q at %s\n", info.Name, w.Name, w.Space, info.UpdatedAt)
			if len(info.RequiredBy) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: no version of worker %s requires %s yet (requiredSensitiveVars); the value waits for one that does\n", w.Name, info.Name)
			}
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVar(&fromFile, "from-file", "", "read the value from this file, byte for byte, instead of stdin")
	return c
}

// readSecretValue reads a value from the file, else from stdin without
// one trailing newline; a terminal on stdin is refused (the value would
// echo), as is anything CheckValue would refuse on the host.
func readSecretValue(stdin io.Reader, file string) ([]byte, error) {
	var r io.Reader = stdin
	from := "stdin"
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("--from-file: %w", err)
		}
		defer f.Close()
		r, from = f, file
	} else if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return nil, usage("secret set reads the value from stdin, which is a terminal (the value would echo): pipe it, e.g. printf %%s \"$VALUE\" | takoform secret set …, or give --from-file")
		}
	}
	v, err := io.ReadAll(io.LimitReader(r, wire.MaxSecretBytes+3))
	if err != nil {
		return nil, fmt.Errorf("reading the value from %s: %w", from, err)
	}
	if file == "" {
		v = bytes.TrimSuffix(v, []byte("\n"))
		v = bytes.TrimSuffix(v, []byte("\r"))
	}
	switch {
	case len(v) == 0:
		return nil, usage("the value read from %s is empty; send the value (to remove one, use takoform secret unset)", from)
	case len(v) > wire.MaxSecretBytes:
		return nil, usage("the value read from %s is over %d bytes, the most a sensitive variable holds; keep large material elsewhere (a bucket) and store a key to it", from, wire.MaxSecretBytes)
	}
	return v, nil
}

func newSecretUnsetCommand() *cobra.Command {
	var f secretFlags
	c := &cobra.Command{
		Use:   "unset --space S --worker W NAME",
		Short: "Remove NAME's value for a worker (versions requiring it stop answering: the host's 503)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSecretName(args[0]); err != nil {
				return err
			}
			hc, w, err := f.connect(cmd)
			if err != nil {
				return err
			}
			info, err := hc.UnsetSecret(cmd.Context(), w, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s has no value for worker %s in space %q\n", info.Name, w.Name, w.Space)
			if len(info.RequiredBy) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s is required by %s, which now answer the host's 503 until it is set again\n", info.Name, strings.Join(info.RequiredBy, ", "))
			}
			return nil
		},
	}
	f.add(c)
	return c
}

func newSecretListCommand() *cobra.Command {
	var f secretFlags
	var asJSON bool
	c := &cobra.Command{
		Use:   "list --space S --worker W",
		Short: "List a worker's sensitive variables: names, set or not, when set, which versions require them (never values)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hc, w, err := f.connect(cmd)
			if err != nil {
				return err
			}
			l, err := hc.ListSecrets(cmd.Context(), w)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(l)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSET\tUPDATED\tREQUIRED BY")
			for _, s := range l.Secrets {
				set, updated, req := "no", "-", "-"
				if s.Set {
					set, updated = "yes", s.UpdatedAt
				}
				if len(s.RequiredBy) > 0 {
					req = strings.Join(s.RequiredBy, ",")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, set, updated, req)
			}
			return tw.Flush()
		},
	}
	f.add(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print the host's answer as JSON")
	return c
}

// checkSecretName refuses, as a usage error, a name no version could
// declare (edge.CheckSensitiveVarName).
func checkSecretName(name string) error {
	if err := edge.CheckSensitiveVarName(name); err != nil {
		var re *edge.RuleError
		if errors.As(err, &re) {
			return usage("%s", re.Message)
		}
		return usage("%v", err)
	}
	return nil
}
