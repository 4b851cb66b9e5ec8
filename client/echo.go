package client

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

var (
	operationPattern = regexp.MustCompile(`^op_[A-Za-z0-9][A-Za-z0-9._-]{0,124}$`)
	uploadPattern    = regexp.MustCompile(`^up_[A-Za-z0-9][A-Za-z0-9._-]{0,124}$`)
)

// CanonicalPositive reports whether s is a canonical positive decimal in
// 1..9223372036854775807 with no sign and no leading zero: the grammar of
// generation and revision (spec/host-api-v1alpha3.md §1.5).
func CanonicalPositive(s string) bool {
	if len(s) == 0 || len(s) > 19 || s[0] < '1' || s[0] > '9' || !allDigits(s) {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// VerifyResource checks that a resource answer is the one asked for
// (spec/host-api-v1alpha3.md §5.1): apiVersion, kind, all four form.formRef members,
// metadata.name and metadata.space exactly as in addr; uid in the UID
// grammar (and equal to expectedUID when that is non-empty);
// generation, revision and status.observedGeneration canonical positive
// decimals; spec an object; status.conditions present, at most 16, from
// the closed vocabularies. A mismatch is a *ProtocolError: substitution
// fails closed.
func VerifyResource(res *wire.Resource, addr Address, expectedUID string) error {
	if err := checkResource(res, addr, expectedUID); err != nil {
		return &ProtocolError{Op: "verify", Reason: "the resource answer is not the one asked for", Err: err}
	}
	return nil
}

func checkResource(res *wire.Resource, a Address, expectedUID string) error {
	m := res.Metadata
	switch {
	case res.APIVersion != a.Ref.APIVersion:
		return fmt.Errorf("apiVersion %q echoes a different Form group than the %q asked for", res.APIVersion, a.Ref.APIVersion)
	case res.Kind != a.Ref.Kind:
		return fmt.Errorf("kind %q is not the %q asked for", res.Kind, a.Ref.Kind)
	case res.Form.FormRef != a.Ref:
		return fmt.Errorf("form.formRef {%s} is not the exact FormRef asked for {%s}", res.Form.FormRef, a.Ref)
	case m.Name != a.Name:
		return fmt.Errorf("metadata.name %q is not the %q asked for", m.Name, a.Name)
	case m.Space != a.Space:
		return fmt.Errorf("metadata.space %q is not the %q asked for", m.Space, a.Space)
	case res.Form.PackageDigest != "" && !ijson.ValidDigest(res.Form.PackageDigest):
		return fmt.Errorf("form.packageDigest %q is not a digest", res.Form.PackageDigest)
	case !wire.ValidUID(m.UID):
		return fmt.Errorf("metadata.uid %q is absent or not a UID", m.UID)
	case !CanonicalPositive(m.Generation):
		return fmt.Errorf("metadata.generation %q is absent or not a canonical positive decimal", m.Generation)
	case !CanonicalPositive(m.Revision):
		return fmt.Errorf("metadata.revision %q is absent or not a canonical positive decimal", m.Revision)
	case expectedUID != "" && m.UID != expectedUID:
		return fmt.Errorf("metadata.uid %q is not the expected UID %q", m.UID, expectedUID)
	case !isObject(res.Spec):
		return errors.New("spec is absent or not an object")
	}
	return checkStatus(&res.Status)
}

func checkStatus(s *wire.Status) error {
	switch {
	case !CanonicalPositive(s.ObservedGeneration):
		return fmt.Errorf("status.observedGeneration %q is absent or not a canonical positive decimal", s.ObservedGeneration)
	case s.Conditions == nil:
		return errors.New("status.conditions is absent")
	case len(s.Conditions) > wire.MaxConditions:
		return fmt.Errorf("status.conditions has %d entries; at most %d", len(s.Conditions), wire.MaxConditions)
	case len(s.Observed) > 0 && !isObject(s.Observed):
		return errors.New("status.observed is not an object")
	case len(s.Outputs) > 0 && !isObject(s.Outputs):
		return errors.New("status.outputs is not an object")
	}
	for i, c := range s.Conditions {
		at := func() string { return fmt.Sprintf("status.conditions[%d]", i) } // only for a refusal
		switch {
		case !slices.Contains(wire.ConditionTypes, c.Type):
			return fmt.Errorf("%s.type %q is not in the closed vocabulary", at(), c.Type)
		case !slices.Contains(wire.ConditionStatuses, c.Status):
			return fmt.Errorf("%s.status %q is not True, False or Unknown", at(), c.Status)
		case !slices.Contains(wire.ConditionReasons, c.Reason):
			return fmt.Errorf("%s.reason %q is not in the closed portable vocabulary", at(), c.Reason)
		case !rfc3339(c.LastTransitionTime):
			return fmt.Errorf("%s.lastTransitionTime %q is not an RFC 3339 date-time", at(), c.LastTransitionTime)
		case utf8.RuneCountInString(c.HostReason) > 256:
			return fmt.Errorf("%s.hostReason is longer than 256 characters", at())
		case utf8.RuneCountInString(c.Message) > 4096:
			return fmt.Errorf("%s.message is longer than 4096 characters", at())
		}
	}
	return nil
}

func rfc3339(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// checkETag checks the answer's ETag against the resource revision: it
// must be exactly one strong ETag "<revision>" (spec/host-api-v1alpha3.md §1.5, §5.1). An
// absent ETag is accepted only when required is false (observe).
func checkETag(h http.Header, revision string, required bool) error {
	vals := h.Values("ETag")
	switch {
	case len(vals) == 0 && required:
		return errors.New("the ETag header is absent")
	case len(vals) == 0:
		return nil
	case len(vals) > 1:
		return fmt.Errorf("the answer carries %d ETag headers", len(vals))
	case vals[0] != `"`+revision+`"`:
		return fmt.Errorf("ETag %s is not the quoted revision %q", vals[0], `"`+revision+`"`)
	}
	return nil
}

// fenceRule is what a mutation answer's generation must be.
type fenceRule int

const (
	genAny      fenceRule = iota // read: any generation
	genCreated                   // a create or new adoption: generation 1
	genAdvanced                  // update or fenced import: the fence or the fence + 1
	genEqual                     // observe: exactly the fence
)

func checkGeneration(got, fence string, rule fenceRule) error {
	switch rule {
	case genCreated:
		if got != "1" {
			return fmt.Errorf("a created resource has metadata.generation %q; it starts at \"1\"", got)
		}
	case genEqual:
		if got != fence {
			return fmt.Errorf("metadata.generation %q is not the fenced generation %q", got, fence)
		}
	case genAdvanced:
		f, _ := strconv.ParseInt(fence, 10, 64)
		if got != fence && (f == 1<<63-1 || got != strconv.FormatInt(f+1, 10)) {
			return fmt.Errorf("metadata.generation %q is neither the fenced generation %q nor the next one", got, fence)
		}
	}
	return nil
}
