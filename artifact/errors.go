package artifact

import "fmt"

// Rule IDs: stable names of the artifact rules (spec/host-api-v1alpha3.md §3.6, §6.4). A host
// answers every one of them with `artifact_invalid` (400), except the
// handler rules, which back `invalid_argument` on WorkerVersion.
const (
	// Manifest document (ParseManifest).
	RuleDecode   = "artifact.decode"   // not strict I-JSON, unknown member, wrong JSON type or null
	RuleRequired = "artifact.required" // required member absent (or empty where absence is meant)

	// Manifest rules (Verify).
	RuleAPIVersion          = "artifact.api-version"           // apiVersion is not artifacts.takoform.com/v1alpha1
	RuleKind                = "artifact.kind"                  // kind outside WorkerBundle | StaticAssetBundle | MigrationBundle
	RuleKindExclusive       = "artifact.kind-exclusive"        // member of the other kind's shape present
	RuleCount               = "artifact.count"                 // modules 1..4096, files 1..16384
	RuleMainModule          = "artifact.main-module"           // mainModule names no listed module
	RuleMainModuleAuxiliary = "artifact.main-module-auxiliary" // mainModule names an auxiliary (non-loadable) module
	RuleSourceMapTarget     = "artifact.source-map-target"     // a source map "X.map" whose target module X is not listed
	RulePath                = "artifact.path"                  // module name, file path or mainModule grammar
	RuleMediaType           = "artifact.media-type"            // module media type not admitted / file media type grammar
	RuleSize                = "artifact.size"                  // size outside 0..268435456
	RuleDigest              = "artifact.digest"                // digest not sha256:<64 lowercase hex>
	RuleDuplicate           = "artifact.duplicate"             // module name or file path listed twice
	RuleLimit               = "artifact.limit"                 // host Limits exceeded
	RuleMigrationMediaType  = "artifact.migration-media-type"  // a MigrationBundle file not application/sql (Limits.SQLMigrationFiles)

	// Received bytes (VerifyBlob).
	RuleBlobSize   = "artifact.blob-size"   // byte count differs from the declared size
	RuleBlobDigest = "artifact.blob-digest" // SHA-256 differs from the declared digest

	// Main module inspection (ExportedHandlers).
	RuleModuleSyntax           = "artifact.module-syntax"             // source is not a parseable ES module
	RuleDefaultExportMissing   = "artifact.default-export-missing"    // the module has no default export
	RuleDefaultExportNotObject = "artifact.default-export-not-object" // the default export is not a plain object literal
)

// Error is a refused artifact: the Rule ID (one of the Rule constants), a
// JSON pointer (RFC 6901) into the manifest naming the offending member
// ("" for the whole document, for blobs and for module sources) and a
// Message saying what is wrong and how to fix it.
type Error struct {
	Rule    string
	Pointer string
	Message string

	cause error // e.g. the *ijson.Error behind RuleDecode
}

func (e *Error) Error() string {
	if e.Pointer == "" {
		return fmt.Sprintf("artifact: %s [%s]", e.Message, e.Rule)
	}
	return fmt.Sprintf("artifact: at %s: %s [%s]", e.Pointer, e.Message, e.Rule)
}

// Unwrap returns the underlying cause, if any (an *ijson.Error for
// RuleDecode, a *parse.Error for RuleModuleSyntax).
func (e *Error) Unwrap() error { return e.cause }

func fail(rule, pointer, format string, a ...any) *Error {
	return &Error{Rule: rule, Pointer: pointer, Message: fmt.Sprintf(format, a...)}
}
