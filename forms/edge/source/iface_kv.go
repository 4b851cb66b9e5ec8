package source

// edge.kv@1.0.0 (spec/host-api-v1alpha3.md §7.1).

func (e Edition) edgeKV() Interface {
	key := text(1, e.kvKeyBytes())
	value := encodedBytes(34952536)
	metadata := stringMap(256, 8192, 64)
	byKey := closed(M{"key": key}, "key")
	found := closed(M{"value": value}, "value")
	return interfaceDoc("edge.kv", "Edge key/value store (eventual, bytes)",
		"Key/value storage of OPAQUE BYTES, replicated globally and eventually consistent. A value is a byte "+
			"string, never text. It travels in the family's encoded-bytes shape {\"encoding\": \"base64\", \"data\": "+
			"\"…\"}, where data is RFC 4648 section 4 base64, padded and without line breaks. maxValueBytes limits "+
			"the DECODED length; the maxLength on data is only the structural ceiling of that encoding, not the "+
			"limit. A put whose decoded value is longer than maxValueBytes fails with value_too_large, and one whose "+
			"data is not valid base64 fails with invalid_value. A key is a UTF-8 string and maxKeyBytes limits the "+
			"length of its UTF-8 ENCODING: "+astralKeyExample(e.kvKeyBytes())+" Metadata is a map of text, never bytes and never secret; "+
			"maxMetadataBytes limits the UTF-8 encoding of its canonical JSON, and going over fails with "+
			"metadata_too_large. Eventual consistency is the identity of this contract, not an option a host "+
			"picks. Reads are served by the nearest replica, so until replication converges a read that follows a "+
			"write MAY return the previous value or not_found, even when the same client reads right after its "+
			"own write, over the same connection, from the same location. The contract gives NO read-your-writes "+
			"guarantee, defines no session in which one would hold, and sets no bound on convergence time; each "+
			"host states its own convergence target in its Host Support Profile. Deleting a missing key succeeds, "+
			"and deletes converge the same way, so a get after a resolved delete can still return the deleted "+
			"value. The behaviour fixtures below are exactly what a single client can prove about such a store: "+
			"each runs in a fresh scope and checks only facts that need no write to converge. That a write "+
			"eventually becomes visible everywhere is a HOST OBLIGATION rather than a proven property; the split "+
			"is recorded in the Host API specification.",
		[]any{
			operation("get",
				"Reads the value stored under a key. A key that does not exist fails with not_found. The read is "+
					"eventually consistent: a key written a moment ago, by this client or another, may still fail "+
					"with not_found, and a key overwritten a moment ago may still return its old value. The value "+
					"always uses the family's encoded-bytes shape; a host never returns a bare string.",
				byKey, found, errs("invalid_key", "not_found", "backend_unavailable"), idempotent),
			operation("getWithMetadata",
				"Reads the value under a key together with its non-secret metadata document. When no metadata was "+
					"stored, the host leaves that member out instead of returning an empty object. Everything get "+
					"says about eventual consistency still holds: value and metadata come from one replica, so they "+
					"agree with each other but may not be current.",
				byKey, closed(M{"metadata": metadata, "value": value}, "value"),
				errs("invalid_key", "not_found", "backend_unavailable"), idempotent),
			operation("put",
				"Stores a value under a key, replacing whatever was there. The value uses the family's "+
					"encoded-bytes shape and maxValueBytes limits its DECODED length. An optional expiration TTL "+
					"removes the entry AT LEAST that many seconds later, not at exactly that instant, and get starts "+
					"failing with not_found only once the removal has converged. A resolved put means the write is "+
					"durable at the replica that accepted it; it does not promise that the next get, anywhere, sees it.",
				closed(M{
					"expirationTtlSeconds": integer(60, 315360000),
					"key":                  key,
					"metadata":             metadata,
					"value":                value,
				}, "key", "value"),
				empty(), errs("invalid_key", "invalid_value", "value_too_large", "metadata_too_large", "backend_unavailable"),
				notIdempotent),
			operation("delete",
				"Removes a key. Removing a key that does not exist succeeds, so delete can never reveal whether a "+
					"key exists. Like any write, the removal converges over time: a get after a resolved delete may "+
					"still return the deleted value.",
				byKey, empty(), errs("invalid_key", "backend_unavailable"), idempotent),
			operation("list",
				"Lists key names, optionally under a prefix, in lexicographic order of their UTF-8 bytes, one cursor "+
					"page at a time. limit caps a page and a host may return fewer keys. listComplete is true exactly "+
					"when this page is the last; when it is false, cursor addresses the next page and MUST be sent "+
					"back unchanged. Cursors are opaque, and one the host did not issue fails with invalid_cursor. "+
					"The listing is eventually consistent like every read: a key written a moment ago may be "+
					"missing, and a key deleted a moment ago may still appear.",
				closed(M{"cursor": text(1, 4096), "limit": integer(1, 1000), "prefix": textMax(e.kvKeyBytes())}),
				closed(M{
					"cursor":       text(1, 4096),
					"keys":         array(closed(M{"name": key}, "name"), "maxItems", 1000),
					"listComplete": boolean(),
				}, "keys", "listComplete"),
				errs("invalid_cursor", "backend_unavailable"), idempotent),
		},
		M{"consistency": "eventual", "pagination": "cursor"},
		M{"maxKeyBytes": e.kvKeyBytes(), "maxListPageKeys": 1000, "maxMetadataBytes": 1024, "maxValueBytes": 26214400},
		[]any{
			fixture("put-accepted",
				step("put", M{"key": "greeting", "value": M{"data": "aGVsbG8=", "encoding": "base64"}})),
			fixture("never-written-key-is-not-found",
				step("get", M{"key": "never-written"}, "expectedError", "not_found")),
			fixture("delete-absent-key-succeeds",
				step("delete", M{"key": "never-written"})),
			fixture("list-of-an-empty-scope-is-complete",
				step("list", M{}, "expected", M{"keys": []any{}, "listComplete": true})),
		})
}
