package provider

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

// identity is what a diagnostic's identity block can say (decision 0032);
// empty members are omitted.
type identity struct {
	Type, Space, Name                     string
	Form                                  *form.FormRef
	Pointer                               string
	ExpectedUID, CurrentUID               string
	ExpectedGeneration, CurrentGeneration string
	ExpectedRevision, CurrentRevision     string
	Operation                             string
	Code                                  Code // set when the error is the provider's own
	RevisionDelete                        bool // a revision's delete: dependency_in_use renders RevisionDeleteRepair
}

// Code is one of the provider's own refusal codes: the closed
// takoform.provider/… namespace of decision 0032, every member a constant
// below with its repair sentence in ProviderRepairs.
type Code string

// The provider's refusal codes.
const (
	CodeAlreadyExists           Code = "takoform.provider/already-exists"
	CodeBundleFiles             Code = "takoform.provider/bundle-files"
	CodeDataSourceAmbiguous     Code = "takoform.provider/data-source-ambiguous"
	CodeDataSourceNotFound      Code = "takoform.provider/data-source-not-found"
	CodeDuplicateAddress        Code = "takoform.provider/duplicate-address"
	CodeEndpointMissing         Code = "takoform.provider/endpoint-missing"
	CodeEndpointOriginMismatch  Code = "takoform.provider/endpoint-origin-mismatch"
	CodeHostDoesNotSupportForm  Code = "takoform.provider/host-does-not-support-form"
	CodeHostLimitExceeded       Code = "takoform.provider/host-limit-exceeded"
	CodeHostResponseInvalid     Code = "takoform.provider/host-response-invalid"
	CodeHostUnreachable         Code = "takoform.provider/host-unreachable"
	CodeImportID                Code = "takoform.provider/import-id"
	CodeImportIdentity          Code = "takoform.provider/import-identity"
	CodeInternal                Code = "takoform.provider/internal"
	CodeInterrupted             Code = "takoform.provider/interrupted"
	CodeInvalidConfig           Code = "takoform.provider/invalid-config"
	CodeInvalidSpace            Code = "takoform.provider/invalid-space"
	CodeLaneUnavailable         Code = "takoform.provider/lane-unavailable"
	CodeModuleSyntax            Code = "takoform.provider/module-syntax"
	CodeOperationPending        Code = "takoform.provider/operation-pending"
	CodePlanRule                Code = "takoform.provider/plan-rule"
	CodeRefLacksAttribute       Code = "takoform.provider/ref-lacks-attribute"
	CodeRelationTargetChanged   Code = "takoform.provider/relation-target-changed"
	CodeRevisionOwnerMissing    Code = "takoform.provider/revision-owner-missing"
	CodeRevisionReplacedInPlace Code = "takoform.provider/revision-replaced-in-place"
	CodeSpaceMissing            Code = "takoform.provider/space-missing"
	CodeStateUpgrade            Code = "takoform.provider/state-upgrade"
	CodeTargetOtherFamily       Code = "takoform.provider/relation-target-other-family"
	CodeTLSUntrusted            Code = "takoform.provider/tls-untrusted"
	CodeUIDMismatch             Code = "takoform.provider/uid-mismatch"
	CodeUnknownFormRef          Code = "takoform.provider/unknown-form-ref"
)

// ProviderRepairs are the repair sentences of the provider's own refusal
// codes.
var ProviderRepairs = map[Code]string{
	CodeLaneUnavailable:         "Check the endpoint and token, and that the host serves the discovery document of the lane the message names; resources of the other lane are unaffected.",
	CodeTargetOtherFamily:       "Set the provider's create_lane (or TAKOFORM_CREATE_LANE) to the family the message names, or move the aggregate into one family.",
	CodeDataSourceAmbiguous:     "Set the four form_* attributes of the data source to the exact FormRef to read under.",
	CodeInvalidSpace:            "Use a SpaceID of 1-255 code points with no control characters or '/', and no leading or trailing whitespace.",
	CodeInvalidConfig:           "Correct the attribute the message names.",
	CodeTLSUntrusted:            "Set ca_certificate or ca_certificate_file (or TAKOFORM_CA_CERTIFICATE, TAKOFORM_CA_CERTIFICATE_FILE) to the CA that issued the host's certificate, or give the host a certificate valid for the endpoint's host name.",
	CodeRevisionOwnerMissing:    "Set name, or set revision_owner (usually the worker's name) so the provider can derive one.",
	CodeRevisionReplacedInPlace: "Remove the pinned name so the new revision gets a derived name, or give the new revision a new name.",
	CodeSpaceMissing:            "Set space on the resource, or space in the provider block (or TAKOFORM_SPACE).",
	CodeAlreadyExists:           "If another resource already manages it (in this or another configuration: see tofu state list), choose another name: importing it would bind two resources to one host object. If none does, it is what an earlier run created before its answer was lost: import it (tofu import ADDRESS 'SPACE/NAME', or an import block; after a killed apply, takoform recover prints the import blocks for every such resource).",
	CodeUIDMismatch:             "Import the resource now under this name, restore the recorded one, or delete the replacement; state was kept.",
	CodeUnknownFormRef:          "Use a provider build that supports this FormRef, or import the resource under a FormRef this build knows.",
	CodeDataSourceNotFound:      "Check name and space (the provider's space when the data source sets none), or create the resource first: a data source only reads a resource that exists.",
	CodeRelationTargetChanged:   "Apply again to re-pin the relation (revision Forms are replaced instead).",
	CodeHostDoesNotSupportForm:  "Install the Form on the host, or point the provider at a host that supports it.",
	CodeHostLimitExceeded:       "Stay within the host limit the message names, or ask the host operator to raise it.",
	CodeEndpointOriginMismatch:  "Set the provider's endpoint to <advertised origin> (the origin the host advertises), or start the host with --public-url <endpoint> if that is the address clients should use.",
	CodeHostResponseInvalid:     "Report the request to the host operator: the answer broke the protocol (no remedy is guessed).",
	CodeImportID:                "Use NAME, SPACE/NAME, or a JSON object {\"space\"?, \"apiVersion\", \"kind\", \"definitionVersion\", \"schemaDigest\", \"name\"}.",
	CodeImportIdentity:          "Use an import identity {space (optional), name, and api_version, kind, definition_version, schema_digest all four or none} naming a FormRef this build supports.",
	CodeStateUpgrade:            "Keep the state file (nothing was changed) and report the message to the provider's maintainers, or use the provider build that wrote this state.",
	CodeRefLacksAttribute:       "Remove the attribute from this resource's configuration, or have the resource created under a FormRef whose definition has the attribute (an existing resource is replaced to move it).",
	CodePlanRule:                "Correct the value the message names; the host would refuse it too.",
	CodeOperationPending:        "Run apply again: the host accepted the change and is still working on it.",
	CodeBundleFiles:             "Check main_module and modules: every module needs a readable content_file and main_module must name a listed module.",
	CodeModuleSyntax:            "Fix the module's syntax at the line and column the message names: the host refuses a version whose bundle holds a module it cannot parse.",
	CodeEndpointMissing:         "Set endpoint in the provider block or TAKOFORM_ENDPOINT to the host's origin, e.g. http://127.0.0.1:8080.",
	CodeHostUnreachable:         "Check that the host is running and reachable at the endpoint, then apply again: a change the host never received is made then, and a create whose answer was lost is refused as already existing, naming the import ID that adopts it.",
	CodeInterrupted:             "Run apply again: this resource's change was not sent, so the next run makes it.",
	CodeDuplicateAddress:        "Rename one of the two resources (or give one another space): one host object is managed by one resource only, and importing it into the other would alias them again.",
	CodeInternal:                "Report this message to the provider's maintainers; nothing in the configuration explains it.",
}

// HostReasonRepairs refine a host code's repair where the host's reason
// (hostCode) shows what a configuration author can change: mostly an
// ordering OpenTofu cannot infer from the references alone.
var HostReasonRepairs = map[string]string{
	"service_target_not_serving": "Add depends_on = [<the target worker's takoform_worker_deployment>] to this version, so the target serves fetch before the version is created and is deleted after it.",
	"no_active_deployment":       "Add depends_on = [<the worker's takoform_worker_deployment>] to this resource, so the deployment exists before it is created and is deleted after it.",
	"handler_not_served":         "Export and declare the handler in every version the worker's deployment weights, or remove this resource.",
	"deployment_has_dependents":  "Delete the dependents first: give each of them depends_on = [this deployment] so OpenTofu orders the teardown.",
}

// RevisionDeleteRepair is the repair of a revision's delete
// (takoform_worker_bundle, takoform_worker_version) refused as
// dependency_in_use, whatever the host's reason: the common rollout
// failure. Changed content gives a revision a new derived name; without
// create_before_destroy OpenTofu deletes the old revision first, while
// the deployment still weights it (spec/terraform-surface.md "Revision
// types").
const RevisionDeleteRepair = "If this delete is the old half of a replacement (changed content gave the revision a new name), add lifecycle { create_before_destroy = true } to the takoform_worker_bundle and takoform_worker_version resources and apply again: OpenTofu then creates the new revision and repoints what names it before it deletes the old one. Otherwise delete or repoint the dependents the message names first."

// renderError is THE renderer: summary, detail prose, Host:/Cause:, the
// identity block in fixed order, Code and Retryable, then one repair.
func renderError(summary string, err error, id identity) diag.Diagnostics {
	var d diag.Diagnostics
	d.AddError(summary, renderDetail(err, id))
	return d
}

// renderWarning renders a warning the same way.
func renderWarning(summary string, err error, id identity) diag.Diagnostics {
	var d diag.Diagnostics
	d.AddWarning(summary, renderDetail(err, id))
	return d
}

func renderDetail(err error, id identity) string {
	var b strings.Builder
	line := func(label, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", label, v)
		}
	}
	var we *wire.Error
	var pe *client.ProtocolError
	var om *client.OriginMismatchError
	var te *client.TransportError
	var of *client.OperationFailedError
	if errors.As(err, &of) {
		// an operation's terminal error is the host's refusal, not an HTTP answer
		we = of.Err
		if id.Operation == "" {
			id.Operation = operationID(of)
		}
	} else {
		errors.As(err, &we)
	}
	code, repair, retry := string(id.Code), ProviderRepairs[id.Code], ""
	own := func(c Code) { code, repair = string(c), ProviderRepairs[c] }
	var lu *laneUnavailableError
	switch {
	case errors.As(err, &lu):
		// a lane this resource is spoken on was not negotiated (lanes.go)
		line("Cause", err.Error())
		own(CodeLaneUnavailable)
		retry = "yes"
	case we != nil:
		line("Host", we.Message)
		info, ok := wire.Taxonomy[we.Code]
		code = fmt.Sprintf("%s (host, HTTP %d)", we.Code, info.Status)
		repair = info.Repair
		if r, ok := HostReasonRepairs[we.HostCode]; ok {
			repair = r
		}
		if id.RevisionDelete && we.Code == wire.DependencyInUse {
			repair = RevisionDeleteRepair
		}
		retry = yesNo(info.Retryable)
		if p, ok := we.Details["pointer"].(string); ok && id.Pointer == "" {
			// the host points into the request document; the identity
			// block points into the desired spec, as plan-time rules do
			if strings.HasPrefix(p, "/spec/") {
				p = strings.TrimPrefix(p, "/spec")
			}
			id.Pointer = p
		}
		if !ok {
			// not in the closed taxonomy: protocol-invalid, no remedy guessed
			own(CodeHostResponseInvalid)
			retry = "no"
		}
	case errors.As(err, &om):
		// the endpoint names the host another way than the host names itself
		line("Cause", "the host advertises another origin than the endpoint: "+om.Error())
		own(CodeEndpointOriginMismatch)
		retry = "no"
		repair = strings.NewReplacer("<advertised origin>", om.Advertised, "<endpoint>", om.Configured).Replace(repair)
	case errors.As(err, &pe):
		line("Cause", "protocol-invalid answer: "+pe.Error())
		own(CodeHostResponseInvalid)
		retry = "no"
	case errors.As(err, &te):
		line("Cause", err.Error())
		if code == "" {
			own(CodeHostUnreachable)
		}
	case err != nil:
		line("Cause", err.Error())
	}
	if code == "" {
		own(CodeInternal)
	}
	if id.Type != "" {
		line("Resource", fmt.Sprintf("%s (%s/%s)", id.Type, id.Space, id.Name))
	}
	if id.Form != nil {
		line("Form", id.Form.String())
	}
	line("Pointer", id.Pointer)
	line("Expected UID", id.ExpectedUID)
	line("Current UID", id.CurrentUID)
	line("Expected generation", id.ExpectedGeneration)
	line("Current generation", id.CurrentGeneration)
	line("Expected revision", id.ExpectedRevision)
	line("Current revision", id.CurrentRevision)
	line("Operation", id.Operation)
	if we != nil {
		line("Request", we.RequestID)
		line("Host reason", we.HostCode)
	}
	line("Code", code)
	line("Retryable", retry)
	if repair != "" {
		b.WriteString(repair)
	}
	return strings.TrimRight(b.String(), "\n")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
