package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
)

func newFormCommand() *cobra.Command {
	f := &cobra.Command{Use: "form", Short: "Form Definition tools: digests and verification"}
	f.AddCommand(&cobra.Command{
		Use:   "digest FILE...",
		Short: "Print the schema digest (RFC 8785 JCS + SHA-256) of each JSON document",
		Long: "digest prints \"<digest>  <file>\" for each FILE: sha256: followed by the hex SHA-256 of the\n" +
			"document's RFC 8785 canonical bytes, the construction of every Takoform schema digest.\n" +
			"A file that is not strict I-JSON is refused naming the JSON pointer.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			failed := false
			for _, p := range args {
				data, err := os.ReadFile(p)
				if err == nil {
					var d string
					if d, err = ijson.Digest(data); err == nil {
						fmt.Fprintf(cmd.OutOrStdout(), "%s  %s\n", d, p)
						continue
					}
				}
				failed = true
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", p, err)
			}
			if failed {
				return &exitError{code: 1}
			}
			return nil
		},
	})
	f.AddCommand(&cobra.Command{
		Use:   "verify DIR",
		Short: "Verify every definition.json under DIR and its fixtures",
		Long: "verify parses every definition.json under DIR as a Form, Interface or Binding Definition,\n" +
			"checks its structure, checks every canonical fixture valid and every negative fixture\n" +
			"refused, and checks that digests one document names of another in DIR agree.\n" +
			"Each problem is printed as FILE POINTER: message; the exit code is 1 if there is any.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			st, err := os.Stat(dir)
			if err != nil || !st.IsDir() {
				return usage("%s is not a directory", dir)
			}
			fsys := os.DirFS(dir)
			fam, findings := form.LoadFamily(fsys)
			findings = append(findings, fam.CheckFixtures(fsys)...)
			findings = append(findings, fam.CheckReferences()...)
			if _, err := fam.Catalog(); err != nil {
				findings = append(findings, form.Finding{File: dir, Message: err.Error()})
			}
			out := cmd.OutOrStdout()
			canon, neg := 0, 0
			for _, f := range fam.Forms {
				canon += len(f.Definition.Fixtures())
				neg += len(f.Definition.NegativeFixtures())
				fmt.Fprintf(out, "form       %-22s %s  %s\n", f.Definition.Ref().Kind, f.Definition.Ref().SchemaDigest, f.Path)
			}
			for _, i := range fam.Interfaces {
				fmt.Fprintf(out, "interface  %-22s %s  %s\n", i.Definition.Ref().Name+"@"+i.Definition.Ref().Version, i.Definition.Ref().SchemaDigest, i.Path)
			}
			for _, b := range fam.Bindings {
				fmt.Fprintf(out, "binding    %-22s %s  %s\n", b.Definition.Ref().Name+"@"+b.Definition.Ref().Version, b.Definition.Ref().SchemaDigest, b.Path)
			}
			total := len(fam.Forms) + len(fam.Interfaces) + len(fam.Bindings)
			if total == 0 && len(findings) == 0 {
				findings = append(findings, form.Finding{File: dir, Message: "no definition.json found"})
			}
			for _, f := range findings {
				fmt.Fprintln(cmd.ErrOrStderr(), f.String())
			}
			fmt.Fprintf(out, "%d forms, %d interfaces, %d bindings; %d canonical and %d negative fixtures checked; %d problems\n",
				len(fam.Forms), len(fam.Interfaces), len(fam.Bindings), canon, neg, len(findings))
			if len(findings) > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	})
	return f
}
