package api

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// openAPIJSON is the OpenAPI 3.1 description of the whole v1 contract as
// compact JSON, keeping the key order of openapi.yaml, the single source the
// router serves and the tests validate responses against. It is generated
// from the YAML (TestOpenAPIJSON_GeneratedFromYAML fails when it is stale and
// rewrites it with -update), so that the functions parse no YAML and link no
// YAML library. It is embedded gzipped (openapi.json.gz, a quarter of its
// size): every function links the router, and the catalog function's
// bootstrap has no room for the whole document; it is inflated once, on the
// first use.
//
//go:embed openapi.json.gz
var openAPIJSONGz []byte

var openAPIJSON = sync.OnceValues(func() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(openAPIJSONGz))
	var doc []byte
	if err == nil {
		doc, err = io.ReadAll(zr)
	}
	if err != nil || !json.Valid(doc) {
		return nil, fmt.Errorf("openapi.json.gz is not gzipped valid JSON (%v): regenerate it from openapi.yaml (go test ./internal/api -run TestOpenAPIJSON_GeneratedFromYAML -update)", err)
	}
	return doc, nil
})

// OpenAPIJSON returns the OpenAPI document as JSON; callers must not modify
// the returned slice.
func OpenAPIJSON() ([]byte, error) { return openAPIJSON() }

// relativeServer is servers[0] of the document as JSON: the relative /v1 that
// ServedOpenAPIJSON replaces with the configured public URL.
const relativeServer = `"servers":[{"url":"/v1"`

// ServedOpenAPIJSON is OpenAPIJSON with servers[0].url set to publicURL+"/v1"
// (publicURL: the API's configured base URL, TIX_PUBLIC_URL, without /v1).
// Without one it stays the relative /v1, which clients resolve against the
// URL they fetched the document from. It is never taken from the request's
// Host or X-Forwarded-Host: anyone can send those, and a cache in front would
// hand a forged server URL (where keys would be sent) to every later reader.
func ServedOpenAPIJSON(publicURL string) ([]byte, error) {
	doc, err := OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(doc, []byte(relativeServer)) {
		return nil, fmt.Errorf("openapi document: servers[0].url is not /v1")
	}
	if publicURL == "" {
		return doc, nil
	}
	url, _ := json.Marshal(strings.TrimRight(publicURL, "/") + "/v1")
	return bytes.Replace(doc, []byte(relativeServer), []byte(`"servers":[{"url":`+string(url)), 1), nil
}
