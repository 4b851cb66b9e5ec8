// Package loader is the loader adapter takoform.runtime-abi-loader@v1
// (spec/runtime-v1.md §7): an HTTP handler a runtime conformance run posts
// bundles to, answering each with the exported handler set or the load
// refusal the engine gives (engine.Load, the load path of version apply
// and activation, spec/runtime-v1.md §1.4). Test-only: the host serves it
// only under --conformance-probe, on a loopback listener.
package loader

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/host/runtime/engine"
)

// Protocol is the protocol member every load request carries.
const Protocol = "takoform.runtime-abi-loader@v1"

// MaxRequestBytes caps a load request's body (spec/runtime-v1.md §7.3).
const MaxRequestBytes = 16 << 20

// maxConcurrent bounds the loads the adapter runs at once; more wait.
const maxConcurrent = 2

// Handler serves load requests on its whole URL (the runner appends
// nothing): POST only, JSON, at most MaxRequestBytes. Make one with New.
type Handler struct {
	bin   string // the workerd binary every load runs on
	token string // the bearer token each request must carry, "" for none
	log   *slog.Logger
	slots chan struct{}
}

// New returns a Handler loading on the workerd binary bin; token "" requires
// none; log (nil: discarded) gets engine failures.
func New(bin, token string, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{bin: bin, token: token, log: log, slots: make(chan struct{}, maxConcurrent)}
}

// module is one module of a request (spec/runtime-v1.md §7.2).
type module struct {
	Name          *string `json:"name"`
	MediaType     *string `json:"mediaType"`
	ContentBase64 *string `json:"contentBase64"`
}

// request is a load request's body (spec/runtime-v1.md §7.2).
type request struct {
	Protocol         string   `json:"protocol"`
	MainModule       *string  `json:"mainModule"`
	DeclaredHandlers []string `json:"declaredHandlers"`
	Modules          []module `json:"modules"`
	AuxiliaryModules []module `json:"auxiliaryModules"`
}

// ServeHTTP answers one load request (spec/runtime-v1.md §7.3): 200
// {"exportedHandlers": [...]} or 422 {"error": {"code", "message"}}; a
// request that is not a load request gets a text/plain 400, 401, 405, 413
// or 415 that carries neither member; an engine that could not run, 503.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.serve(w, r); err != nil {
		h.log.Debug("loader adapter: answer not written", "err", err)
	}
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return plain(w, http.StatusMethodNotAllowed, "the loader adapter takes POST only")
	}
	if h.token != "" {
		want := "Bearer " + h.token
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			return plain(w, http.StatusUnauthorized, "the loader adapter requires its bearer token")
		}
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return plain(w, http.StatusUnsupportedMediaType, "a load request is application/json")
	}
	var req request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return plain(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a load request is at most %d bytes", MaxRequestBytes))
		}
		return plain(w, http.StatusBadRequest, "the body is not a load request: "+err.Error())
	}
	if dec.More() {
		return plain(w, http.StatusBadRequest, "the body is not a load request: data after the JSON object")
	}
	if req.Protocol != Protocol {
		return plain(w, http.StatusBadRequest, fmt.Sprintf("protocol %q is not %s", req.Protocol, Protocol))
	}
	if req.MainModule == nil || req.Modules == nil {
		return plain(w, http.StatusBadRequest, "a load request needs mainModule and modules")
	}
	metas, err := shapes(req)
	if err != nil {
		return plain(w, http.StatusBadRequest, err.Error())
	}
	// spec/runtime-v1.md §7.4: steps 1–2 run before any bytes are decoded.
	if err := engine.CheckModules(metas, *req.MainModule); err != nil {
		return h.answer(w, nil, err)
	}
	mods := make([]engine.Module, len(metas))
	for i, m := range append(append([]module(nil), req.Modules...), req.AuxiliaryModules...) {
		data, err := base64.StdEncoding.Strict().DecodeString(*m.ContentBase64)
		if err != nil {
			return h.answer(w, nil, &artifact.LoadError{Code: artifact.LoadModuleSyntaxError, Message: fmt.Sprintf("module %q: contentBase64 is not standard padded base64: %v", *m.Name, err)})
		}
		mods[i] = engine.Module{Name: metas[i].Name, MediaType: metas[i].MediaType, Data: data}
	}
	select {
	case h.slots <- struct{}{}:
	case <-r.Context().Done():
		return r.Context().Err()
	}
	defer func() { <-h.slots }()
	handlers, err := engine.Load(context.WithoutCancel(r.Context()), h.bin, mods, *req.MainModule, req.DeclaredHandlers)
	return h.answer(w, handlers, err)
}

// shapes checks each module has its members and a unique name, and
// returns names and media types; auxiliary modules follow the modules,
// carried whatever media type they state (spec/runtime-v1.md §1.3 step 2).
func shapes(req request) ([]engine.ModuleMeta, error) {
	var metas []engine.ModuleMeta
	seen := map[string]bool{}
	for _, list := range []struct {
		field string
		mods  []module
	}{{"modules", req.Modules}, {"auxiliaryModules", req.AuxiliaryModules}} {
		for i, m := range list.mods {
			if m.Name == nil || m.MediaType == nil || m.ContentBase64 == nil {
				return nil, fmt.Errorf("%s[%d] needs name, mediaType and contentBase64", list.field, i)
			}
			if strings.HasPrefix(*m.Name, engine.ReservedPrefix) {
				return nil, fmt.Errorf("%s[%d]: module names starting with %q are the host's", list.field, i, engine.ReservedPrefix)
			}
			if seen[*m.Name] {
				return nil, fmt.Errorf("%s[%d]: module %q is listed twice", list.field, i, *m.Name)
			}
			seen[*m.Name] = true
			mt := *m.MediaType
			if list.field == "auxiliaryModules" {
				mt = engine.AuxiliaryMediaType
			}
			metas = append(metas, engine.ModuleMeta{Name: *m.Name, MediaType: mt})
		}
	}
	return metas, nil
}

// answer writes a load's outcome.
func (h *Handler) answer(w http.ResponseWriter, handlers []string, err error) error {
	var le *artifact.LoadError
	switch {
	case err == nil:
		if handlers == nil {
			handlers = []string{}
		}
		return writeJSON(w, http.StatusOK, map[string]any{"protocol": Protocol, "exportedHandlers": handlers})
	case errors.As(err, &le):
		return writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"protocol": Protocol, "error": map[string]string{"code": le.Code, "message": le.Message}})
	default:
		h.log.Error("loader adapter: the engine could not load", "err", err)
		return plain(w, http.StatusServiceUnavailable, "the engine could not run this load; see the host's log")
	}
}

// writeJSON writes v as the answer; an error is the client gone.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}

// plain writes a text/plain answer; an error is the client gone.
func plain(w http.ResponseWriter, status int, msg string) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write([]byte(msg + "\n"))
	return err
}
