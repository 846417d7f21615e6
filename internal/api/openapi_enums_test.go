package api_test

import (
	"slices"
	"sort"
	"testing"
)

// closedEnums are the enums of components/schemas that stay closed: what a
// client sends (the server refuses other values) and the webhook envelopes'
// type, which the envelopes' union is told apart by.
var closedEnums = []string{
	"SimulatePaymentRequest.outcome",
	"OrderEventEnvelope.type",
}

// The contract says clients treat enums as open. A generator that validates
// enums on decode (ogen) fails a whole response on a value added later, so
// every enum of more than one value that the API or its webhooks send carries
// x-ogen-type: string (ogen then generates a string; oapi-codegen and
// openapi-typescript ignore it, and the documented values stay listed).
// scripts/clientcheck.sh runs the generated clients over such a value.
func TestOpenAPIDocument_SentEnumsStayOpenInGeneratedClients(t *testing.T) {
	schemas := decodeJSONDocument(t)["components"].(map[string]any)["schemas"].(map[string]any)
	var closed []string
	for name, s := range schemas {
		props, _ := s.(map[string]any)["properties"].(map[string]any)
		for prop, p := range props {
			walk(p, func(m map[string]any) {
				values, _ := m["enum"].([]any)
				if len(values) > 1 && m["x-ogen-type"] != "string" && !slices.Contains(closedEnums, name+"."+prop) {
					closed = append(closed, name+"."+prop)
				}
			})
		}
	}
	sort.Strings(closed)
	if len(closed) > 0 {
		t.Errorf("enums without x-ogen-type: string (an ogen client fails on a value added later): %v", closed)
	}
}
