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
	Code                                  string // a takoform.provider/… code when the error is the provider's own
}

// ProviderRepairs are the repair sentences of the provider's own refusal
// codes (the closed takoform.provider/… namespace).
var ProviderRepairs = map[string]string{
	"takoform.provider/lane-unavailable":           "Check the endpoint and token, and that the host serves forms.takoform.com/v1alpha3 discovery.",
	"takoform.provider/invalid-space":              "Use a SpaceID of 1-255 code points with no control characters or '/', and no leading or trailing whitespace.",
	"takoform.provider/invalid-config":             "Correct the attribute the message names.",
	"takoform.provider/tls-untrusted":              "Set ca_certificate or ca_certificate_file (or TAKOFORM_CA_CERTIFICATE, TAKOFORM_CA_CERTIFICATE_FILE) to the CA that issued the host's certificate, or give the host a certificate valid for the endpoint's host name.",
	"takoform.provider/revision-owner-missing":     "Set name, or set revision_owner (usually the worker's name) so the provider can derive one.",
	"takoform.provider/revision-replaced-in-place": "Remove the pinned name so the new revision gets a derived name, or give the new revision a new name.",
	"takoform.provider/space-missing":              "Set space on the resource, or space in the provider block (or TAKOFORM_SPACE).",
	"takoform.provider/already-exists":             "If another resource already manages it (in this or another configuration: see tofu state list), choose another name: importing it would bind two resources to one host object. If none does, it is what an earlier run created before its answer was lost: import it (tofu import ADDRESS 'SPACE/NAME', or an import block; after a killed apply, takoform recover prints the import blocks for every such resource).",
	"takoform.provider/uid-mismatch":               "Import the resource now under this name, restore the recorded one, or delete the replacement; state was kept.",
	"takoform.provider/unknown-form-ref":           "Use a provider build that supports this FormRef, or import the resource under a FormRef this build knows.",
	"takoform.provider/data-source-not-found":      "Check name and space (the provider's space when the data source sets none), or create the resource first: a data source only reads a resource that exists.",
	"takoform.provider/relation-target-changed":    "Apply again to re-pin the relation (revision Forms are replaced instead).",
	"takoform.provider/host-does-not-support-form": "Install the Form on the host, or point the provider at a host that supports it.",
	"takoform.provider/host-limit-exceeded":        "Stay within the host limit the message names, or ask the host operator to raise it.",
	"takoform.provider/endpoint-origin-mismatch":   "Set the provider's endpoint to <advertised origin> (the origin the host advertises), or start the host with --public-url <endpoint> if that is the address clients should use.",
	"takoform.provider/host-response-invalid":      "Report the request to the host operator: the answer broke the protocol (no remedy is guessed).",
	"takoform.provider/import-id":                  "Use NAME, SPACE/NAME, or a JSON object {\"space\"?, \"apiVersion\", \"kind\", \"definitionVersion\", \"schemaDigest\", \"name\"}.",
	"takoform.provider/import-identity":            "Use an import identity {space (optional), name, and api_version, kind, definition_version, schema_digest all four or none} naming a FormRef this build supports.",
	"takoform.provider/state-upgrade":              "Keep the state file (nothing was changed) and report the message to the provider's maintainers, or use the provider build that wrote this state.",
	"takoform.provider/ref-lacks-attribute":        "Remove the attribute from this resource's configuration, or replace the resource so it is created under the type's current FormRef.",
	"takoform.provider/plan-rule":                  "Correct the value the message names; the host would refuse it too.",
	"takoform.provider/operation-pending":          "Run apply again: the host accepted the change and is still working on it.",
	"takoform.provider/bundle-files":               "Check main_module and modules: every module needs a readable content_file and main_module must name a listed module.",
	"takoform.provider/module-syntax":              "Fix the module's syntax at the line and column the message names: the host refuses a version whose bundle holds a module it cannot parse.",
	"takoform.provider/endpoint-missing":           "Set endpoint in the provider block or TAKOFORM_ENDPOINT to the host's origin, e.g. http://127.0.0.1:8080.",
	"takoform.provider/host-unreachable":           "Check that the host is running and reachable at the endpoint, then apply again: a change the host never received is made then, and a create whose answer was lost is refused as already existing, naming the import ID that adopts it.",
	"takoform.provider/interrupted":                "Run apply again: this resource's change was not sent, so the next run makes it.",
	"takoform.provider/duplicate-address":          "Rename one of the two resources (or give one another space): one host object is managed by one resource only, and importing it into the other would alias them again.",
	"takoform.provider/internal":                   "Report this message to the provider's maintainers; nothing in the configuration explains it.",
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
	code, repair, retry := id.Code, ProviderRepairs[id.Code], ""
	switch {
	case we != nil:
		line("Host", we.Message)
		info, ok := wire.Taxonomy[we.Code]
		code = fmt.Sprintf("%s (host, HTTP %d)", we.Code, info.Status)
		repair = info.Repair
		if r, ok := HostReasonRepairs[we.HostCode]; ok {
			repair = r
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
			code, retry = "takoform.provider/host-response-invalid", "no"
			repair = ProviderRepairs[code]
		}
	case errors.As(err, &om):
		// the endpoint names the host another way than the host names itself
		line("Cause", "the host advertises another origin than the endpoint: "+om.Error())
		code, retry = "takoform.provider/endpoint-origin-mismatch", "no"
		repair = strings.NewReplacer("<advertised origin>", om.Advertised, "<endpoint>", om.Configured).Replace(ProviderRepairs[code])
	case errors.As(err, &pe):
		line("Cause", "protocol-invalid answer: "+pe.Error())
		code, repair, retry = "takoform.provider/host-response-invalid", ProviderRepairs["takoform.provider/host-response-invalid"], "no"
	case errors.As(err, &te):
		line("Cause", err.Error())
		if code == "" {
			code, repair = "takoform.provider/host-unreachable", ProviderRepairs["takoform.provider/host-unreachable"]
		}
	case err != nil:
		line("Cause", err.Error())
	}
	if code == "" {
		code, repair = "takoform.provider/internal", ProviderRepairs["takoform.provider/internal"]
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
