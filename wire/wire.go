// Package wire holds the Host API wire types (spec/host-api-v1alpha3.md §2–§5, §8.1),
// identical on lanes v1alpha3 and v1beta1 (spec/lane-v1beta1.md §0.1): the
// lanes (lane.go), discovery, resource representations and requests, operations, artifact
// upload messages, support profiles, and the closed error taxonomy. Hosts
// and clients encode and decode through these types only.
package wire

import (
	"encoding/json"

	"github.com/takoform/takoform/form"
)

// TailPath is the host's route streaming a worker's console output and
// uncaught exceptions, outside the lane (`takoform tail`,
// handbook/workers-observability.md).
const TailPath = "/host/v1/workers/tail"

// Wire constants shared by every lane (spec/host-api-v1alpha3.md §2–§5;
// the lanes themselves are in lane.go).
const (
	OperationsAPI      = "operations.takoform.com/v1alpha1"
	OperationKind      = "Operation"
	SupportAPI         = "support.takoform.com/v1alpha1"
	ArtifactsAPI       = "artifacts.takoform.com/v1alpha1"
	MaxBodyBytes       = 8 << 20 // default request/response limit, bytes
	HeaderIdempotency  = "Idempotency-Key"
	HeaderGeneration   = "Takoform-Expected-Generation"
	HeaderProbe        = "Takoform-Conformance-Probe"
	HeaderRequestID    = "Takoform-Request-Id" // every answer; equals the envelope's requestId (spec/host-api-v1alpha3.md §3.2)
	ContentTypeJSON    = "application/json"
	ContentTypeOctets  = "application/octet-stream"
	FeatureCount       = 7
	MaxConditions      = 16
	MaxDiagnostics     = 256
	MaxSupportProfiles = 1024
)

// RequiredFeatures are the discovery features a v1alpha3 host must
// advertise as true (spec/host-api-v1alpha3.md §2.1).
var RequiredFeatures = []string{"service_forms", "exact_form_ref", "optimistic_concurrency", "idempotent_lifecycle", "operations", "artifact_upload", "support_profiles"}

// Discovery is the document at a lane's DiscoveryPath.
type Discovery struct {
	APIVersions []string        `json:"api_versions"`
	Features    map[string]bool `json:"features"`
	Endpoints   Endpoints       `json:"endpoints"`
}

// Endpoints are the advertised absolute URLs; only API is required.
type Endpoints struct {
	API        string `json:"api"`
	Artifacts  string `json:"artifacts,omitempty"`
	Operations string `json:"operations,omitempty"`
	Support    string `json:"support,omitempty"`
	OIDCIssuer string `json:"oidc_issuer,omitempty"`
}

// FormReference is a resource's Form: the exact FormRef plus optional
// package-digest audit evidence (never identity).
type FormReference struct {
	FormRef       form.FormRef `json:"formRef"`
	PackageDigest string       `json:"packageDigest,omitempty"`
}

// Metadata is resource metadata; uid, generation and revision are required
// in responses and optional (fences) in requests.
type Metadata struct {
	Name       string `json:"name"`
	Space      string `json:"space"`
	UID        string `json:"uid,omitempty"`
	Generation string `json:"generation,omitempty"`
	Revision   string `json:"revision,omitempty"`
}

// ResourceRequest is the body of validate and prepare, and the echoed
// resource of a prepare response (spec/host-api-v1alpha3.md §3.4 (3)(4)).
type ResourceRequest struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Form       FormReference   `json:"form"`
	Metadata   Metadata        `json:"metadata"`
	Spec       json.RawMessage `json:"spec"`
}

// Review binds an apply to a prepare.
type Review struct {
	PrepareDigest string `json:"prepareDigest"`
}

// ApplyRequest is the body of apply (spec/host-api-v1alpha3.md §3.4 (5)).
type ApplyRequest struct {
	APIVersion         string          `json:"apiVersion"`
	Kind               string          `json:"kind"`
	Form               FormReference   `json:"form"`
	Metadata           Metadata        `json:"metadata"`
	Spec               json.RawMessage `json:"spec"`
	Review             Review          `json:"review"`
	ExpectedUID        string          `json:"expectedUid,omitempty"`
	ExpectedGeneration string          `json:"expectedGeneration,omitempty"`
}

// ImportRequest is the body of import (spec/host-api-v1alpha3.md §3.4 (7)).
type ImportRequest struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Form       FormReference   `json:"form"`
	Metadata   Metadata        `json:"metadata"`
	Spec       json.RawMessage `json:"spec"`
	NativeID   string          `json:"nativeId"`
}

// Resource is a resource representation (resourceResponse, spec/host-api-v1alpha3.md §5.1).
type Resource struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Form       FormReference   `json:"form"`
	Metadata   Metadata        `json:"metadata"`
	Spec       json.RawMessage `json:"spec"`
	Status     Status          `json:"status"`
}

// Status is a resource's status; Outputs is present iff the Form declares
// an output schema (spec/host-api-v1alpha3.md §5.3).
type Status struct {
	ObservedGeneration string          `json:"observedGeneration"`
	Conditions         []Condition     `json:"conditions"`
	Observed           json.RawMessage `json:"observed,omitempty"`
	Outputs            json.RawMessage `json:"outputs,omitempty"`
}

// Condition is one status condition (spec/host-api-v1alpha3.md §5.2).
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	LastTransitionTime string `json:"lastTransitionTime"`
	HostReason         string `json:"hostReason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// ValidUID reports whether s has the grammar of metadata.uid
// (spec/host-api-v1alpha3.md §1.4), ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$,
// checked by the host on what it is sent and by the client on what it
// reads; matched by hand, as it runs on every answer
// (spec/decisions/0036-hand-written-grammars.md; TestValidUIDAgreement).
func ValidUID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}

// Closed condition vocabularies (spec/host-api-v1alpha3.md §5.2).
var (
	ConditionTypes    = []string{"Ready", "Reconciling", "Degraded", "Drifted", "Blocked", "Deleting"}
	ConditionStatuses = []string{"True", "False", "Unknown"}
	ConditionReasons  = []string{"Available", "Provisioning", "Reconciling", "Failed", "BackendUnavailable", "SpecDrift", "ExternalChange", "DependencyMissing", "DependencyInUse", "PolicyDenied", "UnsupportedCapability", "Deleting"}
)

// ResourceEnvelope wraps a resource (observe's answer).
type ResourceEnvelope struct {
	Resource Resource `json:"resource"`
}

// ValidateResponse is validate's answer.
type ValidateResponse struct {
	Valid       bool         `json:"valid"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Diagnostic is one validate finding; Field is a JSON pointer into spec.
type Diagnostic struct {
	Severity string `json:"severity"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
}

// PrepareResponse is prepare's answer.
type PrepareResponse struct {
	Resource ResourceRequest `json:"resource"`
	Review   PrepareReview   `json:"review"`
}

// PrepareReview carries the digests prepare minted.
type PrepareReview struct {
	PrepareDigest string `json:"prepareDigest"`
	SpecDigest    string `json:"specDigest"`
}

// FormsResponse is the forms route's answer: at most one entry.
type FormsResponse struct {
	Forms []FormAvailability `json:"forms"`
}

// FormAvailability states what the host can do with one exact FormRef.
type FormAvailability struct {
	Identity             FormReference `json:"identity"`
	DefinitionKnown      bool          `json:"definitionKnown"`
	Installed            bool          `json:"installed"`
	Executable           bool          `json:"executable"`
	Activated            bool          `json:"activated"`
	AvailableToPrincipal bool          `json:"availableToPrincipal"`
	Operations           []string      `json:"operations"`
	Deprecated           *bool         `json:"deprecated,omitempty"`
}

// FormDefinitionResponse is the form-definitions route's answer;
// DesiredSchema is the installed definition's own bytes.
type FormDefinitionResponse struct {
	Identity      FormReference   `json:"identity"`
	DisplayName   string          `json:"displayName,omitempty"`
	Description   string          `json:"description,omitempty"`
	DesiredSchema json.RawMessage `json:"desiredSchema"`
}
