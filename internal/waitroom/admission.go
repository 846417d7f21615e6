package waitroom

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

	"tix/internal/ticketing"
)

// Admission is a checked admission: the holds and orders of one buyer.
type Admission struct {
	ID        string
	EventID   string
	ExpiresAt time.Time
}

type admissionClaims struct {
	ID    string `json:"i"`
	Event string `json:"e"`
	Net   string `json:"n"`
	From  int64  `json:"f"` // Unix ms: released
	Exp   int64  `json:"x"` // Unix ms
}

// admissionID is the id of the admission of queue place qid: every status
// of one place gives the same admission, so it is spent once.
func admissionID(sig signer, qid string) string {
	return hex.EncodeToString(sig.mac("admission " + qid)[:12])
}

// Admit checks the admission a publishable-key hold or order of t's event
// carries (token: the Tix-Admission header), read on network ip. It answers
// nil, nil when the occurrence is not protected (or not by t); else the
// admission, or 403 admission_required when it is missing, expired, of
// another event or network, or spent. A hold (claim "") only reads whether
// an order spent it; an order (claim: its idempotency key) spends it, once
// (a retry of the same order passes again), before the order is written.
func (s *Service) Admit(ctx context.Context, t ticketing.Tenant, eventID, occ, token, ip, claim string) (*Admission, error) {
	p, err := s.protection(ctx, eventID)
	if err != nil || p == nil || p.Tenant != t || !p.Covers(occ) {
		return nil, err
	}
	var a admissionClaims
	now := s.Clock.Now().UnixMilli()
	switch {
	case token == "":
		return nil, refused(p, "this on-sale has a waiting room: send the admission the queue gave you in the Tix-Admission header")
	case !s.sig.open(kindAdmission, token, &a) || a.Event != p.EventID:
		return nil, refused(p, "Tix-Admission is not an admission of this event")
	case now >= a.Exp:
		return nil, refused(p, "the admission expired")
	case now < a.From:
		return nil, refused(p, "the admission is not valid yet")
	case a.Net != Network(ip):
		return nil, refused(p, "the admission was given to another network; admissions work only where the queue admitted you")
	}
	adm := &Admission{ID: a.ID, EventID: p.EventID, ExpiresAt: time.UnixMilli(a.Exp)}
	if claim != "" {
		return adm, s.spend(ctx, adm, claim)
	}
	spent, err := s.Store.AdmissionSpent(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	if spent {
		return adm, refused(p, "this admission bought already; each admission buys once")
	}
	return adm, nil
}

// spend marks a spent by the order of idempotency key claim.
func (s *Service) spend(ctx context.Context, a *Admission, claim string) error {
	err := s.Store.ClaimAdmission(ctx, a.ID, claim, a.ExpiresAt.Add(24*time.Hour))
	if errors.Is(err, ErrAdmissionSpent) {
		return &ticketing.Error{Code: ticketing.CodeAdmissionRequired, Param: "Tix-Admission",
			Message: "this admission bought already; each admission buys once: join the queue again at /v1/queue/" + a.EventID}
	}
	return err
}

// Unspend gives back claim's spend of a: the order was refused, nothing bought.
func (s *Service) Unspend(ctx context.Context, a *Admission, claim string) error {
	return s.Store.ReleaseAdmission(ctx, a.ID, claim)
}

func refused(p *Protection, why string) error {
	return &ticketing.Error{Code: ticketing.CodeAdmissionRequired, Param: "Tix-Admission",
		Message: why + ": join the queue at /v1/queue/" + p.EventID + " (GET /v1/queue/" + p.EventID + "/challenge, then POST /v1/queue/" + p.EventID + "/join) and wait for your admission"}
}
