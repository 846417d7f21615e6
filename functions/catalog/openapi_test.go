package main

import (
	"context"
	"encoding/json"
	"testing"

	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
)

// Behind API Gateway the document's server is the configured TIX_PUBLIC_URL;
// without one (the catalog function is not given it) the relative /v1, which
// clients resolve against the API's own domain: never a host the request names.
func TestHandler_OpenAPIServerIsNeverTheRequestsHost(t *testing.T) {
	env := lambdaenv.New(t)
	for _, sample := range testenv.LoadAPIEvents(t, "catalog-openapi", env.Vars) {
		res, err := handler(env.App)(context.Background(), sample.Event)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
		}
		if err := json.Unmarshal([]byte(res.Body), &doc); err != nil || len(doc.Servers) == 0 {
			t.Fatalf("%s: no servers (%v)", sample.Name, err)
		}
		want := "/v1"
		if env.App.Config.Payments.PublicURL != "" {
			want = env.App.Config.Payments.PublicURL + "/v1"
		}
		if doc.Servers[0].URL != want {
			t.Errorf("%s: servers[0].url = %q, want %q", sample.Name, doc.Servers[0].URL, want)
		}
	}
}

// The reference page's script goes out gzip-compressed (base64 in the Lambda
// response) to a browser that accepts gzip, wherever gzip stands in its
// Accept-Encoding (the Lambda adapter splits the header on its commas; curl
// --compressed puts deflate first).
func TestHandler_DocsScriptIsGzipped(t *testing.T) {
	env := lambdaenv.New(t)
	for _, sample := range testenv.LoadAPIEvents(t, "catalog-docs-asset", env.Vars) {
		for _, accept := range []string{sample.Event.Headers["accept-encoding"], "deflate, gzip, br, zstd"} {
			sample.Event.Headers["accept-encoding"] = accept
			res, err := handler(env.App)(context.Background(), sample.Event)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != 200 || res.Headers["Content-Encoding"] != "gzip" || !res.IsBase64Encoded {
				t.Errorf("%s, Accept-Encoding %q: status %d, Content-Encoding %q, base64 %v", sample.Name, accept, res.StatusCode, res.Headers["Content-Encoding"], res.IsBase64Encoded)
			}
			if n := len(res.Body); n > 600_000 {
				t.Errorf("%s: %d bytes of base64, want the compressed bundle", sample.Name, n)
			}
		}
	}
}
