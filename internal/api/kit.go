package api

import (
	"net/http"

	"tix/internal/ticketing"
)

// The integrator kit's routes (docs/guide.md): cancelling a pending order,
// extending a hold and the test helpers.

// cancelOrder is POST /orders/{id}/cancel: a secret key, or a publishable key
// with the order's poll token in Tix-Poll-Token.
func (s *Server) cancelOrder(w http.ResponseWriter, r *http.Request) error {
	var req struct{}
	if err := decodeOptionalJSON(r, &req); err != nil {
		return err
	}
	o, err := s.Sales.Orders.CancelOrder(r.Context(), s.salesCaller(w, r), r.PathValue("id"), r.Header.Get("Tix-Poll-Token"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderOrder(o, seesPII(callerOf(r.Context()))))
	return nil
}

// extendHold is POST /seat-holds/extend: the hold's new expiry, in the shape
// of the hold's creation.
func (s *Server) extendHold(w http.ResponseWriter, r *http.Request) error {
	var req ticketing.ExtendRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	h, err := s.Sales.Holds.ExtendHold(r.Context(), s.salesCaller(w, r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderHold(h))
	return nil
}

// The test helpers (sk_test keys; ticketing's test_helpers.go).

func (s *Server) testExpireOrder(w http.ResponseWriter, r *http.Request) error {
	if err := decodeOptionalJSON(r, &struct{}{}); err != nil {
		return err
	}
	return s.testOrderHelper(w, r, func(c *caller, id string) (*ticketing.Order, error) {
		return s.Sales.Tests.ExpireOrder(r.Context(), c.tenant(), id)
	})
}

func (s *Server) testLatePayment(w http.ResponseWriter, r *http.Request) error {
	if err := decodeOptionalJSON(r, &struct{}{}); err != nil {
		return err
	}
	return s.testOrderHelper(w, r, func(c *caller, id string) (*ticketing.Order, error) {
		return s.Sales.Tests.LatePayment(r.Context(), c.tenant(), id)
	})
}

func (s *Server) testRefundOutcome(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Outcome *string `json:"outcome"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Outcome == nil {
		return ticketing.Invalid("outcome", "outcome is required: settle or fail")
	}
	return s.testOrderHelper(w, r, func(c *caller, id string) (*ticketing.Order, error) {
		return s.Sales.Tests.RefundOutcome(r.Context(), c.tenant(), id, *req.Outcome)
	})
}

// testOrderHelper answers a test helper of order {id} with the order after it.
func (s *Server) testOrderHelper(w http.ResponseWriter, r *http.Request, do func(*caller, string) (*ticketing.Order, error)) error {
	c := callerOf(r.Context())
	o, err := do(c, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderOrder(o, seesPII(c)))
	return nil
}

func (s *Server) testExpireHold(w http.ResponseWriter, r *http.Request) error {
	var req ticketing.ExtendRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	h, err := s.Sales.Tests.ExpireHold(r.Context(), s.salesCaller(w, r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderHold(h))
	return nil
}
