package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/spaceid"
	"github.com/takoform/takoform/wire"
)

// Worker names a worker on the host's secret route: its space, Form group
// (apiVersion, e.g. "edge.forms.takoform.com/v1alpha1") and name.
type Worker struct {
	Space, Group, Name string
}

// path is the worker's path below wire.SecretsBase and its query.
func (w Worker) path(op string) (string, string, error) {
	if err := spaceid.Validate(w.Space); err != nil {
		return "", "", fmt.Errorf("takoform: %s: space: %w", op, err)
	}
	if err := form.ValidateName(w.Name); err != nil {
		return "", "", fmt.Errorf("takoform: %s: worker: %w", op, err)
	}
	g, err := groupPath(w.Group)
	if err != nil {
		return "", "", fmt.Errorf("takoform: %s: group: %w", op, err)
	}
	n, err := segment("worker", w.Name)
	if err != nil {
		return "", "", fmt.Errorf("takoform: %s: %w", op, err)
	}
	return wire.SecretsBase + "/workers/" + g + "/" + n, "space=" + queryEscape(w.Space), nil
}

// ListSecrets lists a worker's sensitive variables, never their values
// (GET wire.SecretsBase/workers/…, spec/runtime-v1.md §3.2).
func (c *Client) ListSecrets(ctx context.Context, w Worker) (*wire.SecretList, error) {
	p, q, err := w.path("list secrets")
	if err != nil {
		return nil, err
	}
	r := &request{op: "list secrets", method: http.MethodGet, path: p, query: q}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var l wire.SecretList
	if err := c.decodeAnswer(r, resp, &l, "secret list", "/worker", "/secrets"); err != nil {
		return nil, err
	}
	return &l, nil
}

// SetSecret sets the worker's value for name (PUT …/secrets/{name}).
// value is sent in the body only, never in the URL; it must be UTF-8
// (the host refuses other values: wire.SecretValue).
func (c *Client) SetSecret(ctx context.Context, w Worker, name string, value []byte) (*wire.SecretInfo, error) {
	if !utf8.Valid(value) {
		return nil, errors.New("takoform: set secret: the value is not UTF-8 text (a sensitive value reaches the worker as a JS string); encode binary material, e.g. as base64")
	}
	body, err := json.Marshal(wire.SecretValue{Value: string(value)})
	if err != nil {
		return nil, err
	}
	return c.secret(ctx, w, name, http.MethodPut, "set secret", body)
}

// UnsetSecret removes the worker's value for name (DELETE …/secrets/{name});
// the answer's Set is false, also when there was no value.
func (c *Client) UnsetSecret(ctx context.Context, w Worker, name string) (*wire.SecretInfo, error) {
	return c.secret(ctx, w, name, http.MethodDelete, "unset secret", nil)
}

func (c *Client) secret(ctx context.Context, w Worker, name, method, op string, body []byte) (*wire.SecretInfo, error) {
	p, q, err := w.path(op)
	if err != nil {
		return nil, err
	}
	n, err := segment("name", name)
	if err != nil {
		return nil, fmt.Errorf("takoform: %s: %w", op, err)
	}
	r := &request{op: op, method: method, path: p + "/secrets/" + n, query: q, body: body, mutation: true}
	if body != nil {
		r.ctype = wire.ContentTypeJSON
	}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var info wire.SecretInfo
	if err := c.decodeAnswer(r, resp, &info, "secret", "/name", "/set"); err != nil {
		return nil, err
	}
	return &info, nil
}
