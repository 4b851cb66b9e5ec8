package source

// The five module-worker Bindings (spec/host-api-v1alpha3.md §7.3). Each is held by a revision
// (WorkerVersion), targets one Form kind, and projects target operations.

func (e Edition) bindingDoc(name, title, description, targetKind string, target InterfaceRef, operations ...string) Binding {
	return Binding{Name: name, Version: contractVersion, Doc: M{
		"apiVersion":         BindingAPIVersion,
		"kind":               "BindingDefinition",
		"name":               name,
		"version":            contractVersion,
		"title":              title,
		"description":        description,
		"sourceRole":         "revision",
		"targetInterface":    target,
		"allowedTargetForms": []any{M{"apiVersion": e.Group, "kind": targetKind}},
		"bindingNameGrammar": bindingNameGrammar,
		"runtimeProjection":  M{"operations": list(operations...)},
		"lifecycle":          M{"targetDeletion": "refuse_while_bound"},
	}}
}

func (e Edition) kvBinding() Binding {
	return e.bindingDoc("module-worker.edge-kv", "Module Worker binding to an Edge KV Namespace",
		"Exposes the whole edge.kv runtime API to a Worker Version under one binding name that is a JavaScript "+
			"identifier. The binding grants the capability and the API together; the consumer never receives a "+
			"credential or an endpoint. Runtime surface: env.NAME is an object with the methods get(key), "+
			"getWithMetadata(key), put(key, value, options?), delete(key) and list(options?). A key is a string. A "+
			"VALUE IS BYTES: put takes an ArrayBuffer, a typed array or a string (encoded as UTF-8), and get "+
			"resolves to an ArrayBuffer; the base64 envelope of edge.kv is the wire form, not the JavaScript form. "+
			"Every method returns a promise. For a missing key get resolves to null instead of rejecting, which is "+
			"how the interface's not_found outcome shows up in JavaScript; every other error rejects with an Error "+
			"whose name is the edge.kv error code. Reads are EVENTUALLY CONSISTENT and this binding promises no "+
			"read-your-writes: a get straight after a resolved put from the same isolate may resolve to the "+
			"previous value, or to null, until replication converges.",
		"EdgeKVNamespace", iface("edge.kv"), "get", "getWithMetadata", "put", "delete", "list")
}

func (e Edition) bucketBinding() Binding {
	return e.bindingDoc("module-worker.object-bucket", "Module Worker binding to an Object Bucket",
		"Exposes the whole edge.objects runtime API to a Worker Version under one JavaScript-identifier binding "+
			"name, revealing no credential and no endpoint. Runtime surface: env.NAME is an object with the methods "+
			"head(key), get(key, options?), put(key, body, options?), delete(key), list(options?), "+
			"createMultipartUpload(key, options?), uploadPart(key, uploadId, partNumber, body), "+
			"completeMultipartUpload(key, uploadId, parts) and abortMultipartUpload(key, uploadId), each returning "+
			"a promise. Object bodies STREAM: put and uploadPart take a ReadableStream, an ArrayBuffer or a string, "+
			"and get resolves to an object whose body is a ReadableStream the handler may consume piece by piece. "+
			"A conforming host never needs the whole object in memory, which is what makes the contract's 5 GiB "+
			"ceiling usable. get options carry range for a ranged read and ifMatch or ifNoneMatch for a "+
			"conditional one; put options carry ifMatch, or ifNoneMatch \"*\" to write only when the key is absent. "+
			"get and head resolve to null for a missing key; a failed precondition rejects with an Error named "+
			"precondition_failed, an unsatisfiable range with one named range_not_satisfiable, and any other error "+
			"with an Error named after its edge.objects code. A get, head or list issued after a resolved put or "+
			"delete observes it.",
		"ObjectBucket", iface("edge.objects"),
		"head", "get", "put", "delete", "list",
		"createMultipartUpload", "uploadPart", "completeMultipartUpload", "abortMultipartUpload")
}

func (e Edition) sqliteBinding() Binding {
	if e.beta {
		return e.bindingDoc("module-worker.sqlite", "Module Worker binding to a SQLite Database",
			"Exposes the whole edge.sql runtime API to a Worker Version under one JavaScript-identifier binding "+
				"name, revealing no credential and no connection material. Runtime surface: env.NAME is an object "+
				"with the methods execute(sql, params?), query(sql, params?) and transaction(statements), each "+
				"returning a promise. Each sql is exactly one statement. params is an array of plain edge.sql "+
				"values bound by position: null, a number within the safe-integer range, a string, or an "+
				"ArrayBuffer or typed array for a BLOB (the base64 envelope is the wire form, not the JavaScript "+
				"form). execute and query resolve to {rows, rowsWritten}; query always rolls back, so its "+
				"rowsWritten is 0; transaction resolves to one such result per statement, in statement order, and "+
				"applies all of them or none. A number the contract cannot carry rejects with an Error named "+
				"numeric_out_of_range; every other error rejects with an Error named after its edge.sql code, and "+
				"busy is the retryable one: a caller that retries runs the whole call again.",
			"SQLiteDatabase", iface("edge.sql"), "execute", "query", "transaction")
	}
	return e.bindingDoc("module-worker.sqlite", "Module Worker binding to a SQLite Database",
		"Exposes the whole edge.sql runtime API to a Worker Version under one JavaScript-identifier binding name, "+
			"revealing no credential and no connection material. Runtime surface: env.NAME is an object with the "+
			"methods execute(sql, params?), query(sql, params?) and transaction(statements), each returning a "+
			"promise. params is an array of TAGGED edge.sql values bound by position, so a 64-bit INTEGER (decimal "+
			"text) and a BLOB (base64) survive a round trip that an untagged JSON scalar would have altered. All "+
			"three resolve to the same statement-result shape (rows, rowsWritten and lastInsertRowId), and "+
			"transaction resolves to one such result per statement, in statement order, so a SELECT inside a "+
			"transaction returns its rows without leaving the transaction. Statements apply atomically under "+
			"serializable isolation, so a rejected transaction has applied nothing at all. Errors reject with an "+
			"Error whose name is the edge.sql error code; busy is the retryable one, and a caller that intends to "+
			"retry must run the whole call again.",
		"SQLiteDatabase", iface("edge.sql"), "execute", "query", "transaction")
}

func (e Edition) queueProducerBinding() Binding {
	return e.bindingDoc("module-worker.queue-producer", "Module Worker binding that sends to an At-Least-Once Queue",
		"Exposes only the sending half of edge.queue (send, sendBatch) to a Worker Version. Consuming is never a "+
			"binding: it is the QueueConsumer attachment resource. Runtime surface: env.NAME is an object with "+
			"exactly two methods, send(body, options?) and sendBatch(messages), each returning a promise that "+
			"resolves to the message identity, or identities, the host assigned. A body is BYTES: an ArrayBuffer, "+
			"a typed array, or a string encoded as UTF-8. There is no receive, no peek and no settlement method: "+
			"acknowledge, retry, acknowledgeAll and retryAll live on the BATCH handed to the module's queue "+
			"handler, never here, because settling a message you were not delivered is not an operation. A "+
			"resolved send means ACCEPTED and durable, not delivered; delivery is at-least-once and unordered, so "+
			"the consumer may see duplicates and must be idempotent. Errors reject with an Error named after the "+
			"edge.queue code.",
		"AtLeastOnceQueue", iface("edge.queue"), "send", "sendBatch")
}

func (e Edition) serviceBinding() Binding {
	return e.bindingDoc("module-worker.service", "Module Worker binding that calls another Module Worker",
		"Exposes the worker.service fetch operation to a Worker Version, addressing another Module Worker by its "+
			"logical identity rather than by any network endpoint. Runtime surface: env.NAME.fetch(request) takes a "+
			"Request (or a URL string plus an optional init object, exactly like the global fetch) and returns a "+
			"Promise<Response>. Request and response bodies STREAM in both directions; neither is buffered before "+
			"the call is made. The call goes to whichever Worker Versions the target's active Worker Deployment "+
			"selects and never leaves the host, so no DNS name, URL or credential is involved, and the host name "+
			"in the request carries no routing meaning. An UNCAUGHT exception in the callee's fetch handler is the "+
			"callee's host-generated 500 response: the promise RESOLVES with that response instead of rejecting, so "+
			"a caller detects callee failure by status, not by catch. The promise rejects only when the call could "+
			"not be made at all, with an Error named backend_unavailable. A response reflects every effect the "+
			"callee completed before responding.",
		"ModuleWorker", iface("worker.service"), "fetch")
}
