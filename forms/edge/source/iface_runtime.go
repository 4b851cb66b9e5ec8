package source

// worker.runtime@1.0.0 (spec/host-api-v1alpha3.md §7.1): the ES Module Worker runtime ABI.

func (e Edition) workerRuntime() Interface {
	handlers := array(choice("fetch", "scheduled", "queue"), "maxItems", 3, "uniqueItems", true)
	moduleName := text(1, 1024)
	module := func(mediaTypes ...string) M {
		return closed(M{"mediaType": choice(mediaTypes...), "name": moduleName}, "mediaType", "name")
	}
	names := func(maxLen int) M { return array(text(1, maxLen), "maxItems", 256, "uniqueItems", true) }
	handlerErrors := errs("handler_not_declared", "handler_failed", "backend_unavailable")
	jsModule := func(name string) []any {
		return []any{M{"mediaType": "application/javascript+module", "name": name}}
	}
	sourceMap := []any{M{"mediaType": "application/source-map+json", "name": "index.js.map"}}
	return interfaceDoc("worker.runtime", "ES Module Worker runtime ABI",
		"The exact runtime ABI a conforming host gives the code of one Module Worker, and the exact shape that "+
			"code must have. The main module is an ES module whose DEFAULT EXPORT is a plain object; each portable "+
			"handler is an OPTIONAL own property of that object named exactly fetch, scheduled or queue, and every "+
			"handler the Worker Version declares MUST be present there as a callable property: a declared handler "+
			"that is missing fails the version, not the request. Every handler receives three arguments in this "+
			"order: the event value, the binding environment env and the invocation context ctx. A handler may be "+
			"async; a returned promise is awaited. Request and response bodies are STREAMS, never buffered "+
			"strings: a host never makes a handler read the request body before it responds, and streams a "+
			"response body out as the handler produces it. env is a plain object whose own enumerable properties "+
			"are exactly the names the Worker Version declares (every vars key, every requiredSensitiveVars name "+
			"and every binding name) and nothing else portable; a sensitive variable appears under its declared "+
			"name carrying the value the host supplied, and that value never enters portable state. "+
			"ctx.waitUntil(promise) registers work for which the host keeps the isolate alive until the promise "+
			"settles; a rejection goes to host diagnostics only, never alters a response already sent, and never "+
			"turns a successful invocation into a failed one. An uncaught throw or unhandled rejection in fetch "+
			"becomes a HOST-GENERATED 500 response, never a hung request; in scheduled and queue it is a failed "+
			"invocation with the retry rules the relevant contract already states. The ABI is fixed by identity, "+
			"not by a date: a runtime that behaves differently is a different exact contract version, and a Form "+
			"that wants that runtime is a different Form version. Behaviour fixtures run against a conformance "+
			"bundle of two modules: index.js, whose default export has all three handlers, answers GET /health "+
			"with 200, throws on GET /throw, and throws from its queue handler when a message body decodes to "+
			"exactly the ASCII bytes fail; and fetch-only.js, whose default export has fetch alone.",
		[]any{
			operation("loadModule",
				"Loads one Worker Bundle into a fresh isolate. mainModule names the ES module whose default export "+
					"carries the handlers and MUST be one of the entries of modules. modules is the IMPORTABLE "+
					"module graph, and exactly these load: application/javascript+module as an ES module, text/plain "+
					"as decoded UTF-8 text, application/octet-stream as an ArrayBuffer, and application/wasm as a "+
					"COMPILED WebAssembly.Module, never an instance, so imports stay the application's choice. "+
					"auxiliaryModules is what the bundle CARRIES without linking: source-map evidence. Carrying it is no "+
					"error, it is never mainModule, and an import resolving to it fails with unsupported_media_type. "+
					"This ABI version loads no application/json. exportedHandlers is the part of the vocabulary the "+
					"default export exposes as callable own properties; a declared handler the module does not "+
					"export fails with handler_not_exported before traffic arrives. The declaredHandlers enum IS "+
					"this ABI's handler vocabulary: anything outside it is refused.",
				closed(M{
					"auxiliaryModules": array(module("application/source-map+json"), "maxItems", 512, "uniqueItems", true),
					"declaredHandlers": handlers,
					"mainModule":       moduleName,
					"modules": array(module("application/javascript+module", "application/octet-stream",
						"application/wasm", "text/plain"), "minItems", 1, "maxItems", 512, "uniqueItems", true),
				}, "declaredHandlers", "mainModule", "modules"),
				closed(M{"exportedHandlers": handlers}, "exportedHandlers"),
				errs("module_not_found", "unsupported_media_type", "module_syntax_error", "handler_not_exported"),
				idempotent),
			operation("environment",
				"Resolves the env object one invocation receives. Given everything a Worker Version declares, "+
					"propertyNames is the COMPLETE set of env's own enumerable properties, in lexicographic order: "+
					"every vars key, every requiredSensitiveVars name carrying its host-supplied value, and every "+
					"binding name carrying the runtime API its Binding contract projects. Nothing else portable "+
					"appears, so code that reads a property a host added on its own is not portable. The three "+
					"sources share ONE namespace: a name declared twice is refused before the version is stored, "+
					"never silently merged.",
				closed(M{
					"declaredBindingNames":  names(64),
					"declaredSensitiveVars": names(64),
					"declaredVars":          names(256),
				}, "declaredBindingNames", "declaredSensitiveVars", "declaredVars"),
				closed(M{"propertyNames": array(text(1, 256), "maxItems", 768, "uniqueItems", true)}, "propertyNames"),
				errs("environment_name_collision"), idempotent),
			operation("globals",
				"Reports the minimum Web platform surface every conforming runtime offers module code. present is "+
					"the exact portable floor, each member named by its dotted path: a runtime missing any member "+
					"does not implement this contract, and members a runtime adds do not become portable. The timers "+
					"are setTimeout, clearTimeout, setInterval and clearInterval. fetch is the outbound HTTP client "+
					"and the only member here whose calls leave the isolate.",
				empty(),
				closed(M{"present": array(text(1, 128), "minItems", 1, "maxItems", 128, "uniqueItems", true)}, "present"),
				errs(), idempotent),
			operation("fetch",
				"Calls fetch(request, env, ctx) with one HTTP request and returns its response. The handler gets a "+
					"Request and returns a Response or a promise of one; returning anything else, or nothing, is an "+
					"uncaught error. bodyStream says the request body arrives as a ReadableStream the handler may "+
					"consume piece by piece: a conforming host never buffers it into a string before calling the "+
					"handler, and streams the response body back as it is produced. An uncaught throw or unhandled "+
					"rejection becomes a host-generated 500 response, never a hung request and never a cut "+
					"connection without a status; handlerOutcome says which of the two happened.",
				closed(M{"bodyStream": boolean(), "headers": httpHeaders(), "method": httpMethod(), "url": text(1, 8192)},
					"method", "url"),
				closed(M{
					"bodyStream": boolean(), "handlerOutcome": choice("returned", "uncaught"),
					"headers": httpHeaders(), "status": httpStatus(),
				}, "handlerOutcome", "status"),
				errs("handler_not_declared", "request_too_large", "backend_unavailable"), notIdempotent),
			operation("scheduled",
				"Calls scheduled(event, env, ctx) on each match of a Worker Cron Trigger. The event carries "+
					"scheduledTime, the UTC instant the schedule matched in milliseconds since the Unix epoch, and "+
					"cron, the exact five-field UTC expression that matched. The handler returns nothing; a returned "+
					"promise is awaited before the invocation completes, and ctx.waitUntil can extend it further. An "+
					"uncaught throw or unhandled rejection is a FAILED invocation reported to host diagnostics: it "+
					"never becomes an HTTP response and is not retried within the same matched minute.",
				closed(M{"cron": text(1, 64), "scheduledTime": integerFrom(0)}, "cron", "scheduledTime"),
				empty(), handlerErrors, notIdempotent),
			operation("queue",
				"Calls queue(batch, env, ctx) with one message batch from a Queue Consumer attachment. The batch "+
					"carries batchId, the identity every edge.queue settlement operation is scoped to; queue, the "+
					"portable name of the drained At-Least-Once Queue; and messages, an ordered array whose entries "+
					"carry id (the host's stable message identity), timestampMillis (the UTC instant the host "+
					"accepted the message, in milliseconds since the Unix epoch), body (the producer's exact bytes "+
					"in the family's encoded-bytes shape) and attempts (1 on first delivery, plus one per "+
					"redelivery), all as edge.queue defines them. Batch size and timing come from the consumer's "+
					"maxBatchSize and maxBatchTimeoutSeconds. Returning normally without settling anything "+
					"acknowledges the whole batch. An uncaught throw or unhandled rejection RETRIES every message "+
					"not already acknowledged explicitly, under the invoking consumer's maxRetries and "+
					"retryDelaySeconds, so duplicates are visible and handlers must be idempotent.",
				closed(M{
					"batchId": text(1, 256),
					"messages": array(closed(M{
						"attempts": integerFrom(1), "body": e.queueMessageBody(),
						"id": text(1, 256), "timestampMillis": integerFrom(0),
					}, "attempts", "body", "id", "timestampMillis"), "minItems", 1, "maxItems", 100),
					"queue": text(1, 63),
				}, "batchId", "messages", "queue"),
				empty(), handlerErrors, notIdempotent),
			operation("waitUntil",
				"Registers one promise through ctx.waitUntil(promise). The host keeps the isolate alive until that "+
					"promise settles, even after the handler has returned and its response has gone out, and never "+
					"cancels the work to reclaim the isolate sooner. taskOutcome is what the registered promise "+
					"does. Settlement never rewrites a response already sent, and a rejected task never turns a "+
					"successful invocation into a failed one: it is reported to host diagnostics only. Calling "+
					"waitUntil after the isolate has been reclaimed fails with context_expired.",
				closed(M{"taskOutcome": choice("rejected", "resolved")}, "taskOutcome"),
				closed(M{
					"invocationFailed": boolean(), "isolateHeldUntilSettled": boolean(), "responseChanged": boolean(),
				}, "invocationFailed", "isolateHeldUntilSettled", "responseChanged"),
				errs("context_expired"), notIdempotent),
		},
		M{"consistency": "read_after_write", "delivery": "at_least_once", "ordering": "none"},
		M{
			"maxEnvironmentEntries": 256, "maxModulesPerBundleSet": 512, "maxQueueBatchMessages": 100,
			"maxQueueMessageBytes": e.queueMessageBytes(), "maxRequestBytes": 104857600, "maxWaitUntilTasks": 32,
		},
		[]any{
			fixture("declared-handler-must-be-exported",
				step("loadModule", M{
					"declaredHandlers": list("fetch", "scheduled", "queue"), "mainModule": "index.js",
					"modules": jsModule("index.js"),
				}, "expected", M{"exportedHandlers": list("fetch", "scheduled", "queue")}),
				step("loadModule", M{
					"declaredHandlers": list("fetch", "scheduled"), "mainModule": "fetch-only.js",
					"modules": jsModule("fetch-only.js"),
				}, "expectedError", "handler_not_exported")),
			fixture("auxiliary-module-is-carried-never-loaded",
				step("loadModule", M{
					"auxiliaryModules": sourceMap, "declaredHandlers": list("fetch"), "mainModule": "index.js",
					"modules": jsModule("index.js"),
				}, "expected", M{"exportedHandlers": list("fetch", "scheduled", "queue")}),
				step("loadModule", M{
					"auxiliaryModules": sourceMap, "declaredHandlers": list("fetch"), "mainModule": "index.js.map",
					"modules": jsModule("index.js"),
				}, "expectedError", "unsupported_media_type")),
			fixture("globals-minimum-surface",
				step("globals", M{}, "expected", M{"present": list(
					"AbortController", "AbortSignal", "Headers", "ReadableStream", "Request", "Response",
					"TextDecoder", "TextEncoder", "URL", "URLSearchParams", "WritableStream", "clearInterval",
					"clearTimeout", "crypto.getRandomValues", "crypto.subtle.digest", "fetch", "setInterval",
					"setTimeout", "structuredClone")})),
			fixture("environment-projects-exactly-the-declared-names",
				step("environment", M{
					"declaredBindingNames": list("CACHE"), "declaredSensitiveVars": list("API_SIGNING_TOKEN_NAME"),
					"declaredVars": list("LOG_LEVEL"),
				}, "expected", M{"propertyNames": list("API_SIGNING_TOKEN_NAME", "CACHE", "LOG_LEVEL")})),
			fixture("environment-name-collision-refused",
				step("environment", M{
					"declaredBindingNames": list("CACHE"), "declaredSensitiveVars": []any{},
					"declaredVars": list("CACHE"),
				}, "expectedError", "environment_name_collision")),
			fixture("fetch-returns-a-response",
				step("fetch", M{"bodyStream": true, "method": "GET", "url": "https://conformance.invalid/health"},
					"expected", M{"handlerOutcome": "returned", "status": 200})),
			fixture("fetch-uncaught-throw-is-a-host-error-response",
				step("fetch", M{"method": "GET", "url": "https://conformance.invalid/throw"},
					"expected", M{"handlerOutcome": "uncaught", "status": 500})),
			fixture("queue-failure-fails-the-whole-batch",
				step("queue", M{
					"batchId": "conformance-batch-1", "queue": "at-least-once-queue",
					"messages": []any{M{
						"attempts": 1, "body": M{"data": "ZmFpbA==", "encoding": "base64"},
						"id": "message-1", "timestampMillis": 0,
					}},
				}, "expectedError", "handler_failed")),
			fixture("wait-until-rejection-does-not-change-the-response",
				step("waitUntil", M{"taskOutcome": "rejected"}, "expected", M{
					"invocationFailed": false, "isolateHeldUntilSettled": true, "responseChanged": false,
				})),
		})
}
