package source

// The three Forms only the v1beta1 edition has (spec/lane-v1beta1.md §6.6,
// §6.7): StaticAssetBundle, SQLiteMigrationSet, SQLiteMigrationApplication.

// manifestRevision is a revision Form whose whole desired state is the
// digest of one committed artifact manifest (spec/lane-v1beta1.md §3.6).
func (e Edition) manifestRevision(kind, dir, title, name, description, digestDescription, example string) Form {
	canonical := M{"manifestDigest": example}
	return e.build(formSpec{
		kind: kind, dir: dir, role: "revision",
		title:        title,
		description:  description,
		desiredTitle: "Desired fields of " + name,
		properties: M{
			"manifestDigest": about(M{"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}, digestDescription),
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

func (e Edition) staticAssetBundle() Form {
	// Fixture data: an example committed manifest digest, not a document digest.
	return e.manifestRevision("StaticAssetBundle", "static-asset-bundle", "Static Asset Bundle (immutable file set)",
		"a Static Asset Bundle",
		"An immutable, content-addressed set of static files that a Worker Version may serve next to its code. "+
			"The desired state is only the digest of a committed StaticAssetBundle artifact manifest; that "+
			"manifest is the single inventory of the files, each with its path, media type, exact size and sha256 "+
			"digest, and the order of its entries means nothing. File bytes, upload locations and backend names "+
			"never enter this resource or any provider state. How the files are served (lookup order, what a miss "+
			"does) is decided by the Worker Version that attaches the bundle, so one bundle can take part in "+
			"several versions without meaning two things. A bundle a live Worker Version attaches cannot be "+
			"deleted.",
		"The digest the host returned when the StaticAssetBundle manifest was committed: sha256 over the "+
			"manifest's RFC 8785 canonical form. It never changes. Before changing anything the host finds that "+
			"manifest in the caller's tenant and checks its digest, its kind and every file entry; a digest the "+
			"host never committed is refused.",
		"sha256:50ae1f6f1c6b121e8d64c4c5a83a3780c92d3a888765640a07bc20b20d71f4ef")
}

func (e Edition) sqliteMigrationSet() Form {
	// Fixture data: an example committed manifest digest, not a document digest.
	return e.manifestRevision("SQLiteMigrationSet", "sqlite-migration-set", "SQLite Migration Set (ordered schema history)",
		"a SQLite Migration Set",
		"An immutable, ordered history of SQLite schema migrations, identified by the digest of one committed "+
			"MigrationBundle artifact manifest. The order of the manifest's files is the order the migrations run "+
			"in; each file has a unique path, the media type application/sql, an exact size and a sha256 digest, "+
			"and the ordered list of (path, digest) pairs is what the set is. SQL text travels only through the "+
			"content-addressed artifact upload and never enters desired state. A new migration is a new set that "+
			"appends an entry; a set that rewrites, reorders or drops an entry a database has already applied is "+
			"refused when it is applied.",
		"The digest the host returned when the MigrationBundle manifest was committed: sha256 over the "+
			"manifest's RFC 8785 canonical form. It never changes. Before changing anything the host finds that "+
			"manifest in the caller's tenant and checks its digest, its kind, that it lists at least one file, that "+
			"paths are unique and that every file is application/sql.",
		"sha256:344f4d30e8843b60598889c142ad26a7a9958ead6d26f50d787cd0fc32b02338")
}

func (e Edition) sqliteMigrationApplication() Form {
	canonical := M{
		"database":     e.ref("SQLiteDatabase", "sqlite-database"),
		"migrationSet": e.ref("SQLiteMigrationSet", "sqlite-migration-set"),
	}
	return e.build(formSpec{
		kind: "SQLiteMigrationApplication", dir: "sqlite-migration-application", role: "attachment",
		title: "SQLite Migration Application (ledger-checked)",
		description: "Applies one SQLite Migration Set to one SQLite Database. Both relations are immutable and pinned " +
			"to the targets' UIDs before anything changes. Each database keeps a durable migration ledger, the " +
			"ordered (path, digest) pairs it has applied, kept per database UID and outliving every application. " +
			"The set must extend that ledger exactly: a ledger that is longer than the set or differs from it at " +
			"any position is refused with migration_required before any SQL runs, and otherwise only the entries " +
			"past the ledger are applied, in order, each file together with its ledger entry, so an interrupted " +
			"application resumes where it stopped without running a recorded migration twice. The application is " +
			"Ready when the ledger equals its set. Deleting it ends only the management of this attachment: no " +
			"down-migration runs, the ledger and the schema stay as they are, and the database is not deleted.",
		desiredTitle: "Desired fields of a SQLite Migration Application",
		properties: M{
			"database": about(e.relationTo("SQLiteDatabase"),
				"The SQLite Database whose ledger and schema this application advances."),
			"migrationSet": about(e.relationTo("SQLiteMigrationSet"),
				"The SQLite Migration Set whose ordered files must extend the database's ledger."),
		},
		required:  []string{"database", "migrationSet"},
		immutable: []string{"/database", "/migrationSet"},
		canonical: canonical,
		negatives: []negative{
			unexpectedProperty(canonical),
			missing(canonical, "database"),
			missing(canonical, "migrationSet"),
			badName(canonical, "database"),
			badName(canonical, "migrationSet"),
		},
	})
}
