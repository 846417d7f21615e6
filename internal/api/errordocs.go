package api

import (
	"bytes"
	"cmp"
	"html/template"
	"maps"
	"net/http"
	"slices"

	"tix/internal/ticketing"
)

// errorDocsPage is /v1/docs/errors: one section per code, its id the code
// (the fragment of every error's doc_url).
var errorDocsPage = template.Must(template.New("errors").Parse(`<!DOCTYPE html>
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
{{range .}}<section id="{{.Code}}">
<h2><code>{{.Code}}</code> ({{.Status}})</h2>
<p>{{.Text}}</p>
</section>
{{end}}</main>
</body>
</html>
`))

type errorDoc struct {
	Code   ticketing.Code
	Status int
	Text   string
}

// writeErrorDocs renders errorDocs, by status then code.
func writeErrorDocs(w http.ResponseWriter) error {
	var docs []errorDoc
	for _, code := range slices.Sorted(maps.Keys(errorDocs)) {
		docs = append(docs, errorDoc{Code: code, Status: statusOf[code], Text: errorDocs[code]})
	}
	slices.SortStableFunc(docs, func(a, b errorDoc) int { return cmp.Compare(a.Status, b.Status) })
	var buf bytes.Buffer
	if err := errorDocsPage.Execute(&buf, docs); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(buf.Bytes())
	return err
}
