package source

// ModuleWorker, WorkerBundle and WorkerDeployment (spec/host-api-v1alpha3.md §6.3).

func (e Edition) moduleWorker() Form {
	return e.build(formSpec{
		kind: "ModuleWorker", dir: "module-worker", role: "identity",
		title: "Module Worker identity",
		description: "The durable, named identity of a single ES-module worker application. Its runtime ABI is part of " +
			"that identity and is spelled out exactly by the worker.runtime@1.0.0 contract listed in providedInterfaces: " +
			"the shape of the module's default export, the signatures of the fetch, scheduled and queue handlers, the " +
			"binding environment, ctx.waitUntil, how exceptions are handled, how bodies stream, the minimum Web API " +
			"surface, and how modules are loaded. A host that supports this Form implements exactly that contract " +
			"digest. A runtime that behaves differently is another contract version and therefore another Form " +
			"version; it is never selected by a compatibility date. Code, configuration and bindings belong to Worker " +
			"Version revisions, and the choice of which versions take traffic belongs to Worker Deployments.",
		desiredTitle: "Desired fields of a Module Worker",
		properties:   M{},
		provides:     []InterfaceRef{iface("worker.runtime"), iface("worker.service")},
		canonical:    M{},
		negatives:    []negative{unexpectedProperty(M{})},
	})
}

func (e Edition) workerBundle() Form {
	// Fixture data: an example committed manifest digest, not a document digest.
	canonical := M{"manifestDigest": "sha256:6a5cbf24f5d0c86479ae13b9d1731a626a1729f01aef65403c5c8ac82ed85f43"}
	return e.build(formSpec{
		kind: "WorkerBundle", dir: "worker-bundle", role: "revision",
		title: "Worker Bundle (immutable module set)",
		description: "An immutable, content-addressed set of modules produced by one worker build. It is identified by " +
			"the digest of the artifact manifest committed through the content-addressed upload API (decision 0012). " +
			"That manifest, not this Form, lists the main module and every additional module with its closed media " +
			"type, exact byte size and sha256 digest, so the bundle's bytes have a single source of truth. Other " +
			"bytes mean another manifest, and another manifest means another bundle.",
		desiredTitle: "Desired fields of a Worker Bundle",
		properties: M{
			"manifestDigest": about(M{"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
				"The digest the host returned when the artifact manifest describing this bundle was committed: "+
					"sha256 over the manifest's RFC 8785 canonical form. It never changes. Before changing anything "+
					"the host loads that manifest and checks it against the artifact contract; a digest the host "+
					"never committed is refused."),
		},
		required:  []string{"manifestDigest"},
		immutable: []string{"/manifestDigest"},
		canonical: canonical,
		negatives: []negative{
			unexpectedProperty(canonical),
			missing(canonical, "manifestDigest"),
			invalid(canonical, "manifestDigest", "sha256:not-a-canonical-manifest-digest"),
		},
	})
}

func (e Edition) workerDeployment() Form {
	canonical := M{
		"versions": []any{M{"weight": 10000, "workerVersion": e.ref("WorkerVersion", "worker-version")}},
		"worker":   e.ref("ModuleWorker", "module-worker"),
	}
	return e.build(formSpec{
		kind: "WorkerDeployment", dir: "worker-deployment", role: "deployment",
		title: "Worker Deployment (traffic split)",
		description: "Chooses which Worker Versions of a single Module Worker receive traffic, and how much each " +
			"receives. Weights are basis points and the entries must add up to exactly 10000; the host checks that " +
			"total, because a schema cannot add values together. Rolling back means changing weights, never editing " +
			"a revision.",
		desiredTitle: "Desired fields of a Worker Deployment",
		properties: M{
			"versions": about(array(
				closed(M{
					"weight":        about(integer(1, 10000), "Share of traffic in basis points, from 1 to 10000."),
					"workerVersion": about(e.relationTo("WorkerVersion"), "The Worker Version that receives this share."),
				}, "weight", "workerVersion"),
				"minItems", 1, "maxItems", 8, "uniqueItems", true),
				"The Worker Versions currently serving, each with its traffic weight in basis points; the weights "+
					"must total exactly 10000."),
			"worker": about(e.relationTo("ModuleWorker"), "The Module Worker whose traffic this deployment controls."),
		},
		required:  []string{"versions", "worker"},
		immutable: []string{"/worker"},
		update:    true,
		canonical: canonical,
		negatives: []negative{
			unexpectedProperty(canonical),
			missing(canonical, "worker"),
			missing(canonical, "versions"),
			badName(canonical, "worker"),
			{"versions", set(canonical, 0, "versions", 0, "weight")},
		},
	})
}
