package runtimeabi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxAnswerBytes bounds a probe answer the checks read whole.
const maxAnswerBytes = 1 << 20

// Worker is how a run reaches the worker base URL W (spec/runtime-v1.md
// §8.3): every probe route is W's path followed by /abi/ROUTE.
type Worker struct {
	base *url.URL
	via  string
	http *http.Client
}

// NewWorker checks base (an absolute http or https URL with no userinfo,
// query or fragment; spec/runtime-v1.md §8.1) and returns its Worker.
// via, when set, is a HOST:PORT every request is sent to in plain HTTP
// with W's hostname kept in Host: an ingress a client cannot resolve W's
// name to (spec/runtime-v1.md §10.1: `.localhost` names may go to DNS).
// roots, when set, are the CAs an https W is trusted with.
func NewWorker(base, via string, roots *x509.CertPool) (*Worker, error) {
	u, err := url.Parse(base)
	switch {
	case err != nil:
		return nil, fmt.Errorf("worker URL %q: %v", base, err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return nil, fmt.Errorf("worker URL %q: want an absolute http(s) URL, e.g. https://ep-0123456789abcdef.workers.takoform.localhost/", base)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("worker URL %q: userinfo, query and fragment are not allowed (spec/runtime-v1.md §8.1); a path prefix is", base)
	}
	if via != "" {
		if _, _, err := net.SplitHostPort(via); err != nil {
			return nil, fmt.Errorf("ingress address %q: want HOST:PORT (%v)", via, err)
		}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ForceAttemptHTTP2 = false
	t.MaxIdleConnsPerHost = 16
	if roots != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return &Worker{base: u, via: via, http: &http.Client{Transport: t, Timeout: 0}}, nil
}

// URL is W as given.
func (w *Worker) URL() string { return w.base.String() + "/" }

// request builds a request for route (with its query, e.g. "kv?key=…").
func (w *Worker) request(ctx context.Context, method, route string, body io.Reader) (*http.Request, error) {
	u := *w.base
	path, query, _ := strings.Cut(route, "?")
	u.Path += "/abi/" + path
	u.RawQuery = query
	host := u.Host
	if w.via != "" {
		u.Scheme, u.Host = "http", w.via
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Host = host
	return req, nil
}

// answer is one probe answer read whole.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
	// BodyErr is how reading the body to its end failed (nil: a clean end).
	BodyErr error
	Took    time.Duration
}

// do sends one request and reads its answer whole (a body error is
// recorded, not returned: check 8 judges it). Errors: the request was not
// answered.
func (w *Worker) do(ctx context.Context, method, route, contentType string, body []byte) (*answer, error) {
	var r io.Reader
	if body != nil {
		r = strings.NewReader(string(body))
	}
	req, err := w.request(ctx, method, route, r)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	start := time.Now()
	resp, err := w.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, route, err)
	}
	defer resp.Body.Close()
	b, berr := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	return &answer{Status: resp.StatusCode, Header: resp.Header, Body: b, BodyErr: berr, Took: time.Since(start)}, nil
}

// WaitReady polls GET W/abi/health every 250 ms until our probe answers
// (a new deployment starts serving within seconds; spec/runtime-v1.md
// §9.4) or within expires; the error carries the last answer.
func (w *Worker) WaitReady(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	last := "no answer"
	for {
		a, err := w.do(ctx, "GET", "health", "", nil)
		if err == nil {
			if _, err := probeJSON(a, 200); err == nil {
				return nil // a probe answers (check 7 judges what it says)
			}
			last = fmt.Sprintf("HTTP %d %s", a.Status, abbreviate(a.Body))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the probe at %s did not answer GET /abi/health within %s; last: %s", w.URL(), within, last)
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
	}
}
