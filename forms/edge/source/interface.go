package source

// Interface Definition helpers (spec/host-api-v1alpha3.md §7.1).

func interfaceDoc(name, title, description string, ops []any, semantics, limits M, fixtures []any) Interface {
	return Interface{Name: name, Version: contractVersion, Doc: M{
		"apiVersion":  InterfaceAPIVersion,
		"kind":        "InterfaceDefinition",
		"name":        name,
		"version":     contractVersion,
		"title":       title,
		"description": description,
		"operations":  ops,
		"semantics":   semantics,
		"limits":      limits,
		"fixtures":    fixtures,
	}}
}

type idempotency bool

const (
	idempotent    idempotency = true
	notIdempotent idempotency = false
)

// operation is one Interface operation; idempotent is omitted unless true.
func operation(name, description string, in, out M, errs []string, idem idempotency) M {
	op := M{
		"name":         name,
		"description":  description,
		"inputSchema":  root(in),
		"outputSchema": root(out),
		"errors":       list(errs...),
	}
	if idem {
		op["idempotent"] = true
	}
	return op
}

func errs(codes ...string) []string { return codes }

// fixture is a data-only behaviour trace of one or more steps.
func fixture(name string, steps ...any) M { return M{"name": name, "steps": steps} }

// step calls operation with input; kv adds "expected" or "expectedError".
func step(operation string, input M, kv ...any) M {
	return with(M{"operation": operation, "input": input}, kv...)
}
