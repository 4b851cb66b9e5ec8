package source

// Attachments (spec/host-api-v1alpha3.md §6.3, §6.5): WorkerCustomDomain, WorkerEndpoint,
// WorkerCronTrigger, QueueConsumer.

func (e Edition) runtimeWorker(description string) M {
	return about(e.relationVia("ModuleWorker", iface("worker.runtime")), description)
}

func (e Edition) workerCustomDomain() Form {
	canonical := M{"hostname": "app.portable-conformance.invalid", "worker": e.ref("ModuleWorker", "module-worker")}
	return e.build(formSpec{
		kind: "WorkerCustomDomain", dir: "worker-custom-domain", role: "attachment",
		title: "Worker Custom Domain (hostname attachment)",
		description: "Connects one DNS hostname to a Module Worker so that the worker's active deployment answers " +
			"that hostname over HTTPS. Inbound activation is modelled as an attachment, never a binding; deleting " +
			"the attachment releases the hostname and leaves the worker in place. Because a hostname belongs to DNS " +
			"rather than to this host's naming scheme, it is CANONICALIZED before it is compared or stored: a " +
			"trailing root dot is dropped and ASCII letters are lowercased. Within one tenant, across all of its " +
			"spaces, a canonical hostname is served by AT MOST ONE attachment. An attachment claiming a hostname " +
			"that a live attachment already serves is refused before anything is changed; once the holder is " +
			"released, the claim can be made (decision 0026).",
		desiredTitle: "Desired fields of a Worker Custom Domain",
		properties: M{
			"hostname": about(with(textMax(253), "pattern",
				`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+\.?$`),
				"The dotted DNS hostname served by this attachment; changing it replaces the attachment. The "+
					"pattern accepts the spellings DNS treats as the same name, uppercase letters and a trailing root "+
					"dot, because the host canonicalizes them instead of refusing them. It accepts no non-ASCII byte, "+
					"so an internationalized name is written as its A-label."),
			"worker": e.runtimeWorker("The Module Worker answering on this hostname."),
		},
		required:  []string{"hostname", "worker"},
		immutable: []string{"/hostname", "/worker"},
		canonical: canonical,
		negatives: []negative{
			unexpectedProperty(canonical),
			missing(canonical, "worker"),
			missing(canonical, "hostname"),
			badName(canonical, "worker"),
			invalid(canonical, "hostname", "not a hostname"),
		},
	})
}

const (
	assignedHostname = `[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+`
)

func (e Edition) workerEndpoint() Form {
	canonical := M{"worker": e.ref("ModuleWorker", "module-worker")}
	return e.build(formSpec{
		kind: "WorkerEndpoint", dir: "worker-endpoint", role: "attachment",
		title: "Worker Endpoint (host-assigned address)",
		description: "Makes one Module Worker reachable over HTTPS at an address chosen by the HOST: no customer " +
			"domain and no DNS owned by the author are involved. The desired state names the worker and nothing " +
			"more. The author asks to be reachable; where the address lives is the host's decision, just like its " +
			"accounts, regions and vendor subdomains. Requests to the address run the fetch handler of the worker's " +
			"ACTIVE DEPLOYMENT, so promoting or rolling back changes what answers without re-applying the endpoint " +
			"and without moving the address. The scheme is always https and the path root is `/`; a host may not " +
			"decline TLS, because an address reachable only in plaintext would be a different promise from the one " +
			"this Form makes. Each worker has AT MOST ONE endpoint: a second would give one service two addresses " +
			"with nothing saying which is canonical, so it is refused. The assigned address is published as " +
			"outputs. A portable author may rely on a value being returned, on its scheme being https and on it " +
			"reaching the active deployment, and on nothing about its SHAPE: the subdomain, the apex and the label " +
			"length are host detail that portable configuration must never parse or rebuild. The address is " +
			"IMMUTABLE for as long as the endpoint's attachment UID lives. Deployment promotion, status refresh, " +
			"internal placement changes and backend migrations MUST NOT change it; a host that has to change the " +
			"address deletes the endpoint, and the author creates a new one, which is a new attachment with a new UID.",
		desiredTitle: "Desired fields of a Worker Endpoint",
		properties: M{
			"worker": e.runtimeWorker("The Module Worker whose active deployment answers at the assigned address; " +
				"changing it replaces the endpoint."),
		},
		required:  []string{"worker"},
		immutable: []string{"/worker"},
		output: with(closed(M{
			"hostname": about(with(textMax(253), "pattern", "^"+assignedHostname+"$"),
				"The DNS hostname the host assigned to this endpoint, in canonical form: lowercase and without a "+
					"trailing root dot. The pattern accepts only that form, so the rule and the grammar agree. An "+
					"author-supplied hostname accepts variant spellings because the host canonicalizes it; an "+
					"assigned name has no earlier spelling to keep. The value is IMMUTABLE for the life of this "+
					"endpoint's attachment UID: deployment promotion, status refresh, internal placement changes and "+
					"backend migrations leave it unchanged, so a consumer may store it; a host that must move the "+
					"address deletes the endpoint and the author creates another. The VALUE may be read and passed "+
					"along portably; its SHAPE is host detail, so portable configuration never parses it, never "+
					"expects a particular suffix, and never derives it from the resource name."),
			"url": about(with(textMax(264), "pattern", "^https://"+assignedHostname+"/$"),
				"The absolute HTTPS URL of the endpoint's path root: exactly `https://`, then the assigned "+
					"hostname, then `/`. The Form fixes the scheme and the root path; there is no plaintext address "+
					"and no port, so a consumer appends deeper paths to this value instead of deriving an origin. "+
					"It accepts exactly the hostnames the hostname member accepts and stays immutable for exactly as "+
					"long, because it is made from that hostname."),
		}, "hostname", "url"),
			"title", "Published outputs of a Worker Endpoint",
			"description", "Values the host computes and publishes in status.outputs. A conforming host returns "+
				"every member and nothing else; the object is closed."),
		canonical: canonical,
		negatives: []negative{
			unexpectedProperty(canonical),
			missing(canonical, "worker"),
			badName(canonical, "worker"),
		},
	})
}

const cronField = `(?:\*(?:/[0-9]{1,2})?|[0-9]{1,2}(?:-[0-9]{1,2}(?:/[0-9]{1,2})?)?)`

// cronPattern bounds the shape of five space-separated comma lists; the host
// also parses values (spec/host-api-v1alpha3.md §6.5).
const cronPattern = `^` + cronField + `(?:,` + cronField + `)*(?: ` + cronField + `(?:,` + cronField + `)*){4}$`

func (e Edition) workerCronTrigger() Form {
	canonical := M{"cron": "*/5 * * * *", "worker": e.ref("ModuleWorker", "module-worker")}
	return e.build(formSpec{
		kind: "WorkerCronTrigger", dir: "worker-cron-trigger", role: "attachment",
		title: "Worker Cron Trigger (UTC schedule attachment)",
		description: "Connects one cron schedule to a Module Worker and calls its scheduled handler on every match. " +
			"Schedules are evaluated in UTC only. There is no timezone field, so two hosts never fire the same " +
			"trigger at different instants, and daylight-saving changes never skip or repeat an hour. The " +
			"expression has five fields separated by single spaces: minute 0-59, hour 0-23, day-of-month 1-31, " +
			"month 1-12 and day-of-week 0-6 where 0 is Sunday. Each field is a comma-separated list whose items are " +
			"`*`, a literal, a range `low-high`, `*/step` or `low-high/step`. Not accepted: names, a step after a " +
			"bare literal, a value outside the field's own range, an inverted range, or a step outside 1..span. If " +
			"day-of-month and day-of-week are BOTH restricted, a day matches when either of them selects it; if " +
			"only one is restricted, only that one limits the day. Missed runs are not caught up: when a host " +
			"cannot fire a match, because it was unavailable or the previous invocation is still running, it skips " +
			"that match instead of firing late, so a schedule never builds a backlog. Each match is delivered at " +
			"least once: the handler may run more than once for the same matched minute and must be idempotent. " +
			"An uncaught exception in the handler is a failed invocation reported to host diagnostics; it is not " +
			"retried within the matched minute and never turns into an HTTP response.",
		desiredTitle: "Desired fields of a Worker Cron Trigger",
		properties: M{
			"cron": about(with(textMax(64), "pattern", cronPattern),
				"A portable five-field cron expression evaluated in UTC only. The pattern limits its shape; the "+
					"host also parses it and refuses a value outside its field's range, an inverted range, or a step "+
					"outside the span."),
			"worker": e.runtimeWorker("The Module Worker whose scheduled handler this trigger calls."),
		},
		required:  []string{"cron", "worker"},
		immutable: []string{"/worker"},
		update:    true,
		canonical: canonical,
		negatives: []negative{
			unexpectedProperty(canonical),
			missing(canonical, "worker"),
			missing(canonical, "cron"),
			badName(canonical, "worker"),
			invalid(canonical, "cron", "0 3 * *"),
		},
	})
}

func (e Edition) queueConsumer() Form {
	canonical := M{
		"deadLetterQueue":        e.ref("AtLeastOnceQueue", "dead-letters"),
		"maxBatchSize":           10,
		"maxBatchTimeoutSeconds": 5,
		"maxConcurrency":         4,
		"maxRetries":             3,
		"queue":                  e.ref("AtLeastOnceQueue", "at-least-once-queue"),
		"retryDelaySeconds":      60,
		"worker":                 e.ref("ModuleWorker", "module-worker"),
	}
	queueVia := e.relationVia("AtLeastOnceQueue", iface("edge.queue"))
	return e.build(formSpec{
		kind: "QueueConsumer", dir: "queue-consumer", role: "attachment",
		title: "Queue Consumer (batch consumer attachment)",
		description: "Connects one Module Worker to one At-Least-Once Queue as its batch consumer: the worker's queue " +
			"handler receives batches of messages, and messages that were not acknowledged are delivered again. " +
			"Consuming is inbound activation, so it is an attachment and never a binding. A queue has at most one " +
			"consumer, and a second attachment against the same queue is refused. If the handler returns normally " +
			"without settling anything, the whole batch is acknowledged; if it throws, every message it had not " +
			"already acknowledged is retried. maxRetries counts REDELIVERIES only (the first delivery is not " +
			"counted), so a message is delivered at most 1 + maxRetries times; a message that runs out of retries " +
			"moves to deadLetterQueue when one is declared and is dropped otherwise. The copy on the dead-letter " +
			"queue is a new message there, with a new identity, a new acceptance timestamp and an attempt count " +
			"that restarts at 1 (decision 0020). Because that move resets the attempt count, deadLetterQueue MUST " +
			"NOT lead back: a destination that resolves to the queue this consumer drains, or that closes a cycle " +
			"of any length through the dead-letter graph, is refused before anything is changed, since an " +
			"exhausted message would otherwise circulate forever instead of coming to rest (decision 0026).",
		desiredTitle: "Desired fields of a Queue Consumer",
		properties: M{
			"queue": about(queueVia, "The queue this consumer drains; changing it replaces the attachment."),
			"worker": e.runtimeWorker("The Module Worker whose queue handler receives the batches; changing it " +
				"replaces the attachment."),
			"maxBatchSize": about(integer(1, 100), "Most messages delivered in a single batch."),
			"maxBatchTimeoutSeconds": about(integer(0, 60),
				"Longest wait, in seconds, for a batch to fill before it is delivered anyway."),
			"maxConcurrency": about(integer(1, 250), "Most batch invocations running at the same time."),
			"maxRetries": about(integer(0, 100),
				"How many redeliveries a failed batch gets before its messages go to the dead-letter queue or are "+
					"dropped."),
			"retryDelaySeconds": about(integer(0, 43200),
				"Seconds before a failed batch can be delivered again."),
			"deadLetterQueue": about(queueVia,
				"The queue that receives messages whose retries are exhausted; without it those messages are "+
					"dropped. It must not resolve to the queue this consumer drains, nor close a cycle through other "+
					"consumers' dead-letter queues; the host refuses either before changing anything."),
		},
		required: []string{"maxBatchSize", "maxBatchTimeoutSeconds", "maxConcurrency", "maxRetries", "queue",
			"retryDelaySeconds", "worker"},
		immutable: []string{"/queue", "/worker"},
		update:    true,
		canonical: canonical,
		negatives: []negative{
			unexpectedProperty(canonical),
			missing(canonical, "queue"),
			missing(canonical, "worker"),
			missing(canonical, "maxBatchSize"),
			missing(canonical, "maxBatchTimeoutSeconds"),
			missing(canonical, "maxRetries"),
			missing(canonical, "retryDelaySeconds"),
			missing(canonical, "maxConcurrency"),
			badName(canonical, "queue"),
			badName(canonical, "worker"),
			invalid(canonical, "maxBatchSize", 0),
			invalid(canonical, "maxBatchTimeoutSeconds", -1),
			invalid(canonical, "maxRetries", -1),
			invalid(canonical, "retryDelaySeconds", -1),
			badName(canonical, "deadLetterQueue"),
			invalid(canonical, "maxConcurrency", 0),
		},
	})
}
