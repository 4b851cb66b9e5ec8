package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/client"
)

// newTailCommand is `takoform tail` (handbook/workers-observability.md).
func newTailCommand() *cobra.Command {
	var endpoint, token, space, worker, group string
	var ca caFlags
	c := &cobra.Command{
		Use:   "tail --space SPACE --worker NAME [--group GROUP]",
		Short: "Stream a worker's console output and uncaught exceptions as JSON lines",
		Long: "tail streams, until interrupted, what a deployed worker writes with console.log, info, warn,\n" +
			"error and debug, and each uncaught exception or rejected task, one JSON object a line:\n" +
			"{time, worker{space,name,group,uid}, version, versionUid, level, kind, name, message, event}.\n" +
			"kind is console, exception or dropped (records lost while this reader lagged). Only output\n" +
			"after tail starts is shown. The worker is named by its space, its name and, outside the\n" +
			"host's default Form group, --group; a tenant sees only its own workers.\n" +
			"The host is --endpoint/--token, else TAKOFORM_ENDPOINT/TAKOFORM_TOKEN.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if space == "" || worker == "" {
				return usage("tail needs --space and --worker (the ModuleWorker's space and name)")
			}
			if endpoint == "" {
				endpoint = os.Getenv("TAKOFORM_ENDPOINT")
			}
			if token == "" {
				token = os.Getenv("TAKOFORM_TOKEN")
			}
			if endpoint == "" {
				return usage("tail needs the host: --endpoint or TAKOFORM_ENDPOINT")
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			hc, err := client.New(ctx, endpoint, ca.options(client.Options{Token: token, UserAgent: "takoform-tail"}))
			if err != nil {
				return err
			}
			stream, err := hc.Tail(ctx, space, worker, group)
			if err != nil {
				return err
			}
			defer func() {
				if err := stream.Close(); err != nil && ctx.Err() == nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "takoform tail: closing the stream:", err) //nolint:errcheck // stderr
				}
			}()
			sc := bufio.NewScanner(stream)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			out := cmd.OutOrStdout()
			for sc.Scan() {
				if _, err := fmt.Fprintln(out, sc.Text()); err != nil {
					return err
				}
			}
			if err := sc.Err(); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("the tail stream broke: %w", err)
			}
			if ctx.Err() == nil {
				return errors.New("the host closed the tail stream (it stopped or restarted); run takoform tail again")
			}
			return nil
		},
	}
	c.Flags().StringVar(&space, "space", "", "the worker's space")
	c.Flags().StringVar(&worker, "worker", "", "the ModuleWorker's name")
	c.Flags().StringVar(&group, "group", "", "the worker's Form group (apiVersion), when not the host's default")
	c.Flags().StringVar(&endpoint, "endpoint", "", "host origin (default TAKOFORM_ENDPOINT)")
	c.Flags().StringVar(&token, "token", "", "bearer token (default TAKOFORM_TOKEN)")
	ca.add(c)
	return c
}
