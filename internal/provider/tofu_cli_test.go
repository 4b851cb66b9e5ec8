package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/internal/syncbuf"
)

// tofuDir drives the OpenTofu CLI directly in one working directory, for
// what terraform-plugin-testing cannot do: signals (SIGINT, SIGKILL),
// -parallelism, and commands of our own between runs. Each command gets a
// fresh in-process provider server attached through TF_REATTACH_PROVIDERS,
// as terraform-plugin-testing does, so a stop reaches only that command's
// provider.
type tofuDir struct {
	t   *testing.T
	dir string
	reg *provider.Registry
	env []string // added to every command's environment
	bin string   // the CLI; "" is the pinned OpenTofu (TF_ACC_TERRAFORM_PATH)
}

const providerAddr = "registry.opentofu.org/takoform/takoform"

// newTofuDir writes main.tf and runs tofu init.
func newTofuDir(t *testing.T, reg *provider.Registry, config string) *tofuDir {
	t.Helper()
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		t.Skip("needs OpenTofu: run scripts/opentofu.sh (make test does) or set TF_ACC_TERRAFORM_PATH")
	}
	d := &tofuDir{t: t, dir: t.TempDir(), reg: reg}
	d.write(config)
	d.init()
	return d
}

func (d *tofuDir) init() {
	d.t.Helper()
	if out, err := d.run("init", "-input=false", "-no-color"); err != nil {
		d.t.Fatalf("tofu init: %v\n%s", err, out)
	}
}

func (d *tofuDir) write(config string) {
	d.t.Helper()
	if err := os.WriteFile(filepath.Join(d.dir, "main.tf"), []byte(config), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// serve starts one provider server and returns the reattach environment
// and a stop function that waits for the server to close.
func (d *tofuDir) serve() (string, func()) {
	d.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfgCh := make(chan *plugin.ReattachConfig, 1)
	closeCh := make(chan struct{})
	srv, err := provider.NewServer("test", d.reg)()
	if err != nil {
		d.t.Fatal(err)
	}
	go func() {
		_ = tf6server.Serve(providerAddr, func() tfprotov6.ProviderServer { return srv },
			tf6server.WithDebug(ctx, cfgCh, closeCh), tf6server.WithLoggingSink(d.t), tf6server.WithGoPluginLogger(hclog.NewNullLogger()))
	}()
	rc := <-cfgCh
	b, err := json.Marshal(map[string]any{providerAddr: map[string]any{
		"Protocol": string(rc.Protocol), "ProtocolVersion": rc.ProtocolVersion, "Pid": rc.Pid, "Test": true,
		"Addr": map[string]string{"Network": rc.Addr.Network(), "String": rc.Addr.String()},
	}})
	if err != nil {
		d.t.Fatal(err)
	}
	return "TF_REATTACH_PROVIDERS=" + string(b), func() { cancel(); <-closeCh }
}

// command is one tofu command with its own provider server.
type command struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	stop func()
	done chan struct{} // closed when the command exited
	err  error
}

func (d *tofuDir) start(args ...string) *command {
	d.t.Helper()
	env, stop := d.serve()
	bin := d.bin
	if bin == "" {
		bin = os.Getenv("TF_ACC_TERRAFORM_PATH")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = d.dir
	cmd.Env = append(append(os.Environ(), d.env...), env, "TF_IN_AUTOMATION=1", "TF_LOG=", "CHECKPOINT_DISABLE=1")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		stop()
		d.t.Fatal(err)
	}
	c := &command{cmd: cmd, out: out, stop: stop, done: make(chan struct{})}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	return c
}

// wait waits for the command and its provider server.
func (c *command) wait() (string, error) {
	<-c.done
	c.stop()
	return c.out.String(), c.err
}

// exited reports whether the command has ended.
func (c *command) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *command) signal(s syscall.Signal) { _ = c.cmd.Process.Signal(s) }

// run runs one command to its end.
func (d *tofuDir) run(args ...string) (string, error) {
	return d.start(args...).wait()
}

// must runs one command that must succeed.
func (d *tofuDir) must(args ...string) string {
	d.t.Helper()
	out, err := d.run(args...)
	if err != nil {
		d.t.Fatalf("tofu %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// planEmpty requires `tofu plan -detailed-exitcode` to report no changes.
func (d *tofuDir) planEmpty() {
	d.t.Helper()
	out, err := d.run("plan", "-input=false", "-no-color", "-detailed-exitcode")
	if err != nil {
		d.t.Fatalf("the plan is not empty (%v):\n%s", err, out)
	}
}

// stateEntry is one managed resource instance in the local state.
type stateEntry struct {
	Address string
	Type    string
	Attrs   map[string]any
}

// state reads terraform.tfstate (nothing when none or an empty file was
// written).
func (d *tofuDir) state() []stateEntry {
	d.t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if os.IsNotExist(err) || (err == nil && len(b) == 0) { // a killed tofu may leave it empty
		return nil
	}
	if err != nil {
		d.t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Mode, Type, Name string
			Instances        []struct {
				IndexKey   any            `json:"index_key"`
				Attributes map[string]any `json:"attributes"`
			}
		}
	}
	if err := json.Unmarshal(b, &st); err != nil {
		d.t.Fatalf("terraform.tfstate: %v", err)
	}
	var out []stateEntry
	for _, r := range st.Resources {
		if r.Mode != "managed" {
			continue
		}
		for _, in := range r.Instances {
			addr := r.Type + "." + r.Name
			switch k := in.IndexKey.(type) {
			case string:
				addr += fmt.Sprintf("[%q]", k)
			case float64:
				addr += fmt.Sprintf("[%d]", int(k))
			}
			out = append(out, stateEntry{Address: addr, Type: r.Type, Attrs: in.Attributes})
		}
	}
	return out
}

// syncBuffer holds a command's two output streams while a reader polls it.
type syncBuffer = syncbuf.Buffer
