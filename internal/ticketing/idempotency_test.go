package ticketing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// The contract's idempotency table for POST /orders, row by row.
func TestCreateOrder_IdempotencyTable(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		prepare func(t *testing.T, d *domain) string // the order the key is bound to, if any
		req     ticketing.OrderRequest
		code    ticketing.Code // "" = success
		created bool
	}{
		{"new key creates the order", func(*testing.T, *domain) string { return "" }, gaOrder(1), "", true},
		{"replay of a pending order returns it", func(t *testing.T, d *domain) string {
			return d.order(t, "k", gaOrder(1)).ID
		}, gaOrder(1), "", false},
		{"replay of a paid order returns it", func(t *testing.T, d *domain) string {
			o := d.order(t, "k", gaOrder(1))
			if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomePaid); err != nil {
				t.Fatal(err)
			}
			return o.ID
		}, gaOrder(1), "", false},
		{"a cancelled order's key is spent", func(t *testing.T, d *domain) string {
			o := d.order(t, "k", gaOrder(1))
			if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomeCancelled); err != nil {
				t.Fatal(err)
			}
			return o.ID
		}, gaOrder(1), ticketing.CodeOrderCancelled, false},
		{"a different body is a conflict", func(t *testing.T, d *domain) string {
			return d.order(t, "k", gaOrder(1)).ID
		}, gaOrder(2), ticketing.CodeConflict, false},
		{"an order still being prepared is order_pending", func(t *testing.T, d *domain) string {
			d.payDown.Store(true)
			_, err := d.sales.Orders.CreateOrder(ctx, d.c, "k", gaOrder(1))
			wantCode(t, err, ticketing.CodePaymentProviderError, "")
			d.payDown.Store(false)
			rec, err := d.st.Idempotency.GetIdempotency(ctx, d.c.Tenant, ticketing.IdemOrder, "k")
			if err != nil {
				t.Fatal(err)
			}
			busy := *rec
			busy.Lease, busy.LeaseUntil = "another-invocation", d.now.Add(time.Minute)
			if err := d.st.Idempotency.ClaimIdempotency(ctx, &busy, rec.Lease); err != nil {
				t.Fatal(err)
			}
			return rec.ResourceID
		}, gaOrder(1), ticketing.CodeOrderPending, false},
		{"an identical request in flight is a conflict", func(t *testing.T, d *domain) string {
			rec := &ticketing.Idempotency{Tenant: d.c.Tenant, Scope: ticketing.IdemOrder, Key: "k", ResourceID: "ord_inflight",
				Lease: "other", LeaseUntil: d.now.Add(time.Minute), CreatedAt: d.now}
			rec.RequestHash = hashOf(t, d, gaOrder(1))
			if _, err := d.st.Idempotency.BeginIdempotency(ctx, rec, d.now); err != nil {
				t.Fatal(err)
			}
			return ""
		}, gaOrder(1), ticketing.CodeConflict, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDomain(t)
			bound := c.prepare(t, d)
			sold := d.gaSold(t)
			res, err := d.sales.Orders.CreateOrder(ctx, d.c, "k", c.req)
			if c.code != "" {
				wantCode(t, err, c.code, "")
				if d.gaSold(t) != sold {
					t.Fatalf("a refused retry moved stock: %d -> %d", sold, d.gaSold(t))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Created != c.created || (bound != "" && res.Order.ID != bound) || res.QRImage == "" || res.PollToken == "" {
				t.Fatalf("result %+v (created %v), want created %v for order %q", res.Order.ID, res.Created, c.created, bound)
			}
			if d.gaSold(t) != 1 {
				t.Fatalf("sold %d, want one ticket whatever the retries", d.gaSold(t))
			}
		})
	}
}

// hashOf learns the request hash the service gives req, from a record it binds.
func hashOf(t *testing.T, d *domain, req ticketing.OrderRequest) string {
	t.Helper()
	scratch := newDomain(t)
	scratch.order(t, "probe", req)
	rec, err := scratch.st.Idempotency.GetIdempotency(context.Background(), d.c.Tenant, ticketing.IdemOrder, "probe")
	if err != nil {
		t.Fatal(err)
	}
	return rec.RequestHash
}

func TestCreateOrder_RecoversWhenTheLeaseRunsOut(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	d.payDown.Store(true)
	_, err := d.sales.Orders.CreateOrder(ctx, d.c, "k", gaOrder(2))
	wantCode(t, err, ticketing.CodePaymentProviderError, "")
	d.payDown.Store(false)
	res, err := d.sales.Orders.CreateOrder(ctx, d.c, "k", gaOrder(2))
	if err != nil || !res.Created || res.Order.Payment == nil {
		t.Fatalf("retry after the provider failed: %+v, %v", res, err)
	}
	if n := d.gaSold(t); n != 2 {
		t.Fatalf("sold %d, want 2: the retry completed the first order", n)
	}
	// An invocation died after binding the key, before writing its order.
	rec := &ticketing.Idempotency{Tenant: d.c.Tenant, Scope: ticketing.IdemOrder, Key: "dead", ResourceID: "ord_deadinvocation000",
		Lease: "dead", LeaseUntil: d.now.Add(d.sales.Deps.Settings.LeaseTTL), CreatedAt: d.now, RequestHash: hashOf(t, d, gaOrder(1))}
	if _, err := d.st.Idempotency.BeginIdempotency(ctx, rec, d.now); err != nil {
		t.Fatal(err)
	}
	d.clk.Advance(d.sales.Deps.Settings.LeaseTTL)
	res, err = d.sales.Orders.CreateOrder(ctx, d.c, "dead", gaOrder(1))
	if err != nil || res.Order.ID != rec.ResourceID {
		t.Fatalf("after the lease: %+v, %v; want order %s", res, err, rec.ResourceID)
	}
}

// The key's record is written with the order, in its transaction: a refused
// request binds nothing, a different body on a bound key is a conflict even
// when that body would be refused, and the test payment is stored with the
// order (no second write: the order's first version has it).
func TestCreateOrder_KeyBoundWithTheOrder(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	_, err := d.sales.Orders.CreateOrder(ctx, d.c, "k", gaOrder(ticketingtest.GACap+1))
	wantCode(t, err, ticketing.CodeConflict, "tier_id")
	if _, err := d.st.Idempotency.GetIdempotency(ctx, d.c.Tenant, ticketing.IdemOrder, "k"); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Fatalf("a refused order bound its key: %v", err)
	}
	o := d.order(t, "k", gaOrder(1))
	if o.Payment == nil || o.Version != 1 {
		t.Fatalf("order %s: payment %v, version %d; want the test payment in the first version", o.ID, o.Payment, o.Version)
	}
	stored, err := d.st.Orders.GetOrder(ctx, o.ID)
	if err != nil || stored.Payment == nil || stored.Payment.ID != o.Payment.ID {
		t.Fatalf("stored order %+v, %v", stored, err)
	}
	rec, err := d.st.Idempotency.GetIdempotency(ctx, d.c.Tenant, ticketing.IdemOrder, "k")
	if err != nil || rec.ResourceID != o.ID {
		t.Fatalf("key record %+v, %v; want it bound to %s", rec, err, o.ID)
	}
	_, err = d.sales.Orders.CreateOrder(ctx, d.c, "k", gaOrder(ticketingtest.GACap+1))
	wantCode(t, err, ticketing.CodeConflict, "")
	var e *ticketing.Error
	if errors.As(err, &e) && e.Param != "" {
		t.Fatalf("another body on a bound key: %v (param %s), want the key's conflict", err, e.Param)
	}
}
