package api_test

import (
	"net/http"
	"testing"

	"tix/internal/auth"
)

// Through the real stack and the OpenAPI check: endpoints that take no query
// parameters answer an unknown one with the documented 400.
func TestUnknownQueryParameter_DocumentedOnEndpointsWithoutParameters(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	wantError(t, h.do(http.MethodGet, "/v1/health?verbose=1", ""), http.StatusBadRequest, "invalid_request", "verbose")
	wantError(t, h.get("/v1/ping?verbose=1", sk), http.StatusBadRequest, "invalid_request", "verbose")
	wantError(t, h.get("/v1/orders/ord_x/tickets?format=pdf", sk), http.StatusBadRequest, "invalid_request", "format")
	wantError(t, h.get("/v1/orders/ord_x/refund?expand=order", sk), http.StatusBadRequest, "invalid_request", "expand")
	wantError(t, h.post("/v1/seat-holds?dry_run=1", sk, holdBody("evt_theatre", "seat_A1")), http.StatusBadRequest, "invalid_request", "dry_run")
	wantError(t, h.post("/v1/orders/preview?currency=usd", sk, `{"tier_id":"evt_concert_ga","quantity":1}`), http.StatusBadRequest, "invalid_request", "currency")
	wantStatus(t, h.do(http.MethodGet, "/v1/health", ""), http.StatusOK)
}
