package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"

	"tix/internal/jsonkeys"
	"tix/internal/ticketing"
)

// readBody reads a JSON request body whole: a Content-Type other than
// application/json, a body over the size limit, one that does not arrive and
// an empty one are each a 400 invalid_request.
func readBody(r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		// The media type must be application/json exactly; parameters such as
		// charset are allowed ("application/jsonx" is not JSON).
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return nil, ticketing.Invalid("Content-Type", "Content-Type must be application/json (got %q)", ct)
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, ticketing.Invalid("", "request body is larger than the limit of %d bytes", tooBig.Limit)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, ticketing.Invalid("", "the request body did not arrive in time (is it shorter than its Content-Length?)")
		}
		return nil, ticketing.Invalid("", "could not read the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, ticketing.Invalid("", "request body is empty; send a JSON object")
	}
	return body, nil
}

// decodeJSON reads a JSON request body into v. Malformed JSON, a field of the
// wrong type, an unknown field, a field named twice (or twice in different
// case: encoding/json would apply the last) and a body over the size limit are
// each a 400 invalid_request; all but malformed JSON and size name the field
// in param.
func decodeJSON(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var dup *jsonkeys.DuplicateError
	if err := jsonkeys.Check(body); errors.As(err, &dup) {
		return ticketing.Invalid(dup.Param(), "%s; send each field once, spelled as documented", dup)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			path := unknownFieldPath(body, v, strings.Trim(name, `"`))
			return ticketing.Invalid(path, "unknown field %q", path)
		}
		return jsonError(err)
	}
	if dec.More() {
		return ticketing.Invalid("", "request body has data after the JSON object")
	}
	return nil
}

func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return ticketing.Invalid("", "malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return ticketing.Invalid("", "request body must be a JSON object, not %s", typ.Value)
		}
		return ticketing.Invalid(field, "%s must be %s, not %s", field, jsonTypeName(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ticketing.Invalid("", "malformed JSON: the body ends too early")
	}
	return ticketing.Invalid("", "malformed JSON: %v", err)
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return fmt.Sprintf("a %s", kind)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
