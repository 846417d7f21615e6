package api

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"tix/internal/ticketing"
)

// Docs is what GET /v1/docs needs to render the OpenAPI document: the
// renderer's files, served below /v1/docs/ (package apidocs has Redoc's). A
// Server without Docs answers 404 there.
type Docs struct {
	Script  string // the file the page loads, e.g. redoc.standalone.js
	Version string // the renderer's version, in the script's URL for caches
	Files   map[string]DocsFile
}

// DocsFile is one file below /v1/docs/.
type DocsFile struct {
	Body        []byte
	ContentType string
	Gzipped     bool // Body is gzip-compressed: sent as is to clients accepting gzip
}

// docsPage renders /v1/openapi.json with the renderer's script (Redoc reads
// the spec-url of its <redoc> element); %s is the script's path and version.
const docsPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tix API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="/v1/openapi.json"></redoc>
<script src="/v1/docs/%s?v=%s"></script>
</body>
</html>
`

// docsCSP lets the page load only from tix itself: the script, the document,
// the renderer's inline styles and its search worker (a blob).
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docs serves the rendered API reference (no key).
func (s *Server) docs(w http.ResponseWriter, r *http.Request) error {
	if s.Docs == nil {
		return ticketing.Errorf(ticketing.CodeNotFound, "the API reference is not served here; see /v1/openapi.json")
	}
	page := fmt.Sprintf(docsPage, url.PathEscape(s.Docs.Script), url.QueryEscape(s.Docs.Version))
	w.Header().Set("Content-Security-Policy", docsCSP)
	writeStatic(w, r, DocsFile{Body: []byte(page), ContentType: "text/html; charset=utf-8"}, "public, max-age=300")
	return nil
}

// docsAsset serves a file of the API reference page (no key).
func (s *Server) docsAsset(w http.ResponseWriter, r *http.Request) error {
	if r.PathValue("asset") == "errors" {
		return writeErrorDocs(w)
	}
	var f DocsFile
	ok := false
	if s.Docs != nil {
		f, ok = s.Docs.Files[r.PathValue("asset")]
	}
	if !ok {
		return ticketing.Errorf(ticketing.CodeNotFound, "no file %s; the API reference is /v1/docs", r.URL.Path)
	}
	writeStatic(w, r, f, "public, max-age=86400")
	return nil
}

// writeStatic answers 200 with f, gzip-encoded when f is compressed and the
// client accepts gzip, else decompressed.
func writeStatic(w http.ResponseWriter, r *http.Request, f DocsFile, cacheControl string) {
	h := w.Header()
	h.Set("Content-Type", f.ContentType)
	h.Set("Cache-Control", cacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	body := f.Body
	if f.Gzipped {
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
		} else if zr, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, _ = io.ReadAll(zr)
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// acceptsGzip reads every Accept-Encoding value: on AWS the Lambda adapter
// has split the header on its commas already.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(strings.Join(r.Header.Values("Accept-Encoding"), ","), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}
