package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/takoform/takoform/artifact"
)

// LoadTimeout bounds one load check: a bundle whose graph has not
// finished loading by then fails module_syntax_error (spec/runtime-v1.md
// §7.3).
const LoadTimeout = 10 * time.Second

// HandlerVocabulary is the closed handler vocabulary, in vocabulary order
// (spec/runtime-v1.md §1.2).
var HandlerVocabulary = []string{artifact.HandlerFetch, artifact.HandlerScheduled, artifact.HandlerQueue}

// loadProbe is the generated main module of a load check. It imports the
// tenant's main module dynamically, twice: per ECMAScript, an evaluation
// error is recorded on the module and the second import rejects with the
// same value, while a failed resolution or link leaves the module
// unlinked and the second import fails anew with a new error. So "same"
// tells a throw while evaluating (module_syntax_error, or one of the
// host's stubs, which throw NONCE-prefixed messages) from a link failure
// (an unresolved specifier, a missing named export), without reading the
// tenant's source. It prints one NONCE-prefixed JSON line.
const loadProbe = `const NONCE = %s;
const MAIN = %s;
const VOCABULARY = ["fetch", "scheduled", "queue"];
function describe(e) {
  if (e instanceof Error) return { name: String(e.name), message: String(e.message) };
  return { name: typeof e, message: "a non-Error value was thrown: " + String(e) };
}
export default {
  async test() {
    let mod, first, second, failed = false;
    try { mod = await import(MAIN); } catch (e) { first = e; failed = true; }
    let out;
    if (failed) {
      try { await import(MAIN); } catch (e) { second = e; }
      out = { error: describe(first), evaluated: first === second };
    } else {
      const d = mod.default;
      const handlers = [];
      if (d !== null && typeof d === "object") {
        for (const k of VOCABULARY) {
          if (Object.prototype.hasOwnProperty.call(d, k) && typeof d[k] === "function") handlers.push(k);
        }
      }
      out = { handlers };
    }
    console.log(NONCE + JSON.stringify(out));
  },
};
`

// stubSource is the source of a host stub module: importing it (default
// or namespace) throws a NONCE-prefixed message naming what the tenant
// imported. A named import of a stub fails to link instead (classify).
func stubSource(nonce, kind, name string) string {
	return fmt.Sprintf("throw new Error(%s);\nexport default undefined;\n", jsString(nonce+kind+":"+name))
}

// Load runs a load check of a bundle on the engine bin (spec/runtime-v1.md
// §1.3, §1.4): `workerd test` on a generated config in a fresh 0700
// directory, one worker holding the bundle's loadable modules, a stub in
// place of each auxiliary module and each engine built-in (BuiltinModules)
// the bundle does not itself name, and a generated probe (loadProbe) that
// imports mainModule and reads the exported handler set from its default
// export (spec/runtime-v1.md §1.2). No env, no network, nothing kept.
//
// It returns the exported set in vocabulary order, or a *artifact.LoadError
// of the first step that fails, in the order of spec/runtime-v1.md §1.3:
// module_not_found (mainModule names no module; an unresolved static
// import; an engine built-in), unsupported_media_type (a media type outside
// the loadable set; mainModule or an import naming an auxiliary module),
// module_syntax_error (the engine does not compile a module, text/plain
// bytes that are not UTF-8, evaluation throws, or loading takes longer than
// LoadTimeout), handler_not_exported (a name of declared outside the
// vocabulary or missing from the exported set). Any other error (the engine
// did not run) is not a verdict.
func Load(ctx context.Context, bin string, modules []Module, mainModule string, declared []string) ([]string, error) {
	metas := make([]ModuleMeta, len(modules))
	for i, m := range modules {
		metas[i] = ModuleMeta{m.Name, m.MediaType}
	}
	if err := CheckModules(metas, mainModule); err != nil {
		return nil, err
	}
	for _, m := range modules {
		if strings.HasPrefix(m.Name, ReservedPrefix) {
			return nil, fmt.Errorf("module %q uses the host's reserved prefix %q", m.Name, ReservedPrefix)
		}
		if m.MediaType == "text/plain" && !utf8.Valid(m.Data) {
			return nil, loadErr(artifact.LoadModuleSyntaxError, "module %q is text/plain but its bytes are not UTF-8", m.Name)
		}
	}
	handlers, err := loadInEngine(ctx, bin, modules, mainModule)
	if err != nil {
		return nil, err
	}
	for _, d := range declared {
		if !slices.Contains(HandlerVocabulary, d) {
			return nil, loadErr(artifact.LoadHandlerNotExported, "declared handler %q is outside the handler vocabulary (fetch, scheduled, queue)", d)
		}
		if !slices.Contains(handlers, d) {
			return nil, loadErr(artifact.LoadHandlerNotExported, "handler %q is declared but the default export of %q does not carry it as a function (it exports %s)", d, mainModule, listOrNone(handlers))
		}
	}
	return handlers, nil
}

// ModuleMeta is a module's name and media type.
type ModuleMeta struct{ Name, MediaType string }

// CheckModules runs steps 1 and 2 of spec/runtime-v1.md §1.3, which need
// no bytes: mainModule names a module (else module_not_found), every
// module's media type is loadable or auxiliary and mainModule is not
// auxiliary (else unsupported_media_type). Errors are *artifact.LoadError.
func CheckModules(modules []ModuleMeta, mainModule string) error {
	main := -1
	for i, m := range modules {
		if m.Name == mainModule {
			main = i
		}
	}
	if main < 0 {
		return loadErr(artifact.LoadModuleNotFound, "mainModule %q names no module of the bundle", mainModule)
	}
	for _, m := range modules {
		if _, ok := moduleTypes[m.MediaType]; !ok && m.MediaType != auxiliaryMediaType {
			return loadErr(artifact.LoadUnsupportedMediaType, "module %q has media type %q, outside the loadable set (%s)", m.Name, m.MediaType, loadableList())
		}
	}
	if modules[main].MediaType == auxiliaryMediaType {
		return loadErr(artifact.LoadUnsupportedMediaType, "mainModule %q is an auxiliary module (%s), carried but never loaded", mainModule, auxiliaryMediaType)
	}
	return nil
}

// AuxiliaryMediaType is the media type of a module that is carried, never
// linked (spec/runtime-v1.md §1.1).
const AuxiliaryMediaType = auxiliaryMediaType

// loadInEngine runs step 3 of spec/runtime-v1.md §1.3 on the engine.
func loadInEngine(ctx context.Context, bin string, modules []Module, mainModule string) (_ []string, rerr error) {
	dir, err := os.MkdirTemp("", "takoform-load-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			rerr = errors.Join(rerr, fmt.Errorf("load check: removing its directory: %w", err))
		}
	}()
	nb := make([]byte, 16)
	if _, err := rand.Read(nb); err != nil {
		return nil, err
	}
	nonce := "takoform-" + hex.EncodeToString(nb) + ":"
	var mods []string
	file := func(name string, data []byte) (string, error) {
		return name, os.WriteFile(filepath.Join(dir, name), data, 0o600)
	}
	probe := fmt.Sprintf(loadProbe, jsString(nonce), jsString("../"+mainModule))
	rel, err := file("probe.js", []byte(probe))
	if err != nil {
		return nil, err
	}
	mods = append(mods, fmt.Sprintf(`(name = %s, esModule = embed %s)`, capnpText(ReservedPrefix+"load.js"), capnpText(rel)))
	names := map[string]bool{}
	for i, m := range modules {
		names[m.Name] = true
		typ, data := moduleTypes[m.MediaType], m.Data
		if m.MediaType == auxiliaryMediaType {
			typ, data = "esModule", []byte(stubSource(nonce, "auxiliary", m.Name))
		}
		rel, err := file("m"+strconv.Itoa(i), data)
		if err != nil {
			return nil, err
		}
		mods = append(mods, fmt.Sprintf(`(name = %s, %s = embed %s)`, capnpText(m.Name), typ, capnpText(rel)))
	}
	for i, b := range BuiltinModules {
		if names[b] {
			continue
		}
		rel, err := file("b"+strconv.Itoa(i), []byte(stubSource(nonce, "builtin", b)))
		if err != nil {
			return nil, err
		}
		mods = append(mods, fmt.Sprintf(`(name = %s, esModule = embed %s)`, capnpText(b), capnpText(rel)))
	}
	cfg := "# Generated by the Takoform host: one load check (spec/runtime-v1.md §1.4).\n" +
		"using Workerd = import \"/workerd/workerd.capnp\";\n" +
		"const config :Workerd.Config = (\n  services = [\n" +
		"    (name = \"nonet\", network = (allow = [])),\n" +
		fmt.Sprintf("    (name = \"load\", worker = (modules = [%s], compatibilityDate = %s, globalOutbound = \"nonet\")),\n", strings.Join(mods, ", "), capnpText(CompatibilityDate)) +
		"  ],\n);\n"
	if _, err := file(ConfigFile, []byte(cfg)); err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(parent, LoadTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "test", ConfigFile)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out capped
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if err := parent.Err(); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, loadErr(artifact.LoadModuleSyntaxError, "the bundle did not finish loading within %s", LoadTimeout)
	}
	return verdict(out.Bytes(), nonce, runErr)
}

// verdict reads a load check's output: the probe's NONCE-prefixed line,
// else a failed start (a module the engine does not compile).
func verdict(output []byte, nonce string, runErr error) ([]string, error) {
	for line := range strings.Lines(string(output)) {
		i := strings.Index(line, nonce)
		if i < 0 {
			continue
		}
		var res struct {
			Handlers []string `json:"handlers"`
			Error    *struct {
				Name    string `json:"name"`
				Message string `json:"message"`
			} `json:"error"`
			Evaluated bool `json:"evaluated"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(line[i+len(nonce):])), &res); err != nil {
			return nil, fmt.Errorf("load check: unreadable probe answer: %w", err)
		}
		if res.Error == nil {
			if res.Handlers == nil {
				res.Handlers = []string{}
			}
			return res.Handlers, nil
		}
		return nil, classify(res.Error.Name, res.Error.Message, res.Evaluated, nonce)
	}
	var ee *exec.ExitError
	if !errors.As(runErr, &ee) {
		if runErr == nil {
			runErr = errors.New("the probe printed no answer")
		}
		return nil, fmt.Errorf("load check: workerd: %w: %s", runErr, engineText(output))
	}
	// The worker did not start: workerd compiles every module of the
	// bundle before it runs anything, so a module does not parse (or a
	// wasm module does not compile).
	return nil, loadErr(artifact.LoadModuleSyntaxError, "%s", engineText(output))
}

// classify maps the probe's error to a load code.
func classify(name, message string, evaluated bool, nonce string) error {
	if rest, ok := strings.CutPrefix(message, nonce); ok && evaluated {
		kind, mod, _ := strings.Cut(rest, ":")
		if kind == "auxiliary" {
			return loadErr(artifact.LoadUnsupportedMediaType, "module %q is auxiliary (%s) and is imported; auxiliary modules are carried, never loaded", mod, auxiliaryMediaType)
		}
		return loadErr(artifact.LoadModuleNotFound, "%q is an engine built-in module; built-ins are not portable (spec/runtime-v1.md §1.1), so bundle what the code needs", mod)
	}
	if evaluated {
		return loadErr(artifact.LoadModuleSyntaxError, "evaluating the module graph threw %s: %s", name, message)
	}
	if strings.HasPrefix(message, "No such module ") {
		return loadErr(artifact.LoadModuleNotFound, "%s", message)
	}
	// A named import of a built-in's stub: V8 names the specifier as
	// written, and a built-in is only ever reached by its exact name.
	if m := missingExport.FindStringSubmatch(message); m != nil && slices.Contains(BuiltinModules, m[1]) {
		return loadErr(artifact.LoadModuleNotFound, "%q is an engine built-in module; built-ins are not portable (spec/runtime-v1.md §1.1), so bundle what the code needs", m[1])
	}
	return loadErr(artifact.LoadModuleSyntaxError, "%s: %s", name, message)
}

// missingExport is V8's link error for a named import a module does not
// export.
var missingExport = regexp.MustCompile(`^The requested module '([^']*)' does not provide an export named `)

// engineText is workerd's own output, without its debug lines and the
// service's name, clipped.
func engineText(output []byte) string {
	var keep []string
	for line := range strings.Lines(string(output)) {
		line = strings.TrimRight(line, "\n")
		if strings.Contains(line, ": debug: ") || strings.TrimSpace(line) == "" {
			continue
		}
		keep = append(keep, strings.TrimPrefix(line, `service load: `))
	}
	s := strings.Join(keep, "\n")
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	if s == "" {
		s = "the engine did not start the bundle and said nothing"
	}
	return s
}

func loadErr(code, format string, args ...any) *artifact.LoadError {
	return &artifact.LoadError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func loadableList() string {
	l := make([]string, 0, len(moduleTypes))
	for k := range moduleTypes {
		l = append(l, k)
	}
	slices.Sort(l)
	return strings.Join(l, ", ")
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// capped keeps the first 1 MiB written to it.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := 1<<20 - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
