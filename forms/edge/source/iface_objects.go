package source

// edge.objects@1.0.0 (spec/host-api-v1alpha3.md §7.1).

const maxObjectBytes = 5368709120 // 5 GiB

func (e Edition) edgeObjects() Interface {
	key := text(1, e.objectKeyBytes())
	etag := text(1, 256)
	contentType := text(1, 256)
	size := integer(0, maxObjectBytes)
	uploadID := text(1, 256)
	partNumber := integer(1, 10000)
	byteRange := closed(M{"length": integer(1, maxObjectBytes), "offset": integer(0, maxObjectBytes)}, "offset")
	byKey := closed(M{"key": key}, "key")
	written := closed(M{"etag": etag, "size": size}, "etag", "size")
	stream := func(contentLength int, k string, kv ...any) M {
		return with(M{"bodyStream": true, "contentLength": contentLength, "key": k}, kv...)
	}
	return interfaceDoc("edge.objects", "Object store (read-after-write, streamed)",
		"Object storage with a flat namespace, strong read-after-write consistency and STREAMED bodies. An object "+
			"body is never a JSON member: maxObjectBytes is 5 GiB, which no JSON string can carry, so get and put "+
			"declare bodyStream and the bytes flow as a stream next to the operation document. contentLength gives "+
			"the exact byte count in both directions, and a put whose stream does not deliver exactly contentLength "+
			"bytes fails with invalid_body and stores nothing. Consistency: once a put or a delete has resolved, "+
			"every later get, head or list observes it. Writes to one key are last-writer-wins; there is no "+
			"atomicity across keys, no transaction and no versioning, so a replaced object is gone. An etag is a "+
			"STRONG validator of one object's exact bytes. A conditional get or put fences with ifMatch (proceed "+
			"only if the current etag is exactly this value); a get may instead fence with ifNoneMatch on an etag, "+
			"and a put may use ifNoneMatch \"*\" to write only when the key is absent. A failed precondition is "+
			"precondition_failed and changes nothing. A ranged get returns a contiguous slice of ONE object: offset "+
			"is the first byte, length the number of bytes, an omitted length reads to the end, and an offset at or "+
			"beyond the object's size fails with range_not_satisfiable instead of returning an empty body. Objects "+
			"larger than maxSinglePutBytes, and objects whose size the producer does not know in advance, are "+
			"written with the multipart operations: createMultipartUpload opens an upload, uploadPart writes one "+
			"numbered part, completeMultipartUpload joins the parts in part-number order into one object with one "+
			"etag, and abortMultipartUpload throws the upload away. Every part except the highest-numbered one MUST "+
			"be at least 5242880 bytes. An upload occupies no key until it completes, so a get of that key before "+
			"completion behaves as if the upload did not exist. In a behaviour trace, a step whose input declares "+
			"bodyStream sends exactly contentLength bytes, the byte at index i having the value i modulo 256, which "+
			"makes every trace below reproducible byte for byte. No trace covers multipart, because its steps "+
			"depend on part etags the host mints during the trace; multipart assembly is a HOST OBLIGATION stated "+
			"in the Host API specification.",
		[]any{
			operation("head",
				"Returns an object's size, strong etag, content type and write time, without its body. A missing "+
					"key fails with not_found. uploadedAtMillis is the UTC time, in milliseconds since the Unix "+
					"epoch, of the write that produced the current bytes.",
				byKey,
				closed(M{"contentType": contentType, "etag": etag, "size": size, "uploadedAtMillis": integerFrom(0)},
					"etag", "size"),
				errs("invalid_key", "not_found", "backend_unavailable"), idempotent),
			operation("get",
				"Reads an object as a byte stream. bodyStream is always true in the output: the body flows next to "+
					"this document and is never one of its members, so a caller may start consuming before the "+
					"whole object has arrived. size is the size of the WHOLE object, partial tells whether a range "+
					"was applied, and range repeats the exact slice served. A conditional get fences with ifMatch "+
					"(serve only when the current etag is exactly this value) or ifNoneMatch (serve only when it is "+
					"not); a failed precondition is precondition_failed and has no body. A range whose offset is at "+
					"or beyond size fails with range_not_satisfiable.",
				closed(M{"ifMatch": etag, "ifNoneMatch": etag, "key": key, "range": byteRange}, "key"),
				closed(M{
					"bodyStream": boolean(), "contentType": contentType, "etag": etag,
					"partial": boolean(), "range": byteRange, "size": size,
				}, "bodyStream", "etag", "partial", "size"),
				errs("invalid_key", "not_found", "precondition_failed", "range_not_satisfiable", "backend_unavailable"),
				idempotent),
			operation("put",
				"Writes an object from a byte stream, replacing any object already at the key, and returns the "+
					"strong etag of the bytes written. bodyStream MUST be true and contentLength MUST equal the exact "+
					"number of bytes in the stream; a stream delivering any other count fails with invalid_body and "+
					"stores nothing. A conditional put fences with ifMatch on the current etag, or with ifNoneMatch "+
					"\"*\" to write only when the key is absent; a failed precondition is precondition_failed and "+
					"writes nothing. A contentLength above maxSinglePutBytes fails with value_too_large: such an "+
					"object belongs in a multipart upload.",
				closed(M{
					"bodyStream": boolean(), "contentLength": size, "contentType": contentType,
					"ifMatch": etag, "ifNoneMatch": choice("*"), "key": key,
				}, "bodyStream", "contentLength", "key"),
				written,
				errs("invalid_key", "invalid_body", "value_too_large", "precondition_failed", "backend_unavailable"),
				notIdempotent),
			operation("delete",
				"Removes an object. Removing a missing key succeeds, so delete never reveals whether a key exists. "+
					"Once the delete resolves, head, get and list no longer see the object.",
				byKey, empty(), errs("invalid_key", "backend_unavailable"), idempotent),
			operation("list",
				"Lists objects, optionally under a prefix, in lexicographic key order of their UTF-8 bytes, one "+
					"cursor page at a time. limit caps a page and a host may return fewer entries. truncated is true "+
					"exactly when another page follows; cursor then addresses it and MUST be sent back unchanged. "+
					"With a delimiter, every key whose remainder after the prefix contains the delimiter is "+
					"collapsed into prefixes and left out of objects. The listing observes every put and delete that "+
					"has already resolved.",
				closed(M{"cursor": text(1, 4096), "delimiter": text(1, 16), "limit": integer(1, 1000), "prefix": textMax(e.objectKeyBytes())}),
				closed(M{
					"cursor": text(1, 4096),
					"objects": array(closed(M{"etag": etag, "key": key, "size": size, "uploadedAtMillis": integerFrom(0)},
						"etag", "key", "size"), "maxItems", 1000),
					"prefixes":  array(key, "maxItems", 1000, "uniqueItems", true),
					"truncated": boolean(),
				}, "objects", "truncated"),
				errs("invalid_cursor", "backend_unavailable"), idempotent),
			operation("createMultipartUpload",
				"Opens a multipart upload for a key and returns its opaque uploadId. The key is neither written nor "+
					"reserved: another writer may put or complete the same key meanwhile, and the last writer wins. "+
					"Once a host has abandoned an upload, every later part for it fails with upload_not_found.",
				closed(M{"contentType": contentType, "key": key}, "key"),
				closed(M{"uploadId": uploadID}, "uploadId"),
				errs("invalid_key", "backend_unavailable"), notIdempotent),
			operation("uploadPart",
				"Writes one numbered part of an open upload from a byte stream and returns the part's strong etag, "+
					"which completeMultipartUpload needs back. Part numbers run from 1 to maxMultipartParts and need "+
					"not be contiguous; uploading the same number again replaces that part. Every part except the "+
					"highest-numbered one MUST be at least 5242880 bytes, and a shorter one fails with invalid_part. "+
					"contentLength MUST equal the exact byte count of the stream.",
				closed(M{
					"bodyStream": boolean(), "contentLength": size, "key": key,
					"partNumber": partNumber, "uploadId": uploadID,
				}, "bodyStream", "contentLength", "key", "partNumber", "uploadId"),
				closed(M{"etag": etag, "partNumber": partNumber}, "etag", "partNumber"),
				errs("invalid_key", "invalid_body", "invalid_part", "upload_not_found", "value_too_large", "backend_unavailable"),
				notIdempotent),
			operation("completeMultipartUpload",
				"Joins the listed parts, in ascending part-number order, into one object at the key and returns "+
					"the object's strong etag and total size. Every listed part must have been uploaded and must "+
					"carry the etag uploadPart returned for it; a mismatch fails with invalid_part and joins nothing. "+
					"The object appears atomically: no reader ever sees a partly assembled object. Completing an "+
					"upload the host no longer holds fails with upload_not_found.",
				closed(M{
					"key": key,
					"parts": array(closed(M{"etag": etag, "partNumber": partNumber}, "etag", "partNumber"),
						"minItems", 1, "maxItems", 10000),
					"uploadId": uploadID,
				}, "key", "parts", "uploadId"),
				written,
				errs("invalid_key", "invalid_part", "upload_not_found", "value_too_large", "precondition_failed", "backend_unavailable"),
				notIdempotent),
			operation("abortMultipartUpload",
				"Discards an open upload and every part written to it. The key itself is never touched: an object "+
					"already stored there stays as it is. Aborting an upload the host no longer holds fails with "+
					"upload_not_found, so abort cannot be used to test whether an upload exists.",
				closed(M{"key": key, "uploadId": uploadID}, "key", "uploadId"), empty(),
				errs("invalid_key", "upload_not_found", "backend_unavailable"), notIdempotent),
		},
		M{"consistency": "read_after_write", "pagination": "cursor"},
		M{
			"maxKeyBytes": e.objectKeyBytes(), "maxListPageObjects": 1000, "maxMultipartParts": 10000,
			"maxObjectBytes": maxObjectBytes, "maxSinglePutBytes": 314572800,
		},
		[]any{
			fixture("put-then-head-observes-the-write",
				step("put", stream(8, "reports/summary.txt", "contentType", "text/plain")),
				step("head", M{"key": "reports/summary.txt"}, "expected", M{"size": 8})),
			fixture("ranged-get-returns-a-subrange-of-one-object",
				step("put", stream(1024, "blobs/data.bin")),
				step("get", M{"key": "blobs/data.bin", "range": M{"length": 256, "offset": 512}},
					"expected", M{"bodyStream": true, "partial": true, "range": M{"length": 256, "offset": 512}, "size": 1024})),
			fixture("range-past-the-end-is-refused",
				step("put", stream(4, "blobs/small.bin")),
				step("get", M{"key": "blobs/small.bin", "range": M{"offset": 64}}, "expectedError", "range_not_satisfiable")),
			fixture("conditional-put-refuses-an-existing-key",
				step("put", stream(1, "once.txt")),
				step("put", stream(1, "once.txt", "ifNoneMatch", "*"), "expectedError", "precondition_failed")),
			fixture("delete-then-head-not-found",
				step("put", stream(1, "tmp/scratch.txt")),
				step("delete", M{"key": "tmp/scratch.txt"}),
				step("head", M{"key": "tmp/scratch.txt"}, "expectedError", "not_found")),
			fixture("list-truncates-at-the-requested-limit",
				step("put", stream(1, "page/a")),
				step("put", stream(1, "page/b")),
				step("list", M{"limit": 1, "prefix": "page/"}, "expected", M{"truncated": true}),
				step("list", M{"prefix": "page/"}, "expected", M{"truncated": false})),
		})
}
