// Package logging carries a request's id in its context and adds it to every
// log record written with that context, so that no log call passes it by hand.
package logging

import (
	"context"
	"log/slog"
)

// RequestIDKey is the attribute that carries the request id in log records.
const RequestIDKey = "request_id"

type ctxKey struct{}

// WithRequestID returns ctx carrying the request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// RequestID is the request id ctx carries, or "" outside a request.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Handler wraps a slog.Handler: a record logged with a context that carries a
// request id (slog's *Context methods) gets it as the request_id attribute.
type Handler struct{ inner slog.Handler }

// NewHandler wraps h.
func NewHandler(h slog.Handler) *Handler { return &Handler{inner: h} }

// Enabled reports whether the wrapped handler logs at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle adds the context's request id, if any, and passes the record on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String(RequestIDKey, id))
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs returns the wrapper over the wrapped handler with attrs.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{inner: h.inner.WithAttrs(attrs)}
}

// WithGroup returns the wrapper over the wrapped handler with the group.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name)}
}
