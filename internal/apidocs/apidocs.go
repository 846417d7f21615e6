// Package apidocs holds the renderer of the API reference page (GET /v1/docs):
// the standalone bundle of the npm package redoc, gzip-compressed, with its
// licenses. Only the catalog function and the local runner import it, so the
// other functions' binaries do not carry it.
package apidocs

import (
	_ "embed"

	"tix/internal/api"
)

// RedocVersion is the redoc package the bundle comes from, pinned in
// scripts/package.json; a test checks the bundle byte for byte against that
// package's bundles/redoc.standalone.js in scripts/node_modules.
const RedocVersion = "2.5.4"

var (
	// gzip -9n < scripts/node_modules/redoc/bundles/redoc.standalone.js
	//go:embed redoc/redoc.standalone.js.gz
	redocJSGz []byte
	//go:embed redoc/redoc.standalone.js.LICENSE.txt
	redocLicenses []byte
)

// Redoc is the reference page's renderer for api.Server.Docs.
func Redoc() *api.Docs {
	return &api.Docs{
		Script:  "redoc.standalone.js",
		Version: RedocVersion,
		Files: map[string]api.DocsFile{
			"redoc.standalone.js":             {Body: redocJSGz, ContentType: "text/javascript; charset=utf-8", Gzipped: true},
			"redoc.standalone.js.LICENSE.txt": {Body: redocLicenses, ContentType: "text/plain; charset=utf-8"},
		},
	}
}
