package main

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

// The waiting room of the on-sale (docs/waiting-room.md): a copy of the
// event under queueID, protected (opened a minute ago, 4-bit proofs: the
// model meters the table, not the visitors' work). A visitor asks for a
// challenge, answers it, joins and reads its place once.
const (
	queueID   = "evt_onsale_queue"
	phaseJoin = "join"
)

// protectQueue seeds queueID and puts the waiting room in front of it.
func (s *sale) protectQueue(ctx context.Context, ev *ticketing.Event) error {
	e := *ev
	e.ID, e.Ref, e.Title = queueID, "onsale-queue", "On-sale (waiting room)"
	if err := s.a.Store.Catalog.PutEvent(ctx, &e); err != nil {
		return err
	}
	_, err := s.a.Waitroom.ProtectEvent(ctx, ticketing.Tenant{OrganizerID: orgID, Environment: ticketing.EnvTest},
		waitroom.ProtectRequest{EventID: queueID, OpensAt: time.Now().Add(-time.Minute), Difficulty: 4})
	return err
}

// join is one visitor: challenge, proof of work, join, one status read.
func (s *sale) join(b *buyer) error {
	hdr := map[string]string{"Origin": origin}
	var ch struct {
		Challenge  string `json:"challenge"`
		Difficulty int    `json:"difficulty"`
	}
	if err := s.call(b, http.MethodGet, "/queue/"+queueID+"/challenge", s.pk, nil, http.StatusOK, &ch, hdr); err != nil {
		return err
	}
	var j struct {
		Token string `json:"token"`
	}
	body := map[string]string{"challenge": ch.Challenge, "nonce": waitroom.Solve(ch.Challenge, ch.Difficulty)}
	if err := s.call(b, http.MethodPost, "/queue/"+queueID+"/join", s.pk, body, http.StatusCreated, &j, hdr); err != nil {
		return err
	}
	return s.call(b, http.MethodGet, "/queue/"+queueID+"/status?token="+url.QueryEscape(j.Token), s.pk, nil, http.StatusOK, nil, hdr)
}
