package artifact

import (
	"fmt"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// ModuleSyntax checks that one module of a bundle parses: a module of
// media type application/javascript+module must be a valid ES module (the
// JavaScript parser ExportedHandlers uses); the other admitted media types
// carry no syntax to check. The host runs it on every JavaScript module of
// a version's bundle, the provider on every local module at plan
// (spec/host-api-v1alpha3.md §6.4).
//
// Errors: *Error with Rule RuleModuleSyntax, an empty Pointer, and a
// Message naming the module, then line and column (1-based), as
// `module "lib.js": line 3, column 7: …; fix the syntax …`.
func ModuleSyntax(name, mediaType string, source []byte) (err error) {
	if mediaType != MediaTypeJavaScriptModule {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fail(RuleModuleSyntax, "", "module %q: the JavaScript parser failed on it (%v); check that it is a valid ES module", name, r)
		}
	}()
	buf := make([]byte, len(source), len(source)+1) // the parser appends a NUL byte
	copy(buf, source)
	if _, perr := js.Parse(parse.NewInputBytes(buf), js.Options{}); perr != nil {
		e := syntaxError(perr, "fix the syntax (every JavaScript module of a bundle must be an ES module)")
		e.Message = fmt.Sprintf("module %q: %s", name, e.Message)
		return e
	}
	return nil
}
