package agentregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// The error codes of PROTOCOL.md section 1 and docs/errors.md. Branch on these, never on a
// message's text.
const (
	CodeInvalidRequest  = "invalid_request"
	CodeInvalidSpec     = "invalid_spec"
	CodeInvalidCard     = "invalid_card"
	CodeNotFound        = "not_found"
	CodeUnknownInstance = "unknown_instance"
	CodeNoRoute         = "no_route"
	CodeConflict        = "conflict"
	CodePayloadTooLarge = "payload_too_large"
	CodeLimitExceeded   = "limit_exceeded"
	CodeUnavailable     = "unavailable"
	CodeStaleView       = "stale_view"
	CodeInternal        = "internal"
)

// Issue names one problem of a refused request by its path (capabilities.0.name).
type Issue struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error is a refusal from the registry, or from a local check that applies the registry's
// rules (a registry file, a spec validated before it is sent, a route with no candidate).
// Use errors.As to reach it:
//
//	var rerr *agentregistry.Error
//	if errors.As(err, &rerr) && rerr.Code == agentregistry.CodeNotFound { ... }
type Error struct {
	// Code is one of the Code* constants (or a newer code this client does not know).
	Code string `json:"code"`
	// Status is the HTTP-like status of the Nats-Service-Error-Code header (0 for local errors).
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Issues  []Issue `json:"issues,omitempty"`
	// Subject is the subject the request went to (empty for local errors).
	Subject string `json:"-"`
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	b.WriteString(": ")
	b.WriteString(e.Message)
	for _, is := range e.Issues {
		fmt.Fprintf(&b, "; %s: %s", is.Path, is.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, &Error{Code: CodeNotFound}) match on the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == ""
}

// Sentinels for errors.Is: errors.Is(err, agentregistry.ErrNotFound).
var (
	ErrInvalidRequest  = &Error{Code: CodeInvalidRequest}
	ErrInvalidSpec     = &Error{Code: CodeInvalidSpec}
	ErrInvalidCard     = &Error{Code: CodeInvalidCard}
	ErrNotFound        = &Error{Code: CodeNotFound}
	ErrUnknownInstance = &Error{Code: CodeUnknownInstance}
	ErrNoRoute         = &Error{Code: CodeNoRoute}
	ErrConflict        = &Error{Code: CodeConflict}
	ErrPayloadTooLarge = &Error{Code: CodePayloadTooLarge}
	ErrLimitExceeded   = &Error{Code: CodeLimitExceeded}
	ErrUnavailable     = &Error{Code: CodeUnavailable}
	ErrStaleView       = &Error{Code: CodeStaleView}
	ErrInternal        = &Error{Code: CodeInternal}
)

// Retryable reports whether the same request may succeed later (5xx codes).
func (e *Error) Retryable() bool {
	return e.Code == CodeUnavailable || e.Code == CodeStaleView || e.Code == CodeInternal
}

const (
	headerErrorCode = "Nats-Service-Error-Code"
	headerError     = "Nats-Service-Error"
)

// replyError returns the registry's refusal carried by msg, or nil when msg is a success.
func replyError(subject string, msg *nats.Msg) *Error {
	status := msg.Header.Get(headerErrorCode)
	if status == "" {
		return nil
	}
	e := &Error{Subject: subject, Message: msg.Header.Get(headerError)}
	e.Status, _ = strconv.Atoi(status)
	var body struct {
		Error *Error `json:"error"`
	}
	if json.Unmarshal(msg.Data, &body) == nil && body.Error != nil {
		e.Code, e.Issues = body.Error.Code, body.Error.Issues
		if body.Error.Message != "" {
			e.Message = body.Error.Message
		}
	}
	if e.Code == "" {
		e.Code = codeForStatus(e.Status)
	}
	return e
}

// codeForStatus names the code of a reply that had the headers but no error body.
func codeForStatus(status int) string {
	switch {
	case status == 404:
		return CodeNotFound
	case status == 409:
		return CodeConflict
	case status == 413:
		return CodePayloadTooLarge
	case status == 429:
		return CodeLimitExceeded
	case status == 503:
		return CodeUnavailable
	case status >= 400 && status < 500:
		return CodeInvalidRequest
	default:
		return CodeInternal
	}
}

// IsUnreachable reports whether err means no registry answered: nobody listens on the
// subject, the request timed out, or the connection is closed or reconnecting.
func IsUnreachable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrConnectionDraining) || errors.Is(err, context.DeadlineExceeded)
}
