package wire

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Code is an error code of the closed taxonomy (spec/host-api-v1alpha3.md §3.7).
type Code string

// The 26 codes of the closed taxonomy.
const (
	InvalidArgument       Code = "invalid_argument"
	Unauthenticated       Code = "unauthenticated"
	PermissionDenied      Code = "permission_denied"
	PolicyDenied          Code = "policy_denied"
	FormUnknown           Code = "form_unknown"
	FormNotInstalled      Code = "form_not_installed"
	FormUnavailable       Code = "form_unavailable"
	FormIdentityConflict  Code = "form_identity_conflict"
	ResourceNotFound      Code = "resource_not_found"
	ResourceBusy          Code = "resource_busy"
	ImportConflict        Code = "import_conflict"
	BackendUnavailable    Code = "backend_unavailable"
	InternalError         Code = "internal_error"
	RateLimited           Code = "rate_limited"
	DeadlineExceeded      Code = "deadline_exceeded"
	OperationCancelled    Code = "operation_cancelled"
	OperationNotFound     Code = "operation_not_found"
	DependencyInUse       Code = "dependency_in_use"
	DeletionProtected     Code = "deletion_protected"
	ArtifactMissing       Code = "artifact_missing"
	ArtifactInvalid       Code = "artifact_invalid"
	UnsupportedCapability Code = "unsupported_capability"
	MigrationRequired     Code = "migration_required"
	UIDMismatch           Code = "uid_mismatch"
	RevisionConflict      Code = "revision_conflict"
	GenerationConflict    Code = "generation_conflict"
)

// CodeInfo is one row of the taxonomy: the fixed HTTP status, whether a
// client may retry it automatically, what it means, and the one repair
// sentence a diagnostic shows (decision 0032).
type CodeInfo struct {
	Status    int
	Retryable bool
	Meaning   string
	Repair    string
}

// Taxonomy is THE error taxonomy table: every code a host may answer with
// its fixed status and retry class (spec/host-api-v1alpha3.md §3.7). A code absent here is
// protocol-invalid.
var Taxonomy = map[Code]CodeInfo{
	InvalidArgument:       {400, false, "the request is malformed or not true of the current state", "Correct the value the message names and apply again."},
	Unauthenticated:       {401, false, "no credential, or a credential naming nobody", "Set a valid host token (provider token or TAKOFORM_TOKEN) and retry."},
	PermissionDenied:      {403, false, "the caller lacks permission for this action", "Ask the host operator to grant this principal the permission, or use a principal that has it."},
	PolicyDenied:          {403, false, "host policy refuses the desired state", "Change the desired state to satisfy the host policy the message names."},
	FormUnknown:           {404, false, "the exact FormRef is not installed on this host", "Install this exact Form definition on the host, or use a FormRef the host serves."},
	FormNotInstalled:      {409, false, "the Form is known but not installed", "Ask the host operator to install this Form, or choose a host that has it."},
	FormUnavailable:       {409, false, "the Form is installed but not servable here", "Ask the host operator to activate this Form for the space, or wait until it is."},
	FormIdentityConflict:  {409, false, "the host holds a different definition under this Form line", "Use the definition the host installed under this version, or publish yours under a new definitionVersion."},
	ResourceNotFound:      {404, false, "no such resource in this tenant and space under this exact FormRef", "Create the resource, or check its name, space and FormRef."},
	ResourceBusy:          {409, true, "a concurrent mutation holds the resource", "Wait for the other change to finish and retry."},
	ImportConflict:        {409, false, "the native identity is already claimed", "Import a native id no other resource claims, or delete the resource that claims it first."},
	BackendUnavailable:    {503, true, "a backend is temporarily unavailable", "Retry later; the host backend is temporarily unavailable."},
	InternalError:         {500, false, "the host failed", "Report the request id to the host operator; do not retry blindly."},
	RateLimited:           {429, true, "the caller is throttled", "Retry after the interval the host gives."},
	DeadlineExceeded:      {504, true, "a host-side deadline passed", "Retry; the operation did not finish within the host's deadline."},
	OperationCancelled:    {409, false, "the operation was cancelled", "Apply again if the change is still wanted."},
	OperationNotFound:     {404, false, "no such operation for this principal", "Read the resource itself; the operation is unknown, expired or not yours."},
	DependencyInUse:       {409, false, "a live resource still depends on the target", "Delete or repoint the dependents the message names first, then delete this resource."},
	DeletionProtected:     {409, false, "host policy protects the resource from deletion", "Remove the host's deletion protection for this resource, then delete it."},
	ArtifactMissing:       {404, false, "the artifact is not held by this tenant", "Upload and commit the artifact before referring to it."},
	ArtifactInvalid:       {400, false, "the artifact breaks the artifact contract", "Fix the manifest or blob the message names and upload it again."},
	UnsupportedCapability: {422, false, "the host cannot do this at all", "Use a capability this host supports, or first create what it needs (such as an active deployment)."},
	MigrationRequired:     {409, false, "the host requires an explicit migration", "Run the migration the host names before changing this resource."},
	UIDMismatch:           {409, false, "the resource is another incarnation than expected", "Import, restore or delete the resource now under this name; it is not the one recorded."},
	RevisionConflict:      {412, false, "the representation changed since it was read", "Refresh to read the current revision and retry."},
	GenerationConflict:    {412, false, "the desired state changed since it was read, or the name is taken", "Refresh to read the current generation (or pick a free name) and retry."},
}

// Codes lists the taxonomy's codes, sorted.
func Codes() []Code {
	out := make([]Code, 0, len(Taxonomy))
	for c := range Taxonomy {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ErrorBody is the error member of the envelope.
type ErrorBody struct {
	Code      Code            `json:"code"`
	Message   string          `json:"message"`
	RequestID string          `json:"requestId"`
	Retryable bool            `json:"retryable"`
	HostCode  string          `json:"hostCode,omitempty"`
	Details   json.RawMessage `json:"details,omitempty"`
}

// ErrorEnvelope is every error answer: {"error": {...}}.
type ErrorEnvelope struct {
	Error ErrorBody `json:"error"`
}

// Error is a refusal a host answers with, and what a client decodes an
// error envelope into. Status and retryability come from Taxonomy.
type Error struct {
	Code      Code
	Message   string
	HostCode  string
	Details   map[string]any
	RequestID string // set by whoever answers or decodes
}

func (e *Error) Error() string {
	if e.HostCode != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.HostCode, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Status is the code's fixed HTTP status (500 for an unknown code).
func (e *Error) Status() int {
	if info, ok := Taxonomy[e.Code]; ok {
		return info.Status
	}
	return 500
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHostCode sets the host-specific detail code and returns e.
func (e *Error) WithHostCode(c string) *Error { e.HostCode = c; return e }

// WithDetail adds one details member and returns e.
func (e *Error) WithDetail(key string, v any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = v
	return e
}

// Envelope renders e as the wire envelope.
func (e *Error) Envelope() ErrorEnvelope {
	b := ErrorBody{Code: e.Code, Message: e.Message, RequestID: e.RequestID, Retryable: Taxonomy[e.Code].Retryable, HostCode: e.HostCode}
	if len(e.Details) > 0 {
		b.Details, _ = json.Marshal(e.Details)
	}
	return ErrorEnvelope{Error: b}
}

// CheckEnvelope reports why an error answer is protocol-invalid (spec/host-api-v1alpha3.md
// §3.7): an unknown code, a known code with another HTTP status, a
// retryable flag on a non-retryable code, or empty required members.
func CheckEnvelope(status int, b ErrorBody) error {
	info, ok := Taxonomy[b.Code]
	switch {
	case !ok:
		return fmt.Errorf("error code %q is not in the closed taxonomy", b.Code)
	case info.Status != status:
		return fmt.Errorf("error code %s came with HTTP %d; the taxonomy fixes %d", b.Code, status, info.Status)
	case b.Retryable && !info.Retryable:
		return fmt.Errorf("error code %s is marked retryable; only resource_busy, backend_unavailable, rate_limited and deadline_exceeded are", b.Code)
	case b.Message == "" || b.RequestID == "":
		return fmt.Errorf("error envelope lacks message or requestId")
	}
	return nil
}
