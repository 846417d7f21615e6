package api

import (
	_ "embed"
	"net/http"
	"strconv"

	"tix/internal/ticketing"
)

// RedocVersion is the npm package redoc whose standalone bundle is committed in
// redoc/ and served by GET /v1/docs. It is pinned in scripts/package.json; a
// test checks that redoc/ holds that version's file byte for byte.
const RedocVersion = "2.5.4"

// The Redoc standalone bundle (MIT, see redoc/LICENSE) and the licenses of
// what it bundles, copied from node_modules/redoc/bundles/ of the pinned
// version: builds need no npm and pages need no CDN.
var (
	//go:embed redoc/redoc.standalone.js
	redocJS []byte
	//go:embed redoc/redoc.standalone.js.LICENSE.txt
	redocLicenses []byte
)

// docsAssets are the files below /v1/docs/.
var docsAssets = map[string]struct {
	body        []byte
	contentType string
}{
	"redoc.standalone.js":             {redocJS, "text/javascript; charset=utf-8"},
	"redoc.standalone.js.LICENSE.txt": {redocLicenses, "text/plain; charset=utf-8"},
}

// docsHTML renders /v1/openapi.json with the embedded Redoc; the version in the
// script URL makes a new bundle a new URL for caches.
const docsHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tix API reference</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="/v1/openapi.json"></redoc>
<script src="/v1/docs/redoc.standalone.js?v=` + RedocVersion + `"></script>
</body>
</html>
`

// docsCSP lets the page load only from tix itself: the bundle, the document,
// Redoc's inline styles and its search worker (a blob).
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docs serves the rendered API reference (no key).
func (s *Server) docs(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Security-Policy", docsCSP)
	writeStatic(w, "text/html; charset=utf-8", "public, max-age=300", []byte(docsHTML))
	return nil
}

// docsAsset serves a file of the API reference page (no key).
func (s *Server) docsAsset(w http.ResponseWriter, r *http.Request) error {
	a, ok := docsAssets[r.PathValue("asset")]
	if !ok {
		return ticketing.Errorf(ticketing.CodeNotFound, "no file %s; the API reference is /v1/docs", r.URL.Path)
	}
	writeStatic(w, a.contentType, "public, max-age=86400", a.body)
	return nil
}

func writeStatic(w http.ResponseWriter, contentType, cacheControl string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", cacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
