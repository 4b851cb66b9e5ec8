package artifact

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tdewolff/parse/v2"
)

func TestExportedHandlers(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"methods, async method, arrow", `
export default {
  fetch(req, env, ctx) { return new Response("ok"); },
  async scheduled(controller, env, ctx) {},
  queue: async (batch) => { for (const m of batch.messages) m.ack(); },
};`, []string{"fetch", "scheduled", "queue"}},
		{"key value", `const handler = async () => new Response(""); export default { fetch: handler };`, []string{"fetch"}},
		{"shorthand", `async function queue(b) {} function fetch(r) {} export default { queue, fetch };`, []string{"fetch", "queue"}},
		{"string keys", `export default { "fetch": f, 'scheduled'() {}, "qu\u0065ue": q };`, []string{"fetch", "scheduled", "queue"}},
		{"escaped identifier key", `export default { sch\u0065duled() {} };`, []string{"scheduled"}},
		{"constant computed keys", "export default { [\"fetch\"]: f, [`queue`]: q };", []string{"fetch", "queue"}},
		{"dynamic computed key ignored", `const k = "fetch"; export default { [k]: f, ["sched" + "uled"]: s };`, []string{}},
		{"spread ignored", `const base = { fetch() {} }; export default { ...base, queue() {} };`, []string{"queue"}},
		{"accessor counts", `export default { get fetch() { return f; } };`, []string{"fetch"}},
		{"other keys only", `export default { alarm() {}, tail() {}, 1: 2, fetchX: 1 };`, []string{}},
		{"empty object", `export default {};`, []string{}},
		{"parenthesised", `export default ({ fetch() {} });`, []string{"fetch"}},
		{"const identifier", `const worker = { fetch(r) {}, scheduled() {} }; export default worker;`, []string{"fetch", "scheduled"}},
		{"export list before declaration", `export { worker as default }; const worker = { queue() {} };`, []string{"queue"}},
		{"var redeclared", `var worker = {}; var worker = { fetch() {} }; var worker; export default worker;`, []string{"fetch"}},
		{"value at the export", `var worker = { fetch() {} }; export default worker; var worker = { queue() {} };`, []string{"fetch"}},
		{"var alias chain", `var base = { fetch() {} }; var worker = base; export default (worker);`, []string{"fetch"}},
		{"export as default", `const worker = { fetch() {} }; export { worker as default };`, []string{"fetch"}},
		{"export as string default", `const worker = { queue() {} }; export { worker as "default" };`, []string{"queue"}},
		{"exported const as default", `export const worker = { scheduled() {} }; export { worker as default };`, []string{"scheduled"}},
		{"named exports are not handlers", `export function fetch(req) {} export const scheduled = () => {}; export default { queue() {} };`, []string{"queue"}},
		{"imports and other code", `import { helper } from "./lib.js";
// fetch is mentioned in a comment: export default { fetch }
const s = "export default { scheduled }";
export default { async fetch(req) { return helper(req, s); } };`, []string{"fetch"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ExportedHandlers([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestExportedHandlersRefusals(t *testing.T) {
	cases := []struct {
		name, src, rule, text string
	}{
		{"no default export", `export function fetch(req) {} export const queue = 1;`, RuleDefaultExportMissing, "no default export"},
		{"empty module", ``, RuleDefaultExportMissing, "no default export"},
		{"class", `export default class { fetch() {} }`, RuleDefaultExportNotObject, "a class"},
		{"named class", `export default class Worker { fetch() {} }`, RuleDefaultExportNotObject, "a class"},
		{"function", `export default function fetch(req) {}`, RuleDefaultExportNotObject, "a function"},
		{"arrow", `export default async (req) => {}`, RuleDefaultExportNotObject, "an arrow function"},
		{"call", `export default Object.freeze({ fetch() {} })`, RuleDefaultExportNotObject, "a call expression"},
		{"class via identifier", `class Worker {} export default Worker;`, RuleDefaultExportNotObject, "class declaration"},
		{"function via export list", `function w() {} export { w as default };`, RuleDefaultExportNotObject, "function declaration"},
		{"imported", `import worker from "./w.js"; export default worker;`, RuleDefaultExportNotObject, "imported binding"},
		{"re-exported", `export { default } from "./w.js";`, RuleDefaultExportNotObject, "re-exported"},
		{"undeclared", `export default worker;`, RuleDefaultExportNotObject, "no top-level"},
		{"uninitialised", `let worker; export default worker;`, RuleDefaultExportNotObject, "without an initialiser"},
		{"self alias", `var a = a; export default a;`, RuleDefaultExportNotObject, "aliases"},
		{"read before declaration", `export default worker; let worker = { fetch() {} };`, RuleDefaultExportNotObject, "before its declaration"},
		{"alias read before declaration", `const worker = base; const base = { fetch() {} }; export default worker;`, RuleDefaultExportNotObject, "before its declaration"},
		{"two defaults", `export default {}; export default { fetch() {} };`, RuleModuleSyntax, "2 times"},
		{"syntax error", "export default {\n  fetch(req {\n}", RuleModuleSyntax, "line 2, column"},
		{"NUL byte", "export default {}\x00", RuleModuleSyntax, "line 1, column 18"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ExportedHandlers([]byte(c.src))
			if got != nil {
				t.Fatalf("got handlers %q with an error", got)
			}
			wantRule(t, err, c.rule, "")
			if !strings.Contains(err.Error(), c.text) {
				t.Fatalf("message %q lacks %q", err.Error(), c.text)
			}
			if c.rule == RuleModuleSyntax && c.name != "two defaults" {
				var pe *parse.Error
				if !errors.As(err, &pe) {
					t.Fatalf("syntax error does not wrap *parse.Error: %v", err)
				}
			}
		})
	}
}

func TestExportedHandlersKeepsInput(t *testing.T) {
	buf := make([]byte, 0, 64)
	buf = append(buf, "export default { fetch() {} }"...)
	spare := buf[:cap(buf)]
	spare[len(buf)] = 'X'
	if _, err := ExportedHandlers(buf); err != nil {
		t.Fatal(err)
	}
	if spare[len(buf)] != 'X' {
		t.Fatal("ExportedHandlers wrote past the end of its input")
	}
}

func TestDecodeJSString(t *testing.T) {
	for in, want := range map[string]string{
		`fetch`: "fetch", `f\x65tch`: "fetch", `\u{66}etch`: "fetch", `a\'b`: "a'b", `a\
b`: "ab", `\uD83D\uDE00`: "\U0001F600", `\n\t`: "\n\t",
	} {
		got, ok := decodeJSString([]byte(in))
		if !ok || got != want {
			t.Errorf("decodeJSString(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{`\x6`, `\u12`, `\u{110000}`, `\u{66`, `a\`} {
		if _, ok := decodeJSString([]byte(bad)); ok {
			t.Errorf("decodeJSString(%q) accepted", bad)
		}
	}
}

// TestModuleSyntax: a JavaScript module that does not parse is refused
// naming the module, line and column; valid modules and modules of other
// media types pass.
func TestModuleSyntax(t *testing.T) {
	if err := ModuleSyntax("lib.js", MediaTypeJavaScriptModule, []byte("export const x = 1;\n")); err != nil {
		t.Fatalf("a valid module: %v", err)
	}
	if err := ModuleSyntax("notes.txt", MediaTypeText, []byte("export const = ;")); err != nil {
		t.Fatalf("a text module has no syntax: %v", err)
	}
	err := ModuleSyntax("lib.js", MediaTypeJavaScriptModule, []byte("export const x = 1;\nlet = = 2;\n"))
	var ae *Error
	if !errors.As(err, &ae) || ae.Rule != RuleModuleSyntax || !strings.Contains(ae.Message, `module "lib.js": line 2, column `) {
		t.Fatalf("want a module-syntax error naming lib.js and line 2, got %v", err)
	}
}
