package api

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"tix/internal/ticketing"
)

// errorDocsHead and errorDocsTail frame /v1/docs/errors: one section per
// code, its id the code (the fragment of every error's doc_url).
const errorDocsHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tix API errors</title>
<link rel="icon" href="data:,">
</head>
<body>
<main>
<h1>Tix API errors</h1>
<p>Every error is <code>{"error": {"code", "message", "param"?, "doc_url"}}</code>. Branch on <code>code</code>, never on <code>message</code>. The set of codes may grow.</p>
`

const errorDocsTail = `</main>
</body>
</html>
`

// renderErrorDocs writes the page by hand (no templates in the API: see
// escapeHTML), the codes by status then code.
func renderErrorDocs() string {
	codes := slices.Sorted(maps.Keys(errorDocs))
	slices.SortStableFunc(codes, func(a, b ticketing.Code) int { return cmp.Compare(statusOf[a], statusOf[b]) })
	var b strings.Builder
	b.WriteString(errorDocsHead)
	for _, code := range codes {
		c := escapeHTML(string(code))
		b.WriteString(`<section id="` + c + `">` + "\n<h2><code>" + c + "</code> (" + strconv.Itoa(statusOf[code]) + ")</h2>\n<p>" +
			escapeHTML(errorDocs[code]) + "</p>\n</section>\n")
	}
	b.WriteString(errorDocsTail)
	return b.String()
}

// writeErrorDocs answers GET /v1/docs/errors.
func writeErrorDocs(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write([]byte(renderErrorDocs()))
	return err
}
