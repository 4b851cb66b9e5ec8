package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance/runtimeabi"
)

// newConformanceRuntimeCommand is `takoform conformance runtime`: our
// runtime checks (spec/runtime-v1.md §8.3) against any host.
func newConformanceRuntimeCommand() *cobra.Command {
	var endpoint, token, workerURL, via, loaderURL, loaderToken, space string
	secretRoute := true
	var ready, wait time.Duration
	var ca caFlags
	cmd := &cobra.Command{
		Use:   "runtime",
		Short: "Run the runtime checks (spec/runtime-v1.md §8.3) against a host's deployed workers",
		Long: "runtime deploys the conformance deployment (our probe and peer, a KV namespace, a queue, a cron\n" +
			"trigger, a queue consumer and an endpoint) through the Host API at --endpoint as --token's tenant,\n" +
			"in a fresh space, then runs the checks against the endpoint's url (or --worker-url) and prints one\n" +
			"line per check: passed, failed or unmeasured. Checks 1-5 need the host's loader adapter\n" +
			"(--loader-endpoint); 17 and 18 wait up to 150 s and 60 s for the host's cron and queue deliveries.\n" +
			"Without --endpoint nothing is deployed and\n" +
			"--worker-url must serve our probe already. With --ingress every worker request goes in plain HTTP\n" +
			"to that address with the worker's hostname in Host (a `takoform host serve` ingress). It exits 1\n" +
			"if any check fails; the deployment is left in its space for inspection.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if endpoint == "" && workerURL == "" {
				return usage("give --endpoint (a host's Host API, where the checks deploy the probe) or --worker-url (a probe already deployed)")
			}
			if endpoint != "" && token == "" {
				return usage("--endpoint needs --token (or %s): the checks deploy as that token's tenant", EnvName("token"))
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			opts := ca.options(client.Options{Token: token})
			roots, err := opts.RootCAs()
			if err != nil {
				return usage("%v", err)
			}
			if endpoint != "" {
				c, err := client.New(ctx, endpoint, opts)
				if err != nil {
					return fmt.Errorf("negotiate with %s: %w", endpoint, err)
				}
				do := runtimeabi.DeployOptions{Space: space}
				if secretRoute {
					do.Secret = runtimeabi.SecretsThrough(c)
				}
				d, err := runtimeabi.Deploy(ctx, c, do)
				if err != nil {
					return fmt.Errorf("deploying the conformance deployment: %w", err)
				}
				fmt.Fprintf(out, "deployed the probe in space %q at %s\n", d.Space, d.URL)
				if d.StandIn != "" {
					fmt.Fprintf(out, "note: %s\n", d.StandIn)
				}
				if workerURL == "" {
					workerURL = d.URL
				}
			}
			w, err := runtimeabi.NewWorker(workerURL, via, roots)
			if err != nil {
				return usage("%v", err)
			}
			if err := w.WaitReady(ctx, ready); err != nil {
				return err
			}
			o := runtimeabi.Options{Worker: w, Wait: wait}
			if loaderURL != "" {
				o.Loader = &runtimeabi.Loader{URL: loaderURL, Token: loaderToken}
			}
			run := runtimeabi.NewRun(o)
			counts := map[runtimeabi.Outcome]int{}
			for _, c := range runtimeabi.Checks {
				r := run.Check(ctx, c)
				counts[r.Outcome]++
				line := fmt.Sprintf("%-10s %2d %-72s", r.Outcome, r.Number, r.ID)
				if r.Detail != "" {
					line += " " + r.Detail
				} else {
					line += " " + r.Duration.Round(time.Millisecond).String()
				}
				fmt.Fprintln(out, line)
			}
			fmt.Fprintf(out, "runtime checks: %d passed, %d failed, %d unmeasured\n", counts[runtimeabi.Passed], counts[runtimeabi.Failed], counts[runtimeabi.Unmeasured])
			if counts[runtimeabi.Failed] > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&endpoint, "endpoint", "", "the host's Host API origin, e.g. http://127.0.0.1:8080 (where the checks deploy the probe)")
	f.StringVar(&token, "token", "", "a Host API token of the tenant the probe is deployed in")
	f.StringVar(&space, "space", "", "the space to deploy in (default a fresh \"runtime-abi <hex>\")")
	f.StringVar(&workerURL, "worker-url", "", "the worker base URL to check (default the deployed endpoint's url output)")
	f.StringVar(&via, "ingress", "", "HOST:PORT to send every worker request to in plain HTTP, the worker's hostname in Host (e.g. 127.0.0.1:8788)")
	f.StringVar(&loaderURL, "loader-endpoint", "", "the host's loader adapter URL (spec/runtime-v1.md §7); without it checks 1-5 are unmeasured")
	f.BoolVar(&secretRoute, "secret-route", true, "set the probe's sensitive variable through the host's secret route (as takoform secret does); --secret-route=false declares a plain var in its place, for a host without one")
	f.StringVar(&loaderToken, "loader-token", "", "bearer token the loader adapter requires, if any")
	f.DurationVar(&ready, "ready-timeout", 60*time.Second, "how long the probe may take to answer after it is deployed")
	f.DurationVar(&wait, "wait", 30*time.Second, "the bound of each wait of the streaming checks 12-15 (spec/runtime-v1.md §8.3)")
	ca.add(cmd)
	return cmd
}
