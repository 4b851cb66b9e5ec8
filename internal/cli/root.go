// Package cli builds the takoform command tree (cobra). Each command lives
// in its own file; Main runs the tree and maps errors to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// exitError carries a chosen exit code with an already-printed message.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// NewRoot returns the takoform command tree writing to out and errOut.
func NewRoot(out, errOut io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "takoform",
		Short:         "Takoform: portable desired-state Forms, hosts and the tools around them",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.AddCommand(newFormCommand(), newSpaceCommand(), newHostCommand(), newConformanceCommand(), newSurfaceCommand(), newVersionCommand(), newRecoverCommand(), newTailCommand(), newSecretCommand())
	bindEnv(root) // last: every flag of every command gets its TAKOFORM_… variable
	return root
}

// Main runs the command line with args and returns the process exit code:
// 0 success, 1 a refusal or failure the output explains, 2 a usage error.
func Main(args []string, out, errOut io.Writer) int {
	return Run(context.Background(), args, out, errOut)
}

// Run is Main under ctx: a command that serves (host serve) stops when ctx
// ends, as on SIGTERM. Tests run the real command tree in-process with it.
func Run(ctx context.Context, args []string, out, errOut io.Writer) int {
	return RunIO(ctx, args, nil, out, errOut)
}

// RunIO is Run with in as the commands' stdin (nil: the process's).
func RunIO(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) int {
	root := NewRoot(out, errOut)
	if in != nil {
		root.SetIn(in)
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Client and library errors already start "takoform: "; say it once.
	fmt.Fprintln(errOut, "takoform:", strings.TrimPrefix(err.Error(), "takoform: "))
	if isUsage(err) {
		return 2
	}
	return 1
}

func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

type usageError struct{ error }

func usage(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }
