package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/takoform/takoform/wire"
)

// maxTailError bounds the error answer Tail reads.
const maxTailError = 64 << 10

// Tail opens the stream of one worker's console output and uncaught
// exceptions: newline-delimited JSON records until ctx ends or the host
// closes it. The worker is named by space, name and its Form group (""
// for the host's default). The caller closes the stream. A refusal is a
// *wire.Error (resource_not_found for a worker this tenant does not
// hold), an unreachable host a *TransportError, anything else a
// *ProtocolError.
func (c *Client) Tail(ctx context.Context, space, worker, group string) (io.ReadCloser, error) {
	q := url.Values{"space": {space}, "worker": {worker}}
	if group != "" {
		q.Set("group", group)
	}
	r := &request{op: "tail", method: http.MethodGet, path: wire.TailPath, query: q.Encode()}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url(c.base), nil)
	if err != nil {
		return nil, fmt.Errorf("takoform: tail: build request: %w", err)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", c.bearer)
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &TransportError{Op: r.op, Method: r.method, URL: r.url(c.base), Err: err}
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTailError))
	if err != nil {
		return nil, &TransportError{Op: r.op, Method: r.method, URL: r.url(c.base), Err: err}
	}
	herr, _, perr := c.hostError(r, &response{status: resp.StatusCode, header: resp.Header, body: body})
	if perr != nil {
		return nil, perr
	}
	return nil, herr
}
