package source

// worker.service@1.0.0 (spec/host-api-v1alpha3.md §7.1).

func httpHeaders() M { return stringMap(256, 8192, 128) }

func httpMethod() M { return choice("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT") }

func httpStatus() M { return integer(100, 599) }

func workerService() Interface {
	contentLength := M{"type": list("integer", "null"), "minimum": 0, "maximum": 104857600}
	get := func(path string) M {
		return M{"bodyStream": false, "contentLength": 0, "method": "GET", "path": path}
	}
	return interfaceDoc("worker.service", "Worker-to-worker service call (streamed)",
		"Direct, HTTP-shaped invocation of another Module Worker, STREAMING in both directions and consistent "+
			"read-after-write with the invoked worker's own state: a response reflects every effect the callee "+
			"finished before responding. The call never leaves the host. NO BODY IS A MEMBER OF THIS DOCUMENT: the "+
			"document says whether a body exists and what is known of its size, and the bytes travel beside it as "+
			"a stream, so neither side ever buffers a body to produce a value. ABSENT, EMPTY AND UNKNOWN ARE THREE "+
			"STATES. bodyStream false goes with contentLength 0 and means no body at all: the callee's request.body "+
			"is null. bodyStream true means a body exists, and contentLength states what is KNOWN of its size: an "+
			"integer is its exact byte count, null means the writer has no count. bodyStream true with "+
			"contentLength 0 is a PRESENT body that ends at once; with null it is a present body of unknown length. "+
			"None of the three turns into another, in either direction. A COUNT IS NEVER INVENTED AND NEVER "+
			"OBTAINED BY BUFFERING. A side that knows its byte count states it, a side that does not states null, "+
			"and a host MUST NOT read a body to compute a count or put one in place of null: the call completes at "+
			"the response head, where a body still being produced has no count to give. A DECLARED COUNT IS A "+
			"PROMISE. When contentLength is an integer and the stream delivers a different number of bytes, fewer "+
			"or more, the receiving side sees an ERRORED body, reported as request_aborted or response_aborted "+
			"according to the side of the response head it happened on. A host never rewrites the head to fit the "+
			"bytes and never cuts the bytes to fit the head. Under null there is no count to contradict: end of "+
			"stream ends the body and only a transport failure aborts it. WHEN STREAMS START. The callee runs as "+
			"soon as the request head has arrived, before any body byte is read, and the caller's call completes "+
			"as soon as the response head has arrived, before any response byte is read. Neither side waits for "+
			"the other's end of stream: a caller may still be writing while it reads, and a callee may answer "+
			"without consuming its request. BACKPRESSURE travels end to end from reader to writer: a producer "+
			"that outpaces its consumer is suspended, never buffered without bound. CANCELLATION propagates. A "+
			"caller that cancels the response stream cancels the callee's; a callee that cancels the request "+
			"stream fails the caller's remaining writes. Neither is a host fault, a retryable condition or "+
			"backend_unavailable. THE TWO ABORTS ARE DIFFERENT OUTCOMES, since they fall on opposite sides of the "+
			"response head. request_aborted is a request stream that ended before the callee held the whole body: "+
			"the callee sees an errored request body and MAY still answer with a status. response_aborted is the "+
			"same fault AFTER the status was delivered: the caller holds a status and an errored body, and the "+
			"status is never rewritten afterwards. A caller can thus tell a truncated answer from an unanswered "+
			"call. LIMITS ARE FLOORS. maxRequestHeaders, maxRequestHeaderBytes, maxRequestBytes and their response "+
			"counterparts are the portable minimum every conforming host accepts, not a ceiling; a request above "+
			"what the host accepts fails with request_too_large before the callee runs, and a body of unknown "+
			"length that grows past it fails the same way when it does. A CALLEE EXCEPTION IS A COMPLETE "+
			"RESPONSE. An uncaught throw or unhandled rejection in the callee's fetch handler is a host-generated "+
			"500 with a status, headers and a terminated body, never a hung call and never a cut connection, and "+
			"this operation SUCCEEDS with it. A CALL THAT NEVER HAPPENED IS NOT A 500. When the call could not be "+
			"dispatched at all (no active deployment, no fetch handler, callee unreachable) there is no status, "+
			"and the operation FAILS with backend_unavailable; the binding exposes that difference as resolve "+
			"versus reject. The behaviour fixtures address a callee that answers /health with 200 for any method "+
			"and throws on GET /throw.",
		[]any{
			operation("fetch",
				"Calls the target worker's fetch handler with one request and returns its response. Both documents "+
					"carry bodyStream and contentLength, never bytes. bodyStream false with contentLength 0 is no "+
					"body. bodyStream true is a body whose contentLength is its exact byte count when the writer "+
					"knows it and null when not, so a caller still producing its request, or a callee still "+
					"generating its response, states null instead of buffering or guessing. An integer is a promise: "+
					"delivering fewer or more bytes is an abort, not a short body; under null, end of stream ends "+
					"the body. The response document is produced at the response HEAD, so status and headers are "+
					"readable while the body is still being written, which is why no count can be required there. "+
					"request_too_large is refused before the callee runs; request_aborted and response_aborted are "+
					"the two truncations and only the second has a status; backend_unavailable produced none. A "+
					"callee that throws is no error here: it is a 500 in status.",
				closed(M{
					"bodyStream": boolean(), "contentLength": contentLength, "headers": httpHeaders(),
					"method": httpMethod(), "path": text(1, 8192),
				}, "bodyStream", "contentLength", "method", "path"),
				closed(M{
					"bodyStream": boolean(), "contentLength": contentLength, "headers": httpHeaders(),
					"status": httpStatus(),
				}, "bodyStream", "contentLength", "status"),
				errs("request_too_large", "request_aborted", "response_aborted", "backend_unavailable"), notIdempotent),
		},
		M{"consistency": "read_after_write"},
		M{
			"maxRequestBytes": 104857600, "maxRequestHeaderBytes": 16384, "maxRequestHeaders": 64,
			"maxResponseBytes": 104857600, "maxResponseHeaderBytes": 16384, "maxResponseHeaders": 64,
		},
		[]any{
			fixture("fetch-roundtrip-carries-no-body",
				step("fetch", get("/health"), "expected", M{"bodyStream": true, "status": 200})),
			fixture("request-body-of-unknown-length-is-declarable",
				step("fetch", M{"bodyStream": true, "contentLength": nil, "method": "POST", "path": "/health"},
					"expected", M{"bodyStream": true, "status": 200})),
			fixture("callee-uncaught-throw-is-a-complete-500",
				step("fetch", get("/throw"), "expected", M{"bodyStream": true, "status": 500})),
		})
}
