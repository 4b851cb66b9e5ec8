package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// ProtocolError is an answer the client cannot trust (spec/host-api-v1alpha3.md §3.1, §3.7,
// §5.1): a non-2xx answer that is not a valid error envelope (unknown code,
// a code with another HTTP status, retryable:true on a non-retryable code,
// missing members, non-JSON, a router 404 without an envelope), a 2xx
// answer with the wrong status, an empty 200 body, a non-empty 204 body, a
// duplicate or unknown member, a refused redirect, an oversized body, or a
// resource that does not echo what was asked for. A ProtocolError never
// means "absent" (see IsNotFound). On a mutation the outcome is unknown:
// replaying the same request with IdempotencyKey is safe.
type ProtocolError struct {
	Op             string // route, e.g. "read"
	Method         string
	URL            string
	Status         int    // HTTP status of the answer; 0 when there was none
	Reason         string // what was wrong
	Err            error  // underlying finding, e.g. *ijson.Error; never a *wire.Error
	RequestID      string // the answer's requestId, when it carried one
	IdempotencyKey string // set on mutations
}

func (e *ProtocolError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "takoform: %s: protocol-invalid answer", e.Op)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	b.WriteString(": " + e.Reason)
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	if e.IdempotencyKey != "" {
		b.WriteString("; the outcome is unknown: replay with Idempotency-Key " + e.IdempotencyKey)
	}
	return b.String()
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// TransportError is a request that got no complete answer (connection
// refused or reset, context ended, body cut short). It is never retried
// automatically (spec/host-api-v1alpha3.md §3.5). When Mutation is set the outcome is unknown:
// the request may or may not have taken effect, and replaying it with the
// same IdempotencyKey is safe and tells which.
type TransportError struct {
	Op             string
	Method         string
	URL            string
	Mutation       bool
	IdempotencyKey string
	Err            error
}

func (e *TransportError) Error() string {
	msg := fmt.Sprintf("takoform: %s: %s %s: no complete answer: %v", e.Op, e.Method, e.URL, e.Err)
	if e.Mutation {
		msg += "; the outcome is unknown"
		if e.IdempotencyKey != "" {
			msg += ": replay the same request with Idempotency-Key " + e.IdempotencyKey + " to learn it"
		}
	}
	return msg
}

func (e *TransportError) Unwrap() error { return e.Err }

// OutcomeUnknown reports whether the request may have changed host state.
func (e *TransportError) OutcomeUnknown() bool { return e.Mutation }

// OperationFailedError is an operation that settled with an error (spec/host-api-v1alpha3.md
// §4), including cancellation (code operation_cancelled). Err holds the
// terminal error as a *wire.Error; it is deliberately not unwrapped: an
// operation's error is not an HTTP answer, so it never means "absent" —
// an exact resource read decides.
type OperationFailedError struct {
	Operation *wire.Operation
	Err       *wire.Error
}

func (e *OperationFailedError) Error() string {
	return fmt.Sprintf("takoform: operation %s failed: %v", e.Operation.ID, e.Err)
}

// OperationWaitError is a wait that stopped before the operation settled:
// the context ended (or its deadline could not fit the next poll), a poll
// got no complete answer, or the host refused a poll (e.g.
// operation_not_found). ID is what a caller persists to resume (spec/host-api-v1alpha3.md §4,
// decision 0017); Last is the last state seen, if any.
type OperationWaitError struct {
	ID   string
	Last *wire.Operation
	Err  error
}

func (e *OperationWaitError) Error() string {
	return fmt.Sprintf("takoform: operation %s has not settled: %v", e.ID, e.Err)
}

func (e *OperationWaitError) Unwrap() error { return e.Err }

// IsNotFound reports whether err is the host's valid resource_not_found
// envelope answered with HTTP 404 — the only answer that means "absent"
// (spec/host-api-v1alpha3.md §3.4 (6)). It is false for a *ProtocolError, for an operation's
// terminal error and for any error met while waiting for an operation, and
// for every other code. It is meaningful on resource routes.
func IsNotFound(err error) bool {
	for err != nil {
		switch e := err.(type) {
		case *wire.Error:
			return e.Code == wire.ResourceNotFound && e.Status() == 404
		case *ProtocolError, *OperationFailedError, *OperationWaitError:
			return false
		}
		err = errors.Unwrap(err)
	}
	return false
}

func (c *Client) protocolError(r *request, status int, reason string, err error) *ProtocolError {
	e := &ProtocolError{Op: r.op, Method: r.method, URL: r.url(c.base), Status: status, Reason: reason, Err: err}
	if r.mutation {
		e.IdempotencyKey = r.key
	}
	return e
}

// hostError decodes a non-2xx answer into a *wire.Error after
// wire.CheckEnvelope (spec/host-api-v1alpha3.md §3.7), reporting whether the lane lets the
// client retry it: retryable:true and a retryable code. Anything else is a
// *ProtocolError.
func (c *Client) hostError(r *request, resp *response) (*wire.Error, bool, error) {
	if len(resp.body) == 0 {
		return nil, false, c.protocolError(r, resp.status, fmt.Sprintf("HTTP %d carries no error envelope (a router or proxy answer, not the host's)", resp.status), nil)
	}
	body, err := decodeEnvelope(resp.status, resp.body)
	if err != nil {
		pe := c.protocolError(r, resp.status, fmt.Sprintf("HTTP %d is not a valid error envelope", resp.status), err)
		pe.RequestID = body.RequestID
		return nil, false, pe
	}
	we := &wire.Error{Code: body.Code, Message: body.Message, HostCode: body.HostCode, RequestID: body.RequestID}
	if len(body.Details) > 0 {
		v, _ := ijson.Decode(body.Details) // already checked as part of the body
		switch d := v.(type) {
		case map[string]any:
			we.Details = d
		case nil:
		default:
			we.Details = map[string]any{"value": d} // a non-object details document
		}
	}
	return we, body.Retryable && wire.Taxonomy[body.Code].Retryable, nil
}

// decodeEnvelope strictly decodes and checks an error envelope (spec/host-api-v1alpha3.md
// §3.7); the returned body is usable (for its requestId) even on error.
func decodeEnvelope(status int, data []byte) (wire.ErrorBody, error) {
	var env wire.ErrorEnvelope
	if err := decodeStrict(data, &env, "/error", "/error/code", "/error/message", "/error/requestId", "/error/retryable"); err != nil {
		return env.Error, err
	}
	if err := wire.CheckEnvelope(status, env.Error); err != nil {
		return env.Error, err
	}
	if v, ok := rawMember(data, "/error/hostCode"); ok && (v.Kind() == 'n' || env.Error.HostCode == "") {
		return env.Error, errors.New("error.hostCode is present but empty or null")
	}
	return env.Error, nil
}

// Unwrap exposes the host's error so callers can read its code.
func (e *OperationFailedError) Unwrap() error { return e.Err }
