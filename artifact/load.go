package artifact

import (
	"context"
	"fmt"
)

// Load refusal codes, in the order their steps run (spec/runtime-v1.md
// §1.3): the hostCode of a WorkerVersion refusal and the code of a loader
// adapter error (spec/runtime-v1.md §7.3).
const (
	LoadModuleNotFound       = "module_not_found"
	LoadUnsupportedMediaType = "unsupported_media_type"
	LoadModuleSyntaxError    = "module_syntax_error"
	LoadHandlerNotExported   = "handler_not_exported"
)

// LoadModule is one module of a bundle handed to an engine load check:
// its manifest name and media type (spec/runtime-v1.md §1.1) and its bytes.
type LoadModule struct {
	Name      string
	MediaType string
	Data      []byte
}

// LoadBundle is what an engine load check loads (spec/runtime-v1.md §1.2):
// the main module's name and every module of the bundle, auxiliary ones
// (application/source-map+json) included. Digest, when set, is the
// manifest digest naming exactly these bytes; a checker may cache its
// verdict by it.
type LoadBundle struct {
	Digest     string
	MainModule string
	Modules    []LoadModule
}

// LoadCheck loads a bundle in the engine and returns its exported handler
// set in vocabulary order (spec/runtime-v1.md §1.2), or a *LoadError with
// the code of the first of steps 1–3 of spec/runtime-v1.md §1.3 that
// fails. Any other error means the engine could not decide (it did not
// start, the host is shutting down): the caller falls back to the static
// check.
type LoadCheck func(ctx context.Context, b LoadBundle) (handlers []string, err error)

// LoadError is a load refusal of spec/runtime-v1.md §1.3: Code is one of
// the Load constants; Message says what failed, in which module, without
// host paths.
type LoadError struct {
	Code    string
	Message string
}

func (e *LoadError) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }
