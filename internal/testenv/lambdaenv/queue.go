package lambdaenv

import (
	"context"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

// AddQueue puts a waiting room in front of evt_lambda (opened an hour ago,
// 8-bit proofs; secret keys, as the events' SK_TEST, need no admission) and
// adds to Vars: QUEUE_CHALLENGE and QUEUE_NONCE, a challenge and its answer
// (holds-queue-join.json), QUEUE_TOKEN, a queue token of the events' source
// network (holds-queue-status.json), and PK_TEST, a publishable key of org_l
// allowed from https://shop.example (holds-queue-page.json).
func (e *Env) AddQueue(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	w := e.App.Waitroom
	now := e.App.Sales.Deps.Clock.Now()
	if _, err := w.ProtectEvent(ctx, tenant, waitroom.ProtectRequest{EventID: "evt_lambda", OpensAt: now.Add(-time.Hour), Difficulty: 8}); err != nil {
		t.Fatalf("protect evt_lambda: %v", err)
	}
	challenge := func() (string, string) {
		ch, err := w.NewChallenge(ctx, tenant, "evt_lambda")
		if err != nil {
			t.Fatal(err)
		}
		return ch.Token, waitroom.Solve(ch.Token, ch.Difficulty)
	}
	e.Vars["QUEUE_CHALLENGE"], e.Vars["QUEUE_NONCE"] = challenge()
	tok, nonce := challenge()
	j, err := w.Join(ctx, tenant, "evt_lambda", tok, nonce, "198.51.100.7")
	if err != nil {
		t.Fatal(err)
	}
	e.Vars["QUEUE_TOKEN"] = j.Token
	pk := auth.NewSecret(auth.Publishable, ticketing.EnvTest)
	if err := e.App.Store.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_l", Type: auth.Publishable, Environment: ticketing.EnvTest,
		Scopes: auth.PublishableScopes, AllowedOrigins: []string{"https://shop.example"}, CreatedAt: now}, auth.Hash(pk)); err != nil {
		t.Fatal(err)
	}
	e.Vars["PK_TEST"] = pk
}
