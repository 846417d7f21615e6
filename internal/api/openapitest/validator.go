// Package openapitest checks HTTP responses of the API against its OpenAPI
// document (internal/api/openapi.yaml) in tests.
//
// It reads the document from the source tree instead of importing package api,
// so that tests inside package api can use it without an import cycle.
package openapitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/router"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// BasePath is the path prefix of every API route, the document's server URL
// (/v1, which the served document makes absolute) and the API Gateway stage.
const BasePath = "/v1"

// Validator checks responses against the OpenAPI document. It is safe for
// concurrent use by parallel tests.
type Validator struct {
	// mu serializes calls into libopenapi-validator: v0.14.0 compiles response
	// header schemas lazily and races (go test -race) when used concurrently.
	mu     sync.Mutex
	v      validator.Validator
	router router.Router
	model  *v3.Document

	// seen records "METHOD /path" -> status of every response validated
	// against a documented operation (see StatusReport).
	seenMu sync.Mutex
	seen   map[string]map[int]bool
}

var shared struct {
	once    sync.Once
	created bool
	v       *Validator
	err     error
}

// Shared returns the process-wide Validator if a test has created it with New.
func Shared() (*Validator, bool) {
	if !shared.created || shared.err != nil {
		return nil, false
	}
	return shared.v, true
}

// New returns the process-wide Validator, parsing the document on first use.
// It fails the test if the document cannot be read, parsed or built.
func New(tb testing.TB) *Validator {
	tb.Helper()
	shared.once.Do(func() {
		shared.created = true
		spec, err := os.ReadFile(documentPath())
		if err != nil {
			shared.err = fmt.Errorf("read openapi document: %w", err)
			return
		}
		shared.v, shared.err = NewFromBytes(spec)
	})
	if shared.err != nil {
		tb.Fatalf("openapitest: %v", shared.err)
	}
	return shared.v
}

// NewFromBytes builds a Validator for an OpenAPI 3.1 document given as YAML or
// JSON. Most tests want New, which caches the real document.
func NewFromBytes(spec []byte) (*Validator, error) {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, fmt.Errorf("parse openapi document: %w", err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("build openapi v3 model: %w", err)
	}
	// Routes are found with the library's path-only matching (its default, and
	// WithPathOnlyMatching for our own router): the request's scheme and host
	// are ignored, and the path of the first server URL that prefixes the
	// request path ("/v1") is stripped before the
	// path templates ("/events/{id}") are matched. Strict server matching would
	// also compare the host and reject httptest servers on random ports.
	// Format assertions make date-time (and other formats) checked, not
	// merely annotated.
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions())
	if len(errs) > 0 {
		return nil, fmt.Errorf("build openapi validator: %w", errors.Join(errs...))
	}
	return &Validator{
		v:      v,
		router: router.NewRouter(&model.Model, router.WithPathOnlyMatching()),
		model:  &model.Model,
		seen:   map[string]map[int]bool{},
	}, nil
}

// CheckResponse fails the test (without stopping it) when res does not match
// the document for req. body is the already-read response body; res.Body is
// replaced by a fresh reader over it.
func (v *Validator) CheckResponse(tb testing.TB, req *http.Request, res *http.Response, body []byte) {
	tb.Helper()
	if problems := v.Validate(req, res, body); len(problems) > 0 {
		tb.Errorf("openapitest: %s %s -> %d does not match the OpenAPI document:\n  %s\nbody: %s",
			req.Method, req.URL.RequestURI(), res.StatusCode, strings.Join(problems, "\n  "), truncate(body, 2000))
	}
}

// Validate returns a description of every way res does not match the document
// for req; nil means it matches.
//
// A request whose path is outside BasePath or matches no documented path, or
// whose method the path does not document, is not in the contract's table: its
// response must be the error envelope (405 also with Allow). An OPTIONS
// request the document does not describe (a CORS preflight) may instead answer
// 2xx with an empty body. HEAD responses have no body to check.
func (v *Validator) Validate(req *http.Request, res *http.Response, body []byte) []string {
	res.Body = io.NopCloser(bytes.NewReader(body))
	if req.Method == http.MethodHead {
		return nil
	}
	route, routeErr := v.findRoute(req)
	if routeErr != nil {
		if req.Method == http.MethodOptions && res.StatusCode/100 == 2 && len(bytes.TrimSpace(body)) == 0 {
			return nil
		}
		problems := checkErrorEnvelope(res, body)
		if errors.Is(routeErr, router.ErrMethodNotAllowed) && res.StatusCode == http.StatusMethodNotAllowed && res.Header.Get("Allow") == "" {
			problems = append(problems, "405 response without an Allow header")
		}
		if len(problems) > 0 {
			return append([]string{"route not in the document (" + routeErr.Error() + "); expected the error envelope"}, problems...)
		}
		return nil
	}
	v.observe(req.Method+" "+route.Path, res.StatusCode)
	v.mu.Lock()
	ok, verrs := v.v.GetResponseBodyValidator().ValidateResponseBodyWithPathItem(req, res, route.PathItem, route.Path)
	v.mu.Unlock()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if ok && len(verrs) == 0 {
		return nil
	}
	var problems []string
	for _, e := range verrs {
		msg := e.Message
		if e.Reason != "" && e.Reason != e.Message {
			msg += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			loc := f.FieldPath
			if loc == "" {
				loc = "/" + strings.Join(f.InstancePath, "/")
			}
			msg += fmt.Sprintf("\n    at %s: %s", loc, f.Reason)
		}
		problems = append(problems, msg)
	}
	if len(problems) == 0 {
		problems = []string{"response rejected without a reason"}
	}
	return problems
}

func (v *Validator) observe(op string, status int) {
	v.seenMu.Lock()
	defer v.seenMu.Unlock()
	if v.seen[op] == nil {
		v.seen[op] = map[int]bool{}
	}
	v.seen[op][status] = true
}

// StatusReport compares the statuses of the responses validated so far with
// the document, per operation ("POST /orders/preview"): undocumented lists
// each observed "operation status" that the operation does not document (nor
// covers with a range such as 2XX, or default); unobserved lists each
// documented one that no response had. Both are sorted.
func (v *Validator) StatusReport() (undocumented, unobserved []string) {
	v.seenMu.Lock()
	defer v.seenMu.Unlock()
	documented := v.documentedStatuses()
	for op, statuses := range v.seen {
		for status := range statuses {
			if !covers(documented[op], status) {
				undocumented = append(undocumented, fmt.Sprintf("%s %d", op, status))
			}
		}
	}
	for op, codes := range documented {
		for _, code := range codes {
			if !observedAny(v.seen[op], code) {
				unobserved = append(unobserved, op+" "+code)
			}
		}
	}
	sort.Strings(undocumented)
	sort.Strings(unobserved)
	return undocumented, unobserved
}

// documentedStatuses maps "METHOD /path" to the response codes the document
// gives the operation ("200", "4XX", "default").
func (v *Validator) documentedStatuses() map[string][]string {
	out := map[string][]string{}
	for path, item := range v.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			key := strings.ToUpper(method) + " " + path
			if op.Responses == nil {
				continue
			}
			for code := range op.Responses.Codes.KeysFromOldest() {
				out[key] = append(out[key], code)
			}
			if op.Responses.Default != nil {
				out[key] = append(out[key], "default")
			}
		}
	}
	return out
}

func covers(codes []string, status int) bool {
	for _, c := range codes {
		if matchesCode(c, status) {
			return true
		}
	}
	return false
}

func observedAny(statuses map[int]bool, code string) bool {
	for s := range statuses {
		if matchesCode(code, s) {
			return true
		}
	}
	return false
}

// matchesCode reports whether a documented response code ("404", "2XX",
// "default") covers status.
func matchesCode(code string, status int) bool {
	switch {
	case code == "default":
		return true
	case len(code) == 3 && strings.HasSuffix(strings.ToUpper(code), "XX"):
		return int(code[0]-'0') == status/100
	default:
		return code == strconv.Itoa(status)
	}
}

// ValidateSchema returns every way the JSON document body does not match the
// schema components.schemas[name]; nil means it matches.
func (v *Validator) ValidateSchema(name string, body []byte) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	proxy, ok := v.model.Components.Schemas.Get(name)
	if !ok {
		return []string{"no schema " + name + " in components"}
	}
	schema := proxy.Schema()
	if schema == nil {
		return []string{"schema " + name + " does not build: " + fmt.Sprint(proxy.GetBuildError())}
	}
	ok, errs := schema_validation.NewSchemaValidator().ValidateSchemaBytes(schema, body)
	if ok && len(errs) == 0 {
		return nil
	}
	var problems []string
	for _, e := range errs {
		msg := e.Message
		if e.Reason != "" && e.Reason != e.Message {
			msg += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			msg += fmt.Sprintf("\n    at %s: %s", f.FieldPath, f.Reason)
		}
		problems = append(problems, msg)
	}
	if len(problems) == 0 {
		problems = []string{"rejected without a reason"}
	}
	return problems
}

// findRoute resolves req to a documented operation. Requests outside BasePath
// are never in the document, even though the library's path-only matching
// would also accept them unprefixed.
func (v *Validator) findRoute(req *http.Request) (*router.Route, error) {
	p := req.URL.Path
	if p != BasePath && !strings.HasPrefix(p, BasePath+"/") {
		return nil, fmt.Errorf("path %q is outside %s: %w", p, BasePath, router.ErrPathNotFound)
	}
	v.mu.Lock()
	route, err := v.router.FindRoute(req)
	v.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return route, nil
}

// Operation returns the documented operation for req, or nil if the document
// has none.
func (v *Validator) Operation(req *http.Request) *v3.Operation {
	route, err := v.findRoute(req)
	if err != nil {
		return nil
	}
	return route.Operation
}

// checkErrorEnvelope reports how a response differs from
// {"error":{"code":string,"message":string,"param"?:string}} with the common
// headers.
func checkErrorEnvelope(res *http.Response, body []byte) []string {
	var problems []string
	if res.StatusCode < 400 {
		problems = append(problems, fmt.Sprintf("status %d is not an error status", res.StatusCode))
	}
	if ct := res.Header.Get("Content-Type"); !strings.Contains(strings.ToLower(ct), "json") {
		problems = append(problems, fmt.Sprintf("Content-Type %q is not JSON", ct))
	}
	for _, h := range []string{"Tix-Request-Id", "Tix-Version"} {
		if res.Header.Get(h) == "" {
			problems = append(problems, "missing header "+h)
		}
	}
	var env struct {
		Error *struct {
			Code    *string         `json:"code"`
			Message *string         `json:"message"`
			Param   json.RawMessage `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return append(problems, "body is not a JSON object: "+err.Error())
	}
	if env.Error == nil {
		return append(problems, `body has no "error" object`)
	}
	if env.Error.Code == nil || *env.Error.Code == "" {
		problems = append(problems, `error.code is missing or empty`)
	}
	if env.Error.Message == nil {
		problems = append(problems, `error.message is missing`)
	}
	if len(env.Error.Param) > 0 {
		var s string
		if err := json.Unmarshal(env.Error.Param, &s); err != nil {
			problems = append(problems, "error.param is not a string")
		}
	}
	return problems
}

// documentPath locates internal/api/openapi.yaml: next to this package's
// source, or by walking up from the working directory to the module root.
func documentPath() string {
	const rel = "internal/api/openapi.yaml"
	if _, file, _, ok := runtime.Caller(0); ok {
		p := filepath.Join(filepath.Dir(file), "..", "openapi.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return rel
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return rel
		}
		dir = parent
	}
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}
