package wire

import (
	"encoding/json"

	"github.com/takoform/takoform/form"
)

// Operation is a long-running operation (operations.takoform.com/v1alpha1,
// spec/host-api-v1alpha3.md §4). done=false carries neither Result nor Error; done=true carries
// exactly one.
type Operation struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	ID         string             `json:"id"`
	Done       bool               `json:"done"`
	Target     *OperationTarget   `json:"target,omitempty"`
	Metadata   *OperationMetadata `json:"metadata,omitempty"`
	Result     json.RawMessage    `json:"result,omitempty"`
	Error      *OperationError    `json:"error,omitempty"`
}

// OperationTarget names what an operation acts on.
type OperationTarget struct {
	UID            string `json:"uid,omitempty"`
	ManifestDigest string `json:"manifestDigest,omitempty"`
}

// OperationMetadata is progress information.
type OperationMetadata struct {
	Phase    string `json:"phase,omitempty"`
	Progress *int   `json:"progress,omitempty"`
}

// OperationError is a failed operation's terminal error.
type OperationError struct {
	Code      Code   `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	HostCode  string `json:"hostCode,omitempty"`
}

// OperationEnvelope is a 202 answer.
type OperationEnvelope struct {
	Operation Operation `json:"operation"`
}

// UploadRequest starts an artifact upload (spec/host-api-v1alpha3.md §3.6).
type UploadRequest struct {
	Manifest json.RawMessage `json:"manifest"`
}

// UploadStatus answers an upload start.
type UploadStatus struct {
	UploadID     string   `json:"uploadId"`
	MissingBlobs []string `json:"missingBlobs"`
}

// CommitResponse answers an artifact commit.
type CommitResponse struct {
	ManifestDigest string `json:"manifestDigest"`
}

// Manifest is an artifact manifest (artifacts.takoform.com/v1alpha1).
type Manifest struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	MainModule string           `json:"mainModule,omitempty"`
	Modules    []ManifestModule `json:"modules,omitempty"`
	Files      []ManifestFile   `json:"files,omitempty"`
}

// ManifestModule is one module of a WorkerBundle manifest.
type ManifestModule struct {
	Name      string `json:"name"`
	MediaType string `json:"mediaType"`
	Size      int64  `json:"size"`
	Digest    string `json:"digest"`
}

// ManifestFile is one file of a StaticAssetBundle or MigrationBundle.
type ManifestFile struct {
	Path      string `json:"path"`
	MediaType string `json:"mediaType"`
	Size      int64  `json:"size"`
	Digest    string `json:"digest"`
}

// SupportProfile is a Host Support Profile (support.takoform.com/v1alpha1,
// spec/host-api-v1alpha3.md §8.1); exactly one of FormRef, InterfaceRef, BindingRef is set.
type SupportProfile struct {
	APIVersion        string                  `json:"apiVersion"`
	Kind              string                  `json:"kind"`
	FormRef           *form.FormRef           `json:"formRef,omitempty"`
	InterfaceRef      *form.InterfaceRef      `json:"interfaceRef,omitempty"`
	BindingRef        *form.BindingRef        `json:"bindingRef,omitempty"`
	Operations        []string                `json:"operations,omitempty"`
	SupportedEnums    map[string][]string     `json:"supportedEnums,omitempty"`
	SupportedRanges   map[string]SupportRange `json:"supportedRanges,omitempty"`
	SupportedBindings []string                `json:"supportedBindings,omitempty"`
	Limits            map[string]int64        `json:"limits,omitempty"`
}

// SupportRange is an inclusive bound pair; integers or ISO dates.
type SupportRange struct {
	Minimum json.RawMessage `json:"minimum,omitempty"`
	Maximum json.RawMessage `json:"maximum,omitempty"`
}

// SupportProfilesResponse is the support-forms route's answer.
type SupportProfilesResponse struct {
	Profiles []SupportProfile `json:"profiles"`
}
