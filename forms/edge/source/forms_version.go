package source

import "fmt"

// WorkerVersion (spec/host-api-v1alpha3.md §6.4): relations, handlers, the open vars map and the
// five capability binding lists.

// bindingNameGrammar is a JavaScript identifier: the grammar of every binding
// instance name, in the Form and in each Binding.
const bindingNameGrammar = "^[A-Za-z_$][A-Za-z0-9_$]*$"

// SensitiveVarNamePattern is the grammar of a requiredSensitiveVars
// entry; forms/edge applies it to names given out of band
// (edge.CheckSensitiveVarName).
const SensitiveVarNamePattern = "^[A-Z][A-Z0-9_]{0,63}$"

// varKeys is the typed key grammar of the open vars map (spec/host-api-v1alpha3.md §6.1).
func varKeys() M {
	return M{
		"type":                   "string",
		"pattern":                "^[A-Za-z][A-Za-z0-9._-]{0,63}$",
		"x-takoform-fieldPolicy": "portable-data-only-v1",
	}
}

const jsonValueMaxDepth = 8

// jsonValueDefs is the $defs chain jsonValueDepth1..8 bounding vars values to
// eight levels, 64 members or items per level, strings of 8192 characters.
func jsonValueDefs() M {
	defs := M{}
	for d := 1; d < jsonValueMaxDepth; d++ {
		next := M{"$ref": fmt.Sprintf("#/$defs/jsonValueDepth%d", d+1)}
		defs[fmt.Sprintf("jsonValueDepth%d", d)] = M{
			"type":                 list("array", "boolean", "null", "number", "object", "string"),
			"additionalProperties": next,
			"items":                next,
			"maxItems":             64,
			"maxLength":            8192,
			"maxProperties":        64,
			"propertyNames":        varKeys(),
		}
	}
	defs[fmt.Sprintf("jsonValueDepth%d", jsonValueMaxDepth)] = M{
		"type":      list("boolean", "null", "number", "string"),
		"maxLength": 8192,
	}
	return defs
}

// bindingList is a binding-list property: instances {name, resource} whose
// resource must provide the Binding's target Interface (spec/host-api-v1alpha3.md §7.3).
func (e Edition) bindingList(b BindingRef, targetKind string, target InterfaceRef, description string) M {
	item := closed(M{
		"name":     with(M{"type": "string", "maxLength": 64}, "pattern", bindingNameGrammar),
		"resource": e.relationVia(targetKind, target),
	}, "name", "resource")
	return about(array(item,
		"default", []any{}, "maxItems", 64, "uniqueItems", true, "x-takoform-binding", b.Name), description)
}

func (e Edition) bindingInstance(name, kind, target string) []any {
	return []any{M{"name": name, "resource": e.ref(kind, target)}}
}

func (e Edition) workerVersion() Form {
	canonical := M{
		"bucketBindings":        e.bindingInstance("MEDIA", "ObjectBucket", "object-bucket"),
		"bundle":                e.ref("WorkerBundle", "worker-bundle"),
		"handlers":              list("fetch"),
		"kvBindings":            e.bindingInstance("CACHE", "EdgeKVNamespace", "edge-kv-namespace"),
		"queueProducerBindings": e.bindingInstance("EVENTS", "AtLeastOnceQueue", "at-least-once-queue"),
		"requiredSensitiveVars": list("API_SIGNING_TOKEN_NAME"),
		"serviceBindings":       e.bindingInstance("AUTH", "ModuleWorker", "auth-worker"),
		"sqliteBindings":        e.bindingInstance("DB", "SQLiteDatabase", "sqlite-database"),
		"vars":                  M{"LOG_LEVEL": "info"},
		"worker":                e.ref("ModuleWorker", "module-worker"),
	}
	if e.beta {
		canonical["assets"] = M{
			"bundle":           e.ref("StaticAssetBundle", "static-asset-bundle"),
			"notFoundHandling": "single_page_application",
			"runWorkerFirst":   true,
		}
	}
	badBindingName := func(field, kind string) negative {
		return negative{kebab(field) + "-binding-name", set(canonical, e.bindingInstance("1binding", kind, "example-target"), field)}
	}
	spec := formSpec{
		kind: "WorkerVersion", dir: "worker-version", role: "revision",
		title: "Worker Version (executable snapshot)",
		description: "An immutable, runnable snapshot of one Module Worker: a bundle, the handlers its module exports, " +
			"non-secret variables, and the typed capability bindings the code may call. Any change produces a new " +
			"Worker Version; traffic only moves through a Worker Deployment. The runtime is deliberately not a field " +
			"here: it is fixed by the worker.runtime@1.0.0 contract that the Module Worker identity provides, so a " +
			"version carries neither a compatibility date nor compatibility flags (decision 0019).",
		desiredTitle: "Desired fields of a Worker Version",
		defs:         jsonValueDefs(),
		properties: M{
			"worker": about(e.relationVia("ModuleWorker", iface("worker.runtime")),
				"The Module Worker identity that owns this version."),
			"bundle": about(e.relationTo("WorkerBundle"),
				"The Worker Bundle holding the exact module bytes this version runs."),
			"handlers": about(array(choice("fetch", "scheduled", "queue"), "minItems", 1, "uniqueItems", true),
				"Event handlers the module exports, drawn from the closed vocabulary of the worker.runtime@1.0.0 "+
					"contract. The host refuses a handler outside that vocabulary, and refuses an attachment whose "+
					"event kind is not listed here."),
			"vars": about(M{
				"type":                 "object",
				"additionalProperties": M{"$ref": "#/$defs/jsonValueDepth1"},
				"default":              M{},
				"maxProperties":        64,
				"propertyNames":        varKeys(),
			}, "Non-secret configuration projected into the module's environment. Sensitive material never "+
				"becomes portable state. When omitted, no variable is projected."),
			"requiredSensitiveVars": about(array(M{"type": "string", "pattern": SensitiveVarNamePattern},
				"default", []any{}, "uniqueItems", true),
				"Names of sensitive values the host must supply to this version out of band. Only the names are "+
					"portable state; the values travel through each host's own sealed channel. When omitted, no "+
					"sensitive value is required."),
			"kvBindings": e.bindingList(binding("module-worker.edge-kv"), "EdgeKVNamespace", iface("edge.kv"),
				"module-worker.edge-kv bindings exposing the edge.kv API under JavaScript identifier names. When "+
					"omitted, the version has no such binding."),
			"bucketBindings": e.bindingList(binding("module-worker.object-bucket"), "ObjectBucket", iface("edge.objects"),
				"module-worker.object-bucket bindings exposing the edge.objects API. When omitted, the version has "+
					"no such binding."),
			"sqliteBindings": e.bindingList(binding("module-worker.sqlite"), "SQLiteDatabase", iface("edge.sql"),
				"module-worker.sqlite bindings exposing the edge.sql API. When omitted, the version has no such "+
					"binding."),
			"queueProducerBindings": e.bindingList(binding("module-worker.queue-producer"), "AtLeastOnceQueue", iface("edge.queue"),
				"module-worker.queue-producer bindings exposing only send and sendBatch. When omitted, the version "+
					"has no such binding."),
			"serviceBindings": e.bindingList(binding("module-worker.service"), "ModuleWorker", iface("worker.service"),
				"module-worker.service bindings exposing the worker.service fetch operation toward another Module "+
					"Worker. When omitted, the version has no such binding."),
		},
		required: []string{"bundle", "handlers", "worker"},
		immutable: []string{"/bucketBindings", "/bundle", "/handlers", "/kvBindings", "/queueProducerBindings",
			"/requiredSensitiveVars", "/serviceBindings", "/sqliteBindings", "/vars", "/worker"},
		accepts: []BindingRef{
			binding("module-worker.edge-kv"), binding("module-worker.object-bucket"), binding("module-worker.sqlite"),
			binding("module-worker.queue-producer"), binding("module-worker.service"),
		},
		canonical: canonical,
		negatives: []negative{
			unexpectedProperty(canonical),
			missing(canonical, "worker"),
			missing(canonical, "bundle"),
			missing(canonical, "handlers"),
			badName(canonical, "worker"),
			badName(canonical, "bundle"),
			{"handlers", set(canonical, "not-a-declared-choice", "handlers", 0)},
			invalid(canonical, "vars", M{"1 invalid key": "value"}),
			{"required-sensitive-vars", set(canonical, "lowercase name", "requiredSensitiveVars", 0)},
			badBindingName("kvBindings", "EdgeKVNamespace"),
			badBindingName("bucketBindings", "ObjectBucket"),
			badBindingName("sqliteBindings", "SQLiteDatabase"),
			badBindingName("queueProducerBindings", "AtLeastOnceQueue"),
			badBindingName("serviceBindings", "ModuleWorker"),
		},
	}
	if e.beta {
		e.addAssets(&spec)
	}
	return e.build(spec)
}

// addAssets adds the optional closed assets attachment of the v1beta1
// WorkerVersion (spec/lane-v1beta1.md §6.4): immutable, and refused with a
// notFoundHandling outside its closed vocabulary.
func (e Edition) addAssets(spec *formSpec) {
	spec.properties["assets"] = about(closed(M{
		"bundle": about(e.relationTo("StaticAssetBundle"),
			"The Static Asset Bundle whose manifest lists the files this version serves."),
		"runWorkerFirst": about(boolean(),
			"Serving order. false: the asset lookup runs first and fetch is invoked only when it misses. true: "+
				"fetch runs first and the lookup is tried only when fetch answered 404."),
		"notFoundHandling": about(choice("none", "single_page_application"),
			"What a missing path does. none: a missing path is a miss. single_page_application: a missing path "+
				"is answered with the bundle's index.html, and a bundle without index.html is refused before "+
				"this version is stored."),
	}, "bundle", "notFoundHandling", "runWorkerFirst"),
		"Static files served beside this version. When omitted, the host performs no asset lookup at all. "+
			"When present, all three members are required. An asset answer wins over the worker's; when both "+
			"miss, the worker's 404 stands. Attaching a bundle grants the module no runtime binding and never "+
			"changes the bundle.")
	spec.immutable = append([]string{"/assets"}, spec.immutable...)
	// reject-assets follows reject-bundle, as in the public family's order.
	var negatives []negative
	for _, n := range spec.negatives {
		negatives = append(negatives, n)
		if n.suffix == "bundle" {
			negatives = append(negatives, negative{"assets", set(spec.canonical, "backend_default", "assets", "notFoundHandling")})
		}
	}
	spec.negatives = negatives
}
