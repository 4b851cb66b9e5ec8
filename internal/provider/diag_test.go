package provider

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

// TestEveryHostCodeRendersWithRepair renders every code of the closed
// taxonomy through THE renderer — as a direct answer and as an
// operation's terminal error — and requires the identity block, the code
// with its HTTP status, the retry class and exactly the code's own repair
// sentence (decision 0032: a code without a repair fails the build).
func TestEveryHostCodeRendersWithRepair(t *testing.T) {
	ref := form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "0.1.0", SchemaDigest: "sha256:" + strings.Repeat("ab", 32)}
	id := identity{Type: "takoform_edge_kv_namespace", Space: "Prod North", Name: "cache", Form: &ref}
	for _, code := range wire.Codes() {
		info := wire.Taxonomy[code]
		if strings.TrimSpace(info.Repair) == "" {
			t.Errorf("%s has no repair sentence", code)
			continue
		}
		we := &wire.Error{Code: code, Message: "the host says no", RequestID: "req-1", HostCode: "some_rule"}
		for _, err := range []error{
			we,
			fmt.Errorf("apply: %w", we),
			&client.OperationFailedError{Operation: &wire.Operation{ID: "op_7", Done: true}, Err: we},
		} {
			d := renderError("Cannot create takoform_edge_kv_namespace", err, id)
			if len(d) != 1 {
				t.Fatalf("%s: %d diagnostics", code, len(d))
			}
			detail := d[0].Detail()
			for _, want := range []string{
				"Host: the host says no\n",
				"Resource: takoform_edge_kv_namespace (Prod North/cache)\n",
				"Form: " + ref.String() + "\n",
				"Request: req-1\n",
				"Host reason: some_rule\n",
				fmt.Sprintf("Code: %s (host, HTTP %d)\n", code, info.Status),
				"Retryable: " + yesNo(info.Retryable) + "\n",
			} {
				if !strings.Contains(detail, want) {
					t.Errorf("%s (%T): detail lacks %q:\n%s", code, err, want, detail)
				}
			}
			if !strings.HasSuffix(detail, "\n"+info.Repair) {
				t.Errorf("%s (%T): detail does not end with its repair sentence:\n%s", code, err, detail)
			}
			if strings.Count(detail, info.Repair) != 1 {
				t.Errorf("%s: the repair sentence appears %d times", code, strings.Count(detail, info.Repair))
			}
			if _, ok := err.(*client.OperationFailedError); ok && !strings.Contains(detail, "Operation: op_7\n") {
				t.Errorf("%s: an operation's error does not name the operation:\n%s", code, detail)
			}
		}
	}
}

// TestEveryDiagnosticEndsInARepair: provider codes, protocol-invalid
// answers, transport failures and plain errors all end in one repair
// sentence after a Code line.
func TestEveryDiagnosticEndsInARepair(t *testing.T) {
	for code, repair := range ProviderRepairs {
		if !strings.HasPrefix(string(code), "takoform.provider/") || strings.TrimSpace(repair) == "" {
			t.Errorf("provider code %q: outside the takoform.provider/ namespace or without a repair", code)
		}
		detail := renderError("Refused", errors.New("because"), identity{Type: "takoform_x", Space: "s", Name: "n", Code: code})[0].Detail()
		if !strings.HasSuffix(detail, "Code: "+string(code)+"\n"+repair) {
			t.Errorf("%s renders:\n%s", code, detail)
		}
	}
	for _, err := range []error{
		&client.ProtocolError{Op: "read", Reason: "bad echo", Err: errors.New("uid differs")},
		&client.TransportError{Op: "apply", Err: errors.New("connection refused"), Mutation: true},
		errors.New("something unexpected"),
		&wire.Error{Code: "no_such_code", Message: "?"},
	} {
		detail := renderError("Refused", err, identity{Type: "takoform_x"})[0].Detail()
		lines := strings.Split(detail, "\n")
		last, code := lines[len(lines)-1], ""
		for _, l := range lines {
			if strings.HasPrefix(l, "Code: ") {
				code = strings.TrimPrefix(l, "Code: ")
			}
		}
		if code == "" || ProviderRepairs[Code(code)] != last {
			t.Errorf("%T renders without a provider code and its repair:\n%s", err, detail)
		}
	}
}

// TestEveryCodeHasARepair: the Code constants of diag.go and the
// ProviderRepairs table name the same codes, so a code the compiler lets a
// diagnostic use always renders its repair.
func TestEveryCodeHasARepair(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "diag.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[Code]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v, ok := spec.(*ast.ValueSpec)
			if !ok {
				continue
			}
			if typ, ok := v.Type.(*ast.Ident); !ok || typ.Name != "Code" {
				continue
			}
			for _, val := range v.Values {
				lit, ok := val.(*ast.BasicLit)
				if !ok {
					t.Fatalf("a Code constant that is not a literal: %#v", val)
				}
				code, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				declared[Code(code)] = true
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("diag.go declares no Code constant")
	}
	for code := range declared {
		if _, ok := ProviderRepairs[code]; !ok {
			t.Errorf("%s has no repair sentence", code)
		}
	}
	for code := range ProviderRepairs {
		if !declared[code] {
			t.Errorf("%s has a repair but no constant", code)
		}
	}
}

func TestHostReasonRefinesTheRepair(t *testing.T) {
	for reason, repair := range HostReasonRepairs {
		err := wire.Errorf(wire.UnsupportedCapability, "refused").WithHostCode(reason)
		detail := renderError("Refused", err, identity{Type: "takoform_x"})[0].Detail()
		if !strings.HasSuffix(detail, repair) || !strings.Contains(detail, "Host reason: "+reason) {
			t.Errorf("%s: detail does not end in its repair:\n%s", reason, detail)
		}
	}
	plain := renderError("Refused", wire.Errorf(wire.UnsupportedCapability, "refused").WithHostCode("something_else"), identity{})[0].Detail()
	if !strings.HasSuffix(plain, wire.Taxonomy[wire.UnsupportedCapability].Repair) {
		t.Errorf("an unrefined host reason must keep the code's repair:\n%s", plain)
	}
}

// TestRevisionDeleteNamesCreateBeforeDestroy: a revision's delete refused
// as dependency_in_use (under our host's reason or none) ends in the
// lifecycle repair; another resource's, or a revision's other refusal,
// keeps its code's repair.
func TestRevisionDeleteNamesCreateBeforeDestroy(t *testing.T) {
	pinned := wire.Errorf(wire.DependencyInUse, "still referenced").WithHostCode("relation_pinned")
	bare := wire.Errorf(wire.DependencyInUse, "still referenced")
	for _, err := range []error{pinned, bare, &client.OperationFailedError{Err: pinned}} {
		detail := renderError("Cannot delete", err, identity{Type: "takoform_worker_version", RevisionDelete: true})[0].Detail()
		if !strings.HasSuffix(detail, "Code: dependency_in_use (host, HTTP 409)\nRetryable: no\n"+RevisionDeleteRepair) {
			t.Errorf("a revision's refused delete (%v) does not end in the lifecycle repair:\n%s", err, detail)
		}
	}
	for _, tc := range []struct {
		err      *wire.Error
		revision bool
	}{{pinned, false}, {wire.Errorf(wire.GenerationConflict, "moved"), true}} {
		detail := renderError("Cannot delete", tc.err, identity{Type: "takoform_x", RevisionDelete: tc.revision})[0].Detail()
		if !strings.HasSuffix(detail, wire.Taxonomy[tc.err.Code].Repair) || strings.Contains(detail, "create_before_destroy") {
			t.Errorf("%s (revision %v) lost its code's repair:\n%s", tc.err.Code, tc.revision, detail)
		}
	}
}
