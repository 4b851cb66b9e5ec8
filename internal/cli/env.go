package cli

import (
	"encoding/csv"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envPrefix starts the environment variable of every flag.
const envPrefix = "TAKOFORM_"

// envAnnotation marks a flag whose usage already names its variable (a
// persistent flag is seen by every command under the one defining it).
const envAnnotation = "takoform_env"

// EnvName is the environment variable that sets flag name on any command:
// TAKOFORM_ followed by the name upper-cased with '-' written '_'
// (--tls-cert → TAKOFORM_TLS_CERT). Decision spec/decisions/0008-deployable-host.md.
func EnvName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// bindEnv gives every flag of cmd and of every command under it an
// environment variable (EnvName), named in the flag's usage so --help
// documents it. When a command runs, a flag not given on the command line
// takes its variable's value if the variable is set and not empty; a
// repeatable flag (a pflag.SliceValue) takes a comma-separated list
// (CSV quoting allowed). A value the flag refuses is a usage error naming
// the variable and the flag. Call it once, after the tree is built, so
// flags any command adds are bound without that command knowing.
func bindEnv(cmd *cobra.Command) {
	for _, fs := range []*pflag.FlagSet{cmd.PersistentFlags(), cmd.LocalFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Annotations[envAnnotation] != nil {
				return
			}
			if f.Annotations == nil {
				f.Annotations = map[string][]string{}
			}
			f.Annotations[envAnnotation] = []string{EnvName(f.Name)}
			if _, ok := f.Value.(pflag.SliceValue); ok {
				f.Usage += fmt.Sprintf(" (env %s, comma-separated)", EnvName(f.Name))
			} else {
				f.Usage += fmt.Sprintf(" (env %s)", EnvName(f.Name))
			}
		})
	}
	if cmd.Runnable() {
		preE, pre := cmd.PreRunE, cmd.PreRun
		cmd.PreRun = nil
		cmd.PreRunE = func(c *cobra.Command, args []string) error {
			if err := applyEnv(c.Flags()); err != nil {
				return err
			}
			if preE != nil {
				return preE(c, args)
			}
			if pre != nil {
				pre(c, args)
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		bindEnv(sub)
	}
}

// applyEnv sets every flag of fs that the command line left alone from its
// environment variable.
func applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" {
			return
		}
		name := EnvName(f.Name)
		raw, ok := os.LookupEnv(name)
		if !ok || raw == "" {
			return
		}
		if sv, isSlice := f.Value.(pflag.SliceValue); isSlice {
			items, perr := csv.NewReader(strings.NewReader(raw)).Read()
			if perr != nil {
				err = usage("environment variable %s (for --%s) is not a comma-separated list: %v", name, f.Name, perr)
				return
			}
			if rerr := sv.Replace(items); rerr != nil {
				err = usage("environment variable %s (for --%s): %v", name, f.Name, rerr)
				return
			}
			f.Changed = true
			return
		}
		if serr := fs.Set(f.Name, raw); serr != nil {
			err = usage("environment variable %s (for --%s): %v; unset it or give a valid value", name, f.Name, serr)
		}
	})
	return err
}
