package runtimeabi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/takoform/takoform/artifact"
)

// LoaderProtocol is the loader adapter's protocol (spec/runtime-v1.md §7).
const LoaderProtocol = "takoform.runtime-abi-loader@v1"

// Loader reaches a host's loader adapter (spec/runtime-v1.md §7), which
// loads a module set through the engine and answers its exported
// handlers or its load error.
type Loader struct {
	URL   string // POSTed to exactly
	Token string // sent as a bearer token when set
	HTTP  *http.Client
}

// loadModule is one module of a load request.
type loadModule struct {
	Name, MediaType string
	Data            []byte
}

// loadAnswer is the adapter's answer (spec/runtime-v1.md §7.3).
type loadAnswer struct {
	ExportedHandlers []string `json:"exportedHandlers"`
	Error            *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// load sends one load request (spec/runtime-v1.md §7.2) and reads at most
// 1 MiB of its answer, ignoring the HTTP status (§7.3).
func (l *Loader) load(ctx context.Context, main string, declared []string, modules []loadModule) (*loadAnswer, error) {
	ms := make([]map[string]string, len(modules))
	for i, m := range modules {
		ms[i] = map[string]string{"name": m.Name, "mediaType": m.MediaType, "contentBase64": base64.StdEncoding.EncodeToString(m.Data)}
	}
	body, _ := json.Marshal(map[string]any{"protocol": LoaderProtocol, "mainModule": main, "declaredHandlers": declared, "modules": ms})
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", l.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if l.Token != "" {
		req.Header.Set("Authorization", "Bearer "+l.Token)
	}
	hc := l.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", l.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the loader's answer: %w", err)
	}
	var a loadAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("the loader answered HTTP %d with no JSON object: %s", resp.StatusCode, abbreviate(b))
	}
	return &a, nil
}

// verifyExports: the answer is exactly these exported handlers.
func verifyExports(a *loadAnswer, want []string) error {
	if a.Error != nil {
		return fmt.Errorf("the loader refused the module with %s (%s), want exportedHandlers %v", a.Error.Code, a.Error.Message, want)
	}
	if a.ExportedHandlers == nil || !slices.Equal(a.ExportedHandlers, want) {
		return fmt.Errorf("exportedHandlers %v, want exactly %v (in vocabulary order, spec/runtime-v1.md §7.3)", a.ExportedHandlers, want)
	}
	return nil
}

// verifyLoadError: the answer is the load error code.
func verifyLoadError(a *loadAnswer, code string) error {
	if a.Error == nil {
		return fmt.Errorf("the loader answered exportedHandlers %v, want the load error %s", a.ExportedHandlers, code)
	}
	if a.Error.Code != code {
		return fmt.Errorf("the loader refused with %s (%s), want %s (spec/runtime-v1.md §1.3)", a.Error.Code, a.Error.Message, code)
	}
	return nil
}

const jsModule = artifact.MediaTypeJavaScriptModule

// fetchOnly exports only fetch (check 5).
var fetchOnly = []byte("export default {\n  async fetch(request, env, ctx) {\n    return new Response(\"fetch only\");\n  },\n};\n")

// broken's default-export object literal is never closed (check 4).
var broken = []byte("export default {\n  async fetch(request, env, ctx) {\n    return new Response(\"never closed\");\n  },\n")

func (r *Run) loader() (*Loader, error) {
	if r.o.Loader == nil {
		return nil, unmeasured("no loader endpoint given: checks 1–5 need the host's loader adapter (spec/runtime-v1.md §7)")
	}
	return r.o.Loader, nil
}

func checkLoadExports(ctx context.Context, r *Run) error {
	l, err := r.loader()
	if err != nil {
		return err
	}
	a, err := l.load(ctx, "index.js", []string{"fetch", "scheduled", "queue"}, []loadModule{{"index.js", jsModule, ProbeSource}})
	if err != nil {
		return err
	}
	return verifyExports(a, []string{"fetch", "scheduled", "queue"})
}

func checkLoadMediaType(ctx context.Context, r *Run) error {
	l, err := r.loader()
	if err != nil {
		return err
	}
	a, err := l.load(ctx, "index.js", []string{"fetch"}, []loadModule{{"index.js", jsModule, fetchOnly}, {"page.html", "text/html", []byte("<!doctype html><p>not a module</p>\n")}})
	if err != nil {
		return err
	}
	return verifyLoadError(a, "unsupported_media_type")
}

func checkLoadMainMissing(ctx context.Context, r *Run) error {
	l, err := r.loader()
	if err != nil {
		return err
	}
	a, err := l.load(ctx, "worker.js", []string{"fetch"}, []loadModule{{"index.js", jsModule, fetchOnly}})
	if err != nil {
		return err
	}
	return verifyLoadError(a, "module_not_found")
}

func checkLoadSyntax(ctx context.Context, r *Run) error {
	l, err := r.loader()
	if err != nil {
		return err
	}
	a, err := l.load(ctx, "broken.js", []string{"fetch"}, []loadModule{{"broken.js", jsModule, broken}})
	if err != nil {
		return err
	}
	return verifyLoadError(a, "module_syntax_error")
}

func checkLoadNotExported(ctx context.Context, r *Run) error {
	l, err := r.loader()
	if err != nil {
		return err
	}
	a, err := l.load(ctx, "fetch-only.js", []string{"fetch", "scheduled"}, []loadModule{{"fetch-only.js", jsModule, fetchOnly}})
	if err != nil {
		return err
	}
	return verifyLoadError(a, "handler_not_exported")
}
