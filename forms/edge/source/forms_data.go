package source

// Identities that provide data Interfaces (spec/host-api-v1alpha3.md §6.3): EdgeKVNamespace,
// ObjectBucket, SQLiteDatabase, AtLeastOnceQueue.

// fieldless is an identity Form with no desired field providing one Interface.
func (e Edition) fieldless(kind, dir, title, name, description string, provides InterfaceRef) Form {
	return e.build(formSpec{
		kind: kind, dir: dir, role: "identity",
		title:        title,
		description:  description,
		desiredTitle: "Desired fields of " + name,
		properties:   M{},
		provides:     []InterfaceRef{provides},
		canonical:    M{},
		negatives:    []negative{unexpectedProperty(M{})},
	})
}

func (e Edition) edgeKVNamespace() Form {
	return e.fieldless("EdgeKVNamespace", "edge-kv-namespace", "Edge KV Namespace (eventually consistent bytes)",
		"an Edge KV Namespace",
		"A globally replicated key/value namespace holding opaque BYTES with eventual consistency, exactly as the "+
			"edge.kv Interface defines it. Eventual consistency is what this Form means, not a setting: a store that "+
			"converges differently is a different Form, and this one promises no read-your-writes, not within any "+
			"session and not at any location. Values are byte strings in the family's encoded-bytes shape, so the "+
			"declared byte limit and the structural string ceiling measure the same quantity (decision 0020).",
		iface("edge.kv"))
}

func (e Edition) objectBucket() Form {
	return e.fieldless("ObjectBucket", "object-bucket", "Object Bucket (strongly consistent object store)",
		"an Object Bucket",
		"An object store with a flat namespace, strong read-after-write consistency, streaming bodies, ranged and "+
			"conditional reads, and multipart upload, exactly as the edge.objects Interface defines it. An object "+
			"body is a byte stream and never a JSON string: the contract's 5 GiB ceiling only makes sense because a "+
			"body never rides inside an operation document (decision 0020). Operating rules such as CORS, lifecycle "+
			"and locking are separate policy resources, never desired fields of the bucket identity.",
		iface("edge.objects"))
}

func (e Edition) sqliteDatabase() Form {
	if e.beta {
		return e.fieldless("SQLiteDatabase", "sqlite-database", "SQLite Database (serializable, schema by migration)",
			"a SQLite Database",
			"An embedded SQLite database with serializable transactions, exactly as the edge.sql Interface "+
				"defines it. SQLite semantics are the identity of this Form: a database whose SQL, typing or "+
				"isolation behaves differently is another Form, never an engine setting. Runtime SQL reads and "+
				"writes rows but can never change the schema; the schema changes only when a "+
				"SQLiteMigrationApplication applies a SQLite Migration Set, recorded in the database's migration "+
				"ledger (decision 0034).",
			iface("edge.sql"))
	}
	return e.fieldless("SQLiteDatabase", "sqlite-database", "SQLite Database (serializable, tagged values)",
		"a SQLite Database",
		"An embedded SQLite database with serializable transactions and TAGGED values, exactly as the edge.sql "+
			"Interface defines it. SQLite semantics are the identity of this Form: a database whose SQL, typing or "+
			"isolation behaves differently is another Form, never an engine setting. Every value carries its "+
			"storage class, so a 64-bit INTEGER or a BLOB survives a round trip instead of being squeezed into a "+
			"JSON scalar (decision 0020).",
		iface("edge.sql"))
}

func (e Edition) atLeastOnceQueue() Form {
	canonical := M{"deliveryDelaySeconds": 0, "messageRetentionSeconds": 345600}
	return e.build(formSpec{
		kind: "AtLeastOnceQueue", dir: "at-least-once-queue", role: "identity",
		title: "At-Least-Once Queue (unordered)",
		description: "A message queue that delivers at least once and promises no ordering, exactly as the " +
			"edge.queue Interface defines it. There is no ordering field; a FIFO queue would be a different Form. " +
			"Message bodies are opaque bytes, a message keeps its identity across redeliveries, and a queue has AT " +
			"MOST ONE consumer: two consumers would divide the stream between two retry policies and two " +
			"dead-letter destinations, leaving the queue's own behaviour impossible to state (decision 0020).",
		desiredTitle: "Desired fields of an At-Least-Once Queue",
		properties: M{
			"messageRetentionSeconds": about(integer(60, 1209600),
				"Seconds an undelivered message is kept before it is discarded."),
			"deliveryDelaySeconds": about(with(integer(0, 43200), "default", 0),
				"Seconds a newly sent message waits, by default, before it can be delivered. When omitted, "+
					"messages are deliverable immediately."),
		},
		required:  []string{"messageRetentionSeconds"},
		update:    true,
		provides:  []InterfaceRef{iface("edge.queue")},
		canonical: canonical,
		negatives: []negative{
			unexpectedProperty(canonical),
			missing(canonical, "messageRetentionSeconds"),
			invalid(canonical, "messageRetentionSeconds", 59),
			invalid(canonical, "deliveryDelaySeconds", -1),
		},
	})
}
