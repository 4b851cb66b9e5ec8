package artifact

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// The runtime handler vocabulary of worker.runtime@1.0.0 (spec/host-api-v1alpha3.md §6.4, §7.1).
const (
	HandlerFetch     = "fetch"
	HandlerScheduled = "scheduled"
	HandlerQueue     = "queue"
)

var handlerNames = []string{HandlerFetch, HandlerScheduled, HandlerQueue}

// maxAliasDepth bounds `const a = b` chains followed to the object literal.
const maxAliasDepth = 16

// ExportedHandlers parses source as an ES module (JavaScript parser, not
// pattern matching) and returns which of fetch, scheduled, queue (in that
// order, each once) are own properties of its default export object: the
// check behind `handler_not_exported` (spec/host-api-v1alpha3.md §6.4, §6.5).
//
// The default export may be written `export default { ... }` (parentheses
// allowed), `export default worker` or `export { worker as default }` where
// worker is a top-level const/let/var initialised with an object literal
// (directly or through other such identifiers), taking the declaration in
// force where the value is read: at `export default worker`, or at the end
// of the module for the live binding of `export { worker as default }`.
// Assignments and property writes such as `worker.fetch = f` are not
// seen. A property
// counts whether it is a method, a `key: value` pair, a shorthand `{ fetch }`,
// an accessor, or has a string-literal or constant computed key
// (`"fetch"`, `["fetch"]`, `[`fetch`]`); its value is not inspected. Other
// computed keys and spreads (`...base`) are ignored conservatively: handlers
// they might add are not counted. Named exports such as
// `export function fetch` are not on the default export and do not count.
//
// Errors are *Error with an empty Pointer and no handlers:
// RuleModuleSyntax (message names line and column; the cause is the
// *parse.Error), RuleDefaultExportMissing, RuleDefaultExportNotObject (a
// class, function, call, import, re-export, or an identifier that is
// undeclared, uninitialised or read before its declaration runs). A second
// default export is RuleModuleSyntax.
func ExportedHandlers(source []byte) (handlers []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			handlers, err = nil, fail(RuleModuleSyntax, "", "the JavaScript parser failed on this module (%v); check that it is a valid ES module", r)
		}
	}()
	// Copy: the parser appends a NUL byte and must not touch the caller's array.
	buf := make([]byte, len(source), len(source)+1)
	copy(buf, source)
	ast, perr := js.Parse(parse.NewInputBytes(buf), js.Options{})
	if perr != nil {
		return nil, syntaxError(perr, "fix the syntax (the main module must be a JavaScript ES module)")
	}
	m := newModuleScope(ast)
	def, at, err := m.defaultExport()
	if err != nil {
		return nil, err
	}
	obj, err := m.object(def, at, 0)
	if err != nil {
		return nil, err
	}
	return ownHandlers(obj), nil
}

// syntaxError is the RuleModuleSyntax error of a parse failure: line and
// column, the parser's message, then hint.
func syntaxError(err error, hint string) *Error {
	var pe *parse.Error
	if errors.As(err, &pe) {
		return &Error{Rule: RuleModuleSyntax, cause: err, Message: fmt.Sprintf(
			"line %d, column %d: %s; %s", pe.Line, pe.Column, pe.Message, hint)}
	}
	return &Error{Rule: RuleModuleSyntax, cause: err, Message: err.Error() + "; " + hint}
}

// binding is one top-level declaration of a name.
type binding struct {
	at   int      // index of the declaring statement
	what string   // "" for a variable, else e.g. "a function declaration"
	init js.IExpr // initialiser of a variable, may be nil
}

// moduleScope holds the top-level declarations of a module, in order.
type moduleScope struct {
	ast   *js.AST
	names map[string][]binding
}

func newModuleScope(ast *js.AST) *moduleScope {
	m := &moduleScope{ast: ast, names: map[string][]binding{}}
	for i, stmt := range ast.List {
		if ex, ok := stmt.(*js.ExportStmt); ok && ex.Decl != nil {
			if ex.Default {
				m.declare(i, ex.Decl, "the default-exported ")
				continue
			}
			stmt, _ = ex.Decl.(js.IStmt)
		}
		switch s := stmt.(type) {
		case *js.VarDecl, *js.FuncDecl, *js.ClassDecl:
			m.declare(i, s.(js.IExpr), "")
		case *js.ImportStmt:
			if s.Default != nil {
				m.add(string(s.Default), binding{at: i, what: "an imported binding"})
			}
			for _, a := range s.List {
				m.add(string(a.Binding), binding{at: i, what: "an imported binding"})
			}
		}
	}
	return m
}

func (m *moduleScope) add(name string, b binding) { m.names[name] = append(m.names[name], b) }

// declare records the names declaration decl (statement i) binds.
func (m *moduleScope) declare(i int, decl js.IExpr, prefix string) {
	switch d := decl.(type) {
	case *js.VarDecl:
		for _, el := range d.List {
			if v, ok := el.Binding.(*js.Var); ok {
				m.add(string(v.Name()), binding{at: i, init: el.Default})
			}
		}
	case *js.FuncDecl:
		if d.Name != nil {
			m.add(string(d.Name.Name()), binding{at: i, what: prefix + "function declaration"})
		}
	case *js.ClassDecl:
		if d.Name != nil {
			m.add(string(d.Name.Name()), binding{at: i, what: prefix + "class declaration"})
		}
	}
}

// lookup returns what name holds when statement at runs: the last
// initialising declaration at or before it (`var x;` keeps x's value).
// early reports a name declared only after that statement (in its temporal
// dead zone, or still undefined).
func (m *moduleScope) lookup(name string, at int) (b binding, found, early bool) {
	decls := m.names[name]
	if len(decls) == 0 {
		return binding{}, false, false
	}
	var last *binding
	for i := range decls {
		if d := &decls[i]; d.at <= at && (d.init != nil || d.what != "" || last == nil) {
			last = d
		}
	}
	if last == nil {
		return binding{}, true, true
	}
	return *last, true, false
}

// defaultExport returns the default-exported expression (an expression, a
// declaration, or a *js.Var naming the local binding exported as default)
// and the statement index at which its value is read.
func (m *moduleScope) defaultExport() (js.IExpr, int, error) {
	type export struct {
		e  js.IExpr
		at int
	}
	var found []export
	for i, stmt := range m.ast.List {
		ex, ok := stmt.(*js.ExportStmt)
		if !ok {
			continue
		}
		if ex.Default && ex.Decl != nil {
			found = append(found, export{ex.Decl, i})
			continue
		}
		for _, a := range ex.List {
			if exportedName(a) != "default" {
				continue
			}
			if ex.Module != nil {
				return nil, 0, fail(RuleDefaultExportNotObject, "", "the default export is re-exported from module %s; define it in this module as a plain object, e.g. `export default { fetch(request, env, ctx) { ... } }`", ex.Module)
			}
			local := a.Binding
			if a.Name != nil {
				local = a.Name
			}
			// A live binding: read once the whole module has run.
			found = append(found, export{&js.Var{Data: local}, len(m.ast.List)})
		}
	}
	switch len(found) {
	case 0:
		return nil, 0, fail(RuleDefaultExportMissing, "", "the module has no default export; the runtime calls handlers on the default export object, so add `export default { fetch(request, env, ctx) { ... } }`")
	case 1:
		return found[0].e, found[0].at, nil
	}
	return nil, 0, fail(RuleModuleSyntax, "", "the module exports default %d times; a module has at most one default export", len(found))
}

// exportedName is the name an export specifier exports under.
func exportedName(a js.Alias) string {
	b := a.Binding
	if len(b) >= 2 && (b[0] == '"' || b[0] == '\'') {
		if s, ok := decodeJSString(b[1 : len(b)-1]); ok {
			return s
		}
	}
	return string(b)
}

// object resolves e, read by statement at, to the object literal it denotes.
func (m *moduleScope) object(e js.IExpr, at, depth int) (*js.ObjectExpr, error) {
	for {
		g, ok := e.(*js.GroupExpr)
		if !ok {
			break
		}
		e = g.X
	}
	switch x := e.(type) {
	case *js.ObjectExpr:
		return x, nil
	case *js.Var:
		name := string(x.Name())
		b, ok, early := m.lookup(name, at)
		switch {
		case early:
			return nil, fail(RuleDefaultExportNotObject, "", "the default export reads %q before its declaration has run, so it is not an object yet; declare %q above the statement that reads it", name, name)
		case !ok:
			return nil, notObject(fmt.Sprintf("identifier %q, which no top-level const, let or var of this module declares", name))
		case b.what != "":
			return nil, notObject(fmt.Sprintf("%q, %s", name, b.what))
		case b.init == nil:
			return nil, notObject(fmt.Sprintf("%q, a variable declared without an initialiser", name))
		case depth >= maxAliasDepth:
			return nil, notObject(fmt.Sprintf("%q, reached through more than %d variable aliases", name, maxAliasDepth))
		}
		return m.object(b.init, b.at, depth+1)
	}
	return nil, notObject(describe(e))
}

func notObject(what string) *Error {
	return fail(RuleDefaultExportNotObject, "", "the default export is %s, not a plain object literal; the runtime calls handlers on the default export object, so export one: `export default { fetch(request, env, ctx) { ... } }`", what)
}

func describe(e js.IExpr) string {
	switch e.(type) {
	case *js.ClassDecl:
		return "a class"
	case *js.FuncDecl:
		return "a function"
	case *js.ArrowFunc:
		return "an arrow function"
	case *js.CallExpr:
		return "a call expression"
	case *js.NewExpr:
		return "a new expression"
	case *js.LiteralExpr:
		return "a literal"
	case *js.ArrayExpr:
		return "an array"
	}
	return fmt.Sprintf("an expression (%s)", clip(e.String()))
}

// ownHandlers returns the handler names among obj's statically known keys.
func ownHandlers(obj *js.ObjectExpr) []string {
	own := map[string]bool{}
	for _, p := range obj.List {
		if p.Spread {
			continue // may add properties; not counted (conservative)
		}
		var name *js.PropertyName
		if p.Name != nil {
			name = p.Name
		} else if md, ok := p.Value.(*js.MethodDecl); ok {
			name = &md.Name.PropertyName
		}
		if name == nil {
			continue
		}
		if key, ok := propertyKey(name); ok {
			own[key] = true
		}
	}
	out := []string{}
	for _, h := range handlerNames {
		if own[h] {
			out = append(out, h)
		}
	}
	return out
}

// propertyKey returns the static key a property name denotes, if known.
func propertyKey(n *js.PropertyName) (string, bool) {
	if n.Computed != nil {
		switch c := n.Computed.(type) {
		case *js.LiteralExpr:
			if c.TokenType == js.StringToken && len(c.Data) >= 2 {
				return decodeJSString(c.Data[1 : len(c.Data)-1])
			}
		case *js.TemplateExpr:
			if c.Tag == nil && len(c.List) == 0 && len(c.Tail) >= 2 {
				return decodeJSString(c.Tail[1 : len(c.Tail)-1])
			}
		}
		return "", false
	}
	lit := n.Literal
	switch lit.TokenType {
	case js.StringToken:
		if len(lit.Data) >= 2 {
			return decodeJSString(lit.Data[1 : len(lit.Data)-1])
		}
	case js.IdentifierToken: // also keywords and identifier-like strings
		return decodeJSString(lit.Data) // identifiers may hold \u escapes
	}
	return "", false
}

// decodeJSString decodes the body of a JavaScript string literal (or an
// identifier, or a substitution-free template): escapes, surrogate pairs and
// line continuations. ok is false for a malformed escape.
func decodeJSString(b []byte) (string, bool) {
	s := string(b)
	if !strings.ContainsRune(s, '\\') {
		return s, true
	}
	var units []uint16
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r != '\\' {
			units = utf16.AppendRune(units, r)
			continue
		}
		if i >= len(s) {
			return "", false
		}
		r, size = utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case 'n', 't', 'r', 'b', 'f', 'v', '0':
			units = append(units, uint16(simpleEscapes[r]))
		case '\r':
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case '\n', '\u2028', '\u2029': // line continuation
		case 'x', 'u':
			hex, n := "", 2
			switch {
			case r == 'u' && i < len(s) && s[i] == '{':
				end := strings.IndexByte(s[i:], '}')
				if end < 0 {
					return "", false
				}
				hex, n = s[i+1:i+end], end+1
			case r == 'u':
				n = 4
				fallthrough
			default:
				if i+n > len(s) {
					return "", false
				}
				hex = s[i : i+n]
			}
			i += n
			v, err := strconv.ParseUint(hex, 16, 32)
			if err != nil || v > unicode.MaxRune {
				return "", false
			}
			if v <= 0xFFFF {
				units = append(units, uint16(v)) // a surrogate may pair with the next escape
			} else {
				units = utf16.AppendRune(units, rune(v))
			}
		default: // \\, \', \" and any other character stand for themselves
			units = utf16.AppendRune(units, r)
		}
	}
	return string(utf16.Decode(units)), true
}

var simpleEscapes = map[rune]rune{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f', 'v': '\v', '0': 0}
