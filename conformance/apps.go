package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

// Module returns an ES module whose default export carries exactly the
// given handlers.
func Module(handlers ...string) []byte {
	var b strings.Builder
	b.WriteString("// conformance worker\nexport default {\n")
	for _, h := range handlers {
		fmt.Fprintf(&b, "  async %s(event, env, ctx) { return new Response(%q); },\n", h, h)
	}
	b.WriteString("};\n")
	return []byte(b.String())
}

// UploadBundle uploads and commits a one-module WorkerBundle as c and
// returns its manifest digest.
func (e *Env) UploadBundle(ctx context.Context, c *client.Client, source []byte) (string, error) {
	m, blobs, err := artifact.Build("index.js", []artifact.ModuleFile{{Name: "index.js", MediaType: artifact.MediaTypeJavaScriptModule, Data: source}})
	if err != nil {
		return "", err
	}
	return c.UploadArtifact(ctx, *m, blobs)
}

// App is a deployed worker: worker, bundle, version and deployment.
type App struct {
	Worker, Bundle, Version, Deployment *wire.Resource
}

// DeployApp creates a ModuleWorker with one bundle and version exporting
// handlers, and a deployment weighting that version 10000.
func (e *Env) DeployApp(ctx context.Context, c *client.Client, handlers ...string) (*App, error) {
	a := &App{}
	var err error
	if a.Worker, err = e.Create(ctx, c, "ModuleWorker", e.Name("worker"), map[string]any{}); err != nil {
		return nil, fmt.Errorf("create worker: %w", err)
	}
	if err := e.AddVersion(ctx, c, a, handlers...); err != nil {
		return nil, err
	}
	if a.Deployment, err = e.Create(ctx, c, "WorkerDeployment", e.Name("deploy"), map[string]any{
		"worker":   e.Rel("ModuleWorker", a.Worker.Metadata.Name),
		"versions": []any{map[string]any{"weight": 10000, "workerVersion": e.Rel("WorkerVersion", a.Version.Metadata.Name)}},
	}); err != nil {
		return nil, fmt.Errorf("create deployment: %w", err)
	}
	return a, nil
}

// AddVersion uploads a bundle exporting handlers and creates a version of
// a.Worker declaring them; a.Bundle and a.Version are replaced.
func (e *Env) AddVersion(ctx context.Context, c *client.Client, a *App, handlers ...string) error {
	digest, err := e.UploadBundle(ctx, c, Module(handlers...))
	if err != nil {
		return fmt.Errorf("upload bundle: %w", err)
	}
	if a.Bundle, err = e.Create(ctx, c, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": digest}); err != nil {
		return fmt.Errorf("create bundle: %w", err)
	}
	hs := make([]any, len(handlers))
	for i, h := range handlers {
		hs[i] = h
	}
	if a.Version, err = e.Create(ctx, c, "WorkerVersion", e.Name("version"), map[string]any{
		"worker": e.Rel("ModuleWorker", a.Worker.Metadata.Name), "bundle": e.Rel("WorkerBundle", a.Bundle.Metadata.Name), "handlers": hs,
	}); err != nil {
		return fmt.Errorf("create version: %w", err)
	}
	return nil
}
