// Package artifact holds the rules of Takoform's content-addressed artifacts
// (spec/host-api-v1alpha3.md §3.6): the manifest (artifacts.takoform.com/v1alpha1) and its
// verification, the manifest digest, blob checks on receipt, building a
// WorkerBundle manifest from local module files, and reading which runtime
// handlers a main module's default export carries (spec/host-api-v1alpha3.md §6.4, §6.5).
//
// Refusals are *Error values with a stable Rule ID and a JSON pointer into
// the manifest; a host maps every manifest and blob refusal to
// `artifact_invalid`.
package artifact

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// Manifest kinds (spec/host-api-v1alpha3.md §3.6).
const (
	KindWorkerBundle      = "WorkerBundle"
	KindStaticAssetBundle = "StaticAssetBundle"
	KindMigrationBundle   = "MigrationBundle"
)

// SPAIndex is the file a single-page application's StaticAssetBundle must
// list and answers its missing paths with (spec/lane-v1beta1.md §6.4).
const SPAIndex = "index.html"

// The five admitted module media types (spec/host-api-v1alpha3.md §3.6). All but
// MediaTypeSourceMap are loadable; a source map is auxiliary: it may be
// carried but never be the main module. application/json is not admitted.
const (
	MediaTypeJavaScriptModule = "application/javascript+module"
	MediaTypeText             = "text/plain"
	MediaTypeOctetStream      = "application/octet-stream"
	MediaTypeWasm             = "application/wasm"
	MediaTypeSourceMap        = "application/source-map+json"
)

// MediaTypeSQL is the one media type of a MigrationBundle file on lane
// v1beta1 (spec/lane-v1beta1.md §3.6, Limits.SQLMigrationFiles).
const MediaTypeSQL = "application/sql"

// Schema bounds of the manifest (artifact-manifest-v1alpha1).
const (
	MaxModules         = 4096      // modules per WorkerBundle
	MaxFiles           = 16384     // files per StaticAssetBundle / MigrationBundle
	MaxEntrySize       = 268435456 // bytes per module or file (256 MiB)
	MaxPathLength      = 240       // characters per name, path or mainModule
	MaxMediaTypeLength = 255       // characters per file media type
)

// moduleMediaTypes maps each admitted module media type to whether it is
// loadable.
var moduleMediaTypes = map[string]bool{
	MediaTypeJavaScriptModule: true,
	MediaTypeText:             true,
	MediaTypeOctetStream:      true,
	MediaTypeWasm:             true,
	MediaTypeSourceMap:        false,
}

var (
	segmentPattern   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)
	fileMediaPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$`)
)

// Limits are a host's own bounds on a manifest, beyond the schema's
// (advertised as support-profile limits, spec/host-api-v1alpha3.md §8.1). Zero means no host
// bound.
type Limits struct {
	MaximumBundleBytes int64 // total of all entry sizes, bytes (`maximumBundleBytes`)
	MaxEntries         int   // modules or files per manifest
	// SQLMigrationFiles requires every file of a MigrationBundle to be
	// exactly MediaTypeSQL (RuleMigrationMediaType): a rule of lane v1beta1
	// (spec/lane-v1beta1.md §3.6). Lane v1alpha3 admits any file media
	// type of the grammar, so its hosts leave it false.
	SQLMigrationFiles bool
}

// MaximumBundleFiles is the most entries a manifest of kind may list: 4096
// modules for a WorkerBundle, 16384 files for a StaticAssetBundle or a
// MigrationBundle (the manifest schema's maxItems; lane v1beta1 publishes
// it as limits.maximumBundleFiles, spec/lane-v1beta1.md §8.1). Verify
// refuses more with RuleCount.
func MaximumBundleFiles(kind string) int {
	if kind == KindWorkerBundle {
		return MaxModules
	}
	return MaxFiles
}

// HasFile reports whether a StaticAssetBundle or MigrationBundle manifest
// lists a file at exactly path (spec/lane-v1beta1.md §6.4: a
// single-page application's bundle lists index.html).
func HasFile(m *wire.Manifest, path string) bool {
	for _, f := range m.Files {
		if f.Path == path {
			return true
		}
	}
	return false
}

// ParseManifest reads a manifest document strictly: exactly one I-JSON
// document (ijson), a closed object (an unknown member is refused), every
// required member present and non-null, sizes written as integer literals
// (1024; a schema-valid but non-canonical 1024.0 or 1.024e3 is refused as
// RuleDecode); then it applies Verify with no host Limits. The returned manifest thus
// satisfies every rule of spec/host-api-v1alpha3.md §3.6 except host limits, and re-encodes to
// the same canonical document (Digest of it equals ijson.Digest(data)).
// Errors are *Error: RuleDecode (with the *ijson.Error as cause),
// RuleRequired, or any rule Verify reports.
func ParseManifest(data []byte) (*wire.Manifest, error) {
	var m wire.Manifest
	if err := ijson.Unmarshal(data, &m); err != nil {
		e := &Error{Rule: RuleDecode, Message: "the manifest is not a valid document: " + err.Error(), cause: err}
		if ie, ok := err.(*ijson.Error); ok {
			e.Pointer, e.Message = ie.Pointer, fmt.Sprintf("%s [%s]", ie.Detail, ie.Rule)
			if ie.Rule == ijson.RuleWrongType && strings.HasSuffix(ie.Pointer, "/size") {
				e.Message = "size must be a JSON integer number of bytes written without fraction or exponent, such as 1024 [wrong-type]"
			}
		}
		return nil, e
	}
	if err := checkPresence(data, m.Kind); err != nil {
		return nil, err
	}
	if err := Verify(&m, Limits{}); err != nil {
		return nil, err
	}
	return &m, nil
}

// checkPresence catches what the typed struct cannot show: JSON nulls, absent
// entry members (decoded as zero values) and a present but empty mainModule.
func checkPresence(data []byte, kind string) error {
	var top map[string]jsontext.Value
	if err := jsonv2.Unmarshal(data, &top); err != nil {
		return &Error{Rule: RuleDecode, Message: "the manifest must be a JSON object", cause: err}
	}
	if top == nil {
		return fail(RuleDecode, "", "the manifest is null; send a JSON object")
	}
	for _, name := range []string{"apiVersion", "kind", "mainModule", "modules", "files"} {
		v, ok := top[name]
		if ok && v.Kind() == 'n' {
			return fail(RuleDecode, "/"+name, "%s is null; give a value or leave the member out", name)
		}
	}
	if v, ok := top["mainModule"]; ok && string(v) == `""` && (kind == KindStaticAssetBundle || kind == KindMigrationBundle) {
		return fail(RuleKindExclusive, "/mainModule", "a %s carries no mainModule; remove it", kind)
	}
	for _, a := range []struct{ array, key string }{{"modules", "name"}, {"files", "path"}} {
		v, ok := top[a.array]
		if !ok {
			continue
		}
		var entries []map[string]jsontext.Value
		if err := jsonv2.Unmarshal(v, &entries); err != nil {
			return &Error{Rule: RuleDecode, Pointer: "/" + a.array, Message: a.array + " must be an array of objects", cause: err}
		}
		for i, entry := range entries {
			if entry == nil {
				return fail(RuleDecode, fmt.Sprintf("/%s/%d", a.array, i), "the entry is null; give an object")
			}
			for _, member := range []string{a.key, "mediaType", "size", "digest"} {
				p := fmt.Sprintf("/%s/%d/%s", a.array, i, member)
				v, ok := entry[member]
				if !ok {
					return fail(RuleRequired, p, "%s is required in every %s entry; add it", member, a.array)
				}
				if v.Kind() == 'n' {
					return fail(RuleDecode, p, "%s is null; give a value", member)
				}
			}
		}
	}
	return nil
}

// Verify checks m against every manifest rule of spec/host-api-v1alpha3.md §3.6 and the host
// limits lim (with lim.SQLMigrationFiles, the MigrationBundle media type
// rule of spec/lane-v1beta1.md §3.6), and returns the first violation as an *Error (pointers index
// m as given): RuleRequired, RuleAPIVersion, RuleKind, RuleKindExclusive,
// RuleCount, RulePath, RuleMediaType, RuleSize, RuleDigest, RuleDuplicate,
// RuleMainModule, RuleMainModuleAuxiliary, RuleLimit,
// RuleMigrationMediaType. Two entries may share
// a digest (the same bytes under two names). A nil slice means the member is
// absent; an empty non-nil slice means it is present and empty.
func Verify(m *wire.Manifest, lim Limits) error {
	if m == nil {
		return fail(RuleRequired, "", "no manifest was given")
	}
	switch m.APIVersion {
	case wire.ArtifactsAPI:
	case "":
		return fail(RuleRequired, "/apiVersion", "apiVersion is required; set it to %q", wire.ArtifactsAPI)
	default:
		return fail(RuleAPIVersion, "/apiVersion", "apiVersion %q is not %q; set it to %q", clip(m.APIVersion), wire.ArtifactsAPI, wire.ArtifactsAPI)
	}
	var entries []entry
	var array string
	switch m.Kind {
	case KindWorkerBundle:
		if m.Files != nil {
			return fail(RuleKindExclusive, "/files", "a WorkerBundle carries modules, not files; list the files as modules or use a StaticAssetBundle")
		}
		if m.MainModule == "" {
			return fail(RuleRequired, "/mainModule", "a WorkerBundle requires mainModule; name the module the runtime loads first")
		}
		if m.Modules == nil {
			return fail(RuleRequired, "/modules", "a WorkerBundle requires modules; list at least the main module")
		}
		array, entries = "modules", moduleEntries(m.Modules)
	case KindStaticAssetBundle, KindMigrationBundle:
		if m.MainModule != "" {
			return fail(RuleKindExclusive, "/mainModule", "a %s carries no mainModule; remove it", m.Kind)
		}
		if m.Modules != nil {
			return fail(RuleKindExclusive, "/modules", "a %s carries files, not modules; list them under files", m.Kind)
		}
		if m.Files == nil {
			return fail(RuleRequired, "/files", "a %s requires files; list at least one", m.Kind)
		}
		array, entries = "files", fileEntries(m.Files)
	case "":
		return fail(RuleRequired, "/kind", "kind is required; use WorkerBundle, StaticAssetBundle or MigrationBundle")
	default:
		return fail(RuleKind, "/kind", "kind %q is not an artifact kind; use WorkerBundle, StaticAssetBundle or MigrationBundle", clip(m.Kind))
	}

	limit := MaximumBundleFiles(m.Kind)
	if len(entries) == 0 || len(entries) > limit {
		return fail(RuleCount, "/"+array, "%s has %d entries; give 1 to %d", array, len(entries), limit)
	}
	if lim.MaxEntries > 0 && len(entries) > lim.MaxEntries {
		return fail(RuleLimit, "/"+array, "%s has %d entries but this host accepts at most %d; split the bundle", array, len(entries), lim.MaxEntries)
	}

	seen := make(map[string]int, len(entries))
	var total int64
	for i, e := range entries {
		if err := e.verify(array, i); err != nil {
			return err
		}
		if first, dup := seen[e.key]; dup {
			return fail(RuleDuplicate, e.ptr(array, i, e.keyMember), "%s %q is already listed at /%s/%d; list each %s once",
				e.keyMember, clip(e.key), array, first, e.keyMember)
		}
		seen[e.key] = i
		total += e.size
		if lim.SQLMigrationFiles && m.Kind == KindMigrationBundle && e.mediaType != MediaTypeSQL {
			return fail(RuleMigrationMediaType, e.ptr(array, i, "mediaType"), "migration file %q is %s; every MigrationBundle file must be exactly %s (no parameters)",
				clip(e.key), clip(e.mediaType), MediaTypeSQL)
		}
	}

	if m.Kind == KindWorkerBundle {
		if p := pathProblem(m.MainModule); p != "" {
			return fail(RulePath, "/mainModule", "mainModule %q %s", clip(m.MainModule), p)
		}
		i, ok := seen[m.MainModule]
		if !ok {
			return fail(RuleMainModule, "/mainModule", "mainModule %q names no listed module; list it under modules or name one that is", clip(m.MainModule))
		}
		if mt := m.Modules[i].MediaType; !moduleMediaTypes[mt] {
			return fail(RuleMainModuleAuxiliary, "/mainModule", "mainModule %q is %s, an auxiliary module the runtime cannot load; name a loadable module (%s, %s, %s or %s)",
				clip(m.MainModule), mt, MediaTypeJavaScriptModule, MediaTypeText, MediaTypeOctetStream, MediaTypeWasm)
		}
	}
	for i, mod := range m.Modules {
		if target, ok := strings.CutSuffix(mod.Name, ".map"); mod.MediaType == MediaTypeSourceMap {
			if _, listed := seen[target]; !ok || !listed {
				return fail(RuleSourceMapTarget, fmt.Sprintf("/modules/%d/name", i), "source map %q describes module %q, which is not listed; list the module or drop its source map",
					clip(mod.Name), clip(target))
			}
		}
	}
	if lim.MaximumBundleBytes > 0 && total > lim.MaximumBundleBytes {
		return fail(RuleLimit, "/"+array, "the entries total %d bytes but this host accepts at most %d bytes per bundle; make the bundle smaller", total, lim.MaximumBundleBytes)
	}
	return nil
}

// Digest returns the manifestDigest of m: ijson.DigestValue of the manifest
// (RFC 8785 canonical JSON, SHA-256, "sha256:<64 hex>"; spec/host-api-v1alpha3.md §3.6 step 3).
// It does not verify m; call Verify first. Errors come from encoding.
func Digest(m *wire.Manifest) (string, error) {
	if m == nil {
		return "", fail(RuleRequired, "", "no manifest was given")
	}
	return ijson.DigestValue(m)
}

// entry is a module or a file, seen through what the rules check.
type entry struct {
	module    bool
	keyMember string // "name" or "path"
	key       string
	mediaType string
	size      int64
	digest    string
}

func moduleEntries(ms []wire.ManifestModule) []entry {
	out := make([]entry, len(ms))
	for i, m := range ms {
		out[i] = entry{true, "name", m.Name, m.MediaType, m.Size, m.Digest}
	}
	return out
}

func fileEntries(fs []wire.ManifestFile) []entry {
	out := make([]entry, len(fs))
	for i, f := range fs {
		out[i] = entry{false, "path", f.Path, f.MediaType, f.Size, f.Digest}
	}
	return out
}

func (e entry) ptr(array string, i int, member string) string {
	return fmt.Sprintf("/%s/%d/%s", array, i, member)
}

func (e entry) verify(array string, i int) error {
	if p := pathProblem(e.key); p != "" {
		return fail(RulePath, e.ptr(array, i, e.keyMember), "%s %q %s", e.keyMember, clip(e.key), p)
	}
	if msg := e.mediaTypeProblem(); msg != "" {
		return fail(RuleMediaType, e.ptr(array, i, "mediaType"), "%s", msg)
	}
	if e.size < 0 || e.size > MaxEntrySize {
		return fail(RuleSize, e.ptr(array, i, "size"), "size %d is outside 0..%d bytes; entries may be at most 256 MiB", e.size, MaxEntrySize)
	}
	if !ijson.ValidDigest(e.digest) {
		return fail(RuleDigest, e.ptr(array, i, "digest"), "digest %q is not \"sha256:\" followed by 64 lowercase hex digits; give the SHA-256 of the bytes", clip(e.digest))
	}
	return nil
}

func (e entry) mediaTypeProblem() string {
	mt := e.mediaType
	if e.module {
		if _, ok := moduleMediaTypes[mt]; ok {
			return ""
		}
		hint := ""
		if mt == "application/json" {
			hint = " (application/json is not admitted: ship JSON data as text/plain)"
		}
		return fmt.Sprintf("module media type %q is not admitted%s; use %s, %s, %s, %s or %s", clip(mt), hint,
			MediaTypeJavaScriptModule, MediaTypeText, MediaTypeOctetStream, MediaTypeWasm, MediaTypeSourceMap)
	}
	if len(mt) > MaxMediaTypeLength || !fileMediaPattern.MatchString(mt) {
		return fmt.Sprintf("file media type %q is not a lowercase type/subtype of at most %d characters (for example text/html or application/sql); drop parameters and uppercase", clip(mt), MaxMediaTypeLength)
	}
	return ""
}

// pathProblem returns "" for a valid artifact path (module name, file path,
// mainModule), else what is wrong with it and how to fix it.
func pathProblem(p string) string {
	switch {
	case p == "":
		return "is empty; give a relative path such as \"worker.js\""
	case !utf8.ValidString(p):
		return "is not valid UTF-8; use ASCII letters, digits, '.', '_', '-' and '/'"
	case strings.IndexByte(p, 0) >= 0:
		return "contains a NUL byte; remove it"
	case strings.Contains(p, `\`):
		return "contains a backslash; separate segments with '/'"
	case strings.HasPrefix(p, "/"):
		return "is absolute; remove the leading '/'"
	case utf8.RuneCountInString(p) > MaxPathLength:
		return "is " + strconv.Itoa(utf8.RuneCountInString(p)) + " characters long; shorten it to at most 240"
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return "has an empty segment (\"//\" or a trailing '/'); remove it"
		case seg == "." || seg == "..":
			return "has a \"" + seg + "\" segment; write the path without '.' and '..' segments"
		case !segmentPattern.MatchString(seg):
			return fmt.Sprintf("has segment %q; each segment starts with a letter, digit or '_' and continues with letters, digits, '.', '_' or '-'", clip(seg))
		}
	}
	return ""
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:61] + "..."
	}
	return s
}
