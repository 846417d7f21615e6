package main

import (
	"context"
	"encoding/json"
	"testing"

	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
)

// Behind API Gateway the document names the API's own domain as its server.
func TestHandler_OpenAPIServerIsTheAPIGatewayDomain(t *testing.T) {
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
		want := "https://" + sample.Event.RequestContext.DomainName + "/v1"
		if doc.Servers[0].URL != want {
			t.Errorf("%s: servers[0].url = %q, want %q", sample.Name, doc.Servers[0].URL, want)
		}
	}
}
