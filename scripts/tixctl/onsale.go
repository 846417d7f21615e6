package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"tix/internal/config"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

// protectionView is an on-sale's waiting room as tixctl shows it (--json: stable).
type protectionView struct {
	EventID      string    `json:"event_id"`
	OccurrenceID string    `json:"occurrence_id"`
	OrganizerID  string    `json:"organizer_id"`
	Environment  string    `json:"environment"`
	OpensAt      time.Time `json:"opens_at"`
	Rate         int       `json:"rate"`
	Difficulty   int       `json:"difficulty"`
	QueuePage    string    `json:"queue_page"`
}

// onsaleProtect puts a waiting room in front of an occurrence's on-sale
// (docs/waiting-room.md): from then on its publishable-key holds and orders
// need an admission.
func onsaleProtect(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("onsale protect", flag.ContinueOnError)
	org := fs.String("organizer", "", "organizer id")
	env := fs.String("env", "test", "test or live")
	event := fs.String("event", "", "event id")
	occ := fs.String("occurrence", "", "occurrence id (default: every occurrence of the event)")
	opens := fs.String("opens-at", "", "the on-sale's opening, RFC 3339")
	rate := fs.Int("rate", 0, "admissions per second once it opens (default TIX_WAITROOM_RATE, 5000)")
	bits := fs.Int("difficulty", 0, "proof-of-work leading zero bits (default TIX_WAITROOM_DIFFICULTY, 16)")
	if err := parseNamed(fs, args, "organizer", "event", "opens-at"); err != nil {
		return err
	}
	t := ticketing.Tenant{OrganizerID: *org, Environment: ticketing.Environment(*env)}
	if !t.Environment.Valid() {
		return usagef("--env must be test or live")
	}
	at, err := time.Parse(time.RFC3339, *opens)
	if err != nil {
		return usagef("--opens-at must be RFC 3339, e.g. 2026-12-01T10:00:00Z")
	}
	if *rate < 0 || *rate > waitroom.MaxRate || *bits < 0 || *bits > waitroom.MaxDifficulty {
		return usagef("--rate must be 1 to %d and --difficulty 1 to %d (0: the defaults)", waitroom.MaxRate, waitroom.MaxDifficulty)
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		cfg.Waitroom = config.Waitroom{} // the defaults: only the rate and difficulty are read here
	}
	svc := waitroom.New(st.WaitingRoom(), a.clock, waitroom.Settings{Rate: cfg.Waitroom.Rate, Difficulty: cfg.Waitroom.Difficulty})
	p, err := svc.Protect(ctx, st.Catalog, t, waitroom.ProtectRequest{EventID: *event, OccurrenceID: *occ, OpensAt: at, Rate: *rate, Difficulty: *bits})
	if err != nil {
		return err
	}
	v := protectionView{EventID: p.EventID, OccurrenceID: p.OccurrenceID, OrganizerID: p.OrganizerID, Environment: string(p.Environment),
		OpensAt: p.OpensAt, Rate: p.Rate, Difficulty: p.Difficulty, QueuePage: "/v1/queue/" + url.PathEscape(p.EventID)}
	return a.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "Waiting room on %s (%s): opens %s, %d admissions/s, proof of work %d bits.\n", v.EventID, v.Environment, formatTime(&v.OpensAt), v.Rate, v.Difficulty)
		fmt.Fprintf(w, "Publishable-key holds and orders now need an admission (Tix-Admission); the hosted queue page is %s?pk=<publishable key>.\n", v.QueuePage)
	})
}
