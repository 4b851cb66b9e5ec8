package ingress

import (
	"net/http"
	"strconv"
)

// Host-generated answers (spec/runtime-v1.md §10.8): short text/plain,
// fixed, with no tenant detail; the reason goes to the log.
const (
	bodyUnknownHost = "404 Not Found: no worker answers this hostname\n"
	bodyNotRunnable = "503 Service Unavailable: this worker is not running; retry later\n"
	bodyNoEngine    = "503 Service Unavailable: workers do not run on this host (no workerd engine); the host serves its control plane only\n"
	bodyTimeout     = "504 Gateway Timeout: the worker did not answer in time\n"
	bodyUnreachable = "503 Service Unavailable: this worker could not be reached; retry later\n"
	bodyTooLarge    = "413 Content Too Large: the request body exceeds 104857600 bytes\n"
	bodyURITooLong  = "414 URI Too Long: the request URL exceeds 8192 bytes\n"
	bodyHeaders     = "431 Request Header Fields Too Large: at most 128 headers, each value at most 8192 bytes\n"
)

// Inbound limits (spec/runtime-v1.md §6, §2.2).
const (
	MaxRequestBytes = 104857600 // maxRequestBytes: 413
	MaxURLBytes     = 8192      // 414
	MaxHeaders      = 128       // 431
	MaxHeaderValue  = 8192      // 431
)

// retryAfterSeconds is the Retry-After of every 503.
const retryAfterSeconds = 1

// answer writes a host-generated answer; the error is the body's write
// (the client went away).
func answer(w http.ResponseWriter, status int, body string) error {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	}
	w.WriteHeader(status)
	_, err := w.Write([]byte(body))
	return err
}
