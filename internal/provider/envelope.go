package provider

import (
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

// The envelope: the attributes every Form resource type has beside its Form
// fields (buildSchema). This file is the one place their names are spelt
// and the one place the attribute map is read into and written from the
// typed envelope; the Form fields stay untyped, their schemas come from
// definitions (Codec).
const (
	attrName              = "name"
	attrSpace             = "space"
	attrUID               = "uid"
	attrGeneration        = "generation"
	attrRevision          = "revision"
	attrConditions        = "conditions"
	attrReady             = "ready"
	attrOutputsJSON       = "outputs_json"
	attrAPIVersion        = "form_api_version"
	attrKind              = "form_kind"
	attrDefinitionVersion = "form_definition_version"
	attrSchemaDigest      = "form_schema_digest"
	attrPackageDigest     = "form_package_digest"
	attrDriftReason       = "relation_drift_reason"
	attrPendingOperation  = "pending_operation_id"
	attrCreateTimeout     = "create_timeout"
	attrUpdateTimeout     = "update_timeout"
	attrDeleteTimeout     = "delete_timeout"
	attrRevisionOwner     = "revision_owner" // revision types only
)

// hostReported are the envelope attributes the host reports: an unchanged
// resource keeps them (keepHostReported).
var hostReported = []string{attrUID, attrGeneration, attrRevision, attrConditions, attrReady, attrOutputsJSON,
	attrAPIVersion, attrKind, attrDefinitionVersion, attrSchemaDigest, attrPackageDigest, attrDriftReason, attrPendingOperation}

// envelope is the string-valued envelope of one attribute map, read once
// per request (envelopeOf); a null or unknown attribute reads as "".
type envelope struct {
	Name, Space               string
	UID, Generation, Revision string
	Ref                       form.FormRef // the FormRef recorded in state (form_*)
	PackageDigest             string
	DriftReason               string // ExternalChange or DependencyMissing while a relation target drifted
	PendingOperation          string // an accepted mutation that has not settled (pending.go)
	CreateTimeout             string
	UpdateTimeout             string
	DeleteTimeout             string
}

// envelopeOf reads the envelope of attrs; it copies nothing but strings.
func envelopeOf(attrs map[string]any) envelope {
	return envelope{
		Name: str(attrs, attrName), Space: str(attrs, attrSpace),
		UID: str(attrs, attrUID), Generation: str(attrs, attrGeneration), Revision: str(attrs, attrRevision),
		Ref: form.FormRef{APIVersion: str(attrs, attrAPIVersion), Kind: str(attrs, attrKind),
			DefinitionVersion: str(attrs, attrDefinitionVersion), SchemaDigest: str(attrs, attrSchemaDigest)},
		PackageDigest: str(attrs, attrPackageDigest), DriftReason: str(attrs, attrDriftReason),
		PendingOperation: str(attrs, attrPendingOperation),
		CreateTimeout:    str(attrs, attrCreateTimeout), UpdateTimeout: str(attrs, attrUpdateTimeout), DeleteTimeout: str(attrs, attrDeleteTimeout),
	}
}

// setName plans v (a string, Unknown or nil) as the name in plan and keeps
// e in step.
func (e *envelope) setName(plan map[string]any, v any) {
	plan[attrName] = v
	e.Name = stringOr(v)
}

// setSpace plans v (a string, Unknown or nil) as the space in plan and
// keeps e in step.
func (e *envelope) setSpace(plan map[string]any, v any) {
	plan[attrSpace] = v
	e.Space = stringOr(v)
}

// address is the exact address of the resource: its space, its FormRef and
// its name (spec/host-api-v1alpha3.md §1.6).
func (e envelope) address() client.Address {
	return client.Address{Space: e.Space, Ref: e.Ref, Name: e.Name}
}

// precondition fences a mutation on the recorded generation and uid
// (spec/host-api-v1alpha3.md §5.4); empty for a resource not created yet.
func (e envelope) precondition() client.Precondition {
	return client.Precondition{Generation: e.Generation, UID: e.UID}
}

// identity is the diagnostic identity block of the resource of type typ
// bound to ref.
func (e envelope) identity(typ string, ref *form.FormRef) identity {
	return identity{Type: typ, Space: e.Space, Name: e.Name, Form: ref}
}

// fenced adds to id the generation and uid a mutation was fenced on.
func (e envelope) fenced(id identity) identity {
	id.ExpectedGeneration, id.ExpectedUID = e.Generation, e.UID
	return id
}

// timeout is a configured *_timeout duration, or def when it is unset or
// not a positive Go duration.
func timeout(s string, def time.Duration) time.Duration {
	if s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return def
}

// writeHost records in attrs the envelope the host reports for res, with
// its decoded outputs (Codec.Decode): metadata, the exact FormRef, package
// digest, conditions, readiness, relation drift (spec/host-api-v1alpha3.md
// §5.5) and the outputs document; no mutation is pending after an answer.
func writeHost(attrs map[string]any, res *wire.Resource, outputs map[string]any) {
	md := res.Metadata
	attrs[attrName], attrs[attrSpace], attrs[attrUID] = md.Name, md.Space, md.UID
	attrs[attrGeneration], attrs[attrRevision] = md.Generation, md.Revision
	writeRef(attrs, res.Form.FormRef)
	attrs[attrPackageDigest] = nilIfEmpty(res.Form.PackageDigest)
	conds := make([]any, 0, len(res.Status.Conditions))
	for _, cd := range res.Status.Conditions {
		conds = append(conds, map[string]any{
			"type": cd.Type, "status": cd.Status, "reason": cd.Reason, "message": nilIfEmpty(cd.Message),
			"host_reason": nilIfEmpty(cd.HostReason), "observed_generation": res.Status.ObservedGeneration,
			"last_transition_time": cd.LastTransitionTime,
		})
	}
	ready, drift := readiness(res)
	attrs[attrConditions], attrs[attrReady], attrs[attrDriftReason] = conds, ready, nilIfEmpty(drift)
	attrs[attrPendingOperation] = nil
	attrs[attrOutputsJSON] = canonicalText(outputs)
}

// writeRef records ref as the resource's FormRef.
func writeRef(attrs map[string]any, ref form.FormRef) {
	attrs[attrAPIVersion], attrs[attrKind] = ref.APIVersion, ref.Kind
	attrs[attrDefinitionVersion], attrs[attrSchemaDigest] = ref.DefinitionVersion, ref.SchemaDigest
}

// writePending records opID as the accepted, unsettled mutation.
func writePending(attrs map[string]any, opID string) { attrs[attrPendingOperation] = opID }

// keepHostReported copies onto dst, the plan or next state of a resource
// whose desired spec did not change, what the host reported in src: the
// host-reported envelope and c's declared outputs.
func keepHostReported(dst, src map[string]any, c *Codec) {
	for _, k := range hostReported {
		dst[k] = src[k]
	}
	for _, o := range c.Outputs {
		dst[snake(o)] = src[snake(o)]
	}
}

// unknownRepresentation marks what a spec-identical re-apply renders anew
// (planDriftRepair) as unknown: revision, conditions, readiness, drift and
// c's outputs.
func unknownRepresentation(plan map[string]any, c *Codec) {
	for _, k := range []string{attrRevision, attrConditions, attrReady, attrDriftReason, attrOutputsJSON} {
		plan[k] = Unknown
	}
	for _, o := range c.Outputs {
		plan[snake(o)] = Unknown
	}
}

// readiness is what res's Ready condition says: whether it is True, and
// the drift reason while it is False for ExternalChange or
// DependencyMissing (spec/host-api-v1alpha3.md §5.5), else "".
func readiness(res *wire.Resource) (ready bool, drift string) {
	for _, cd := range res.Status.Conditions {
		if cd.Type == "Ready" {
			ready = cd.Status == "True"
			if cd.Status == "False" && (cd.Reason == "ExternalChange" || cd.Reason == "DependencyMissing") {
				drift = cd.Reason
			}
		}
	}
	return ready, drift
}
