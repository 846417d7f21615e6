package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"tix/internal/emailjobs"
)

// testRecipientsView is organizers test-recipients' output: the addresses a
// test-mode email may reach (the test recipients and the owner contacts).
type testRecipientsView struct {
	OrganizerID    string   `json:"organizer_id"`
	TestRecipients []string `json:"test_recipients"`
	Contacts       []string `json:"contacts"`
}

// organizersTestRecipients adds and removes test recipients (each --add and
// --remove in order), then lists them; with neither it only lists.
func organizersTestRecipients(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("organizers test-recipients", flag.ContinueOnError)
	id := fs.String("id", "", "organizer id")
	var add, remove stringList
	fs.Var(&add, "add", "an address test-mode emails may reach (repeat for more)")
	fs.Var(&remove, "remove", "an address to take off the list (repeat for more)")
	fs.Bool("list", false, "list them (what every call prints)")
	if err := parseNamed(fs, args, "id"); err != nil {
		return err
	}
	for _, e := range append(append([]string(nil), add...), remove...) {
		if !emailjobs.ValidAddress(e) {
			return usagef("%q is not one plain address, like dev@example.com", e)
		}
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	ident, err := st.Emails.GetIdentity(ctx, *id)
	if err != nil {
		return fmt.Errorf("organizer %s: %w", *id, err)
	}
	for _, e := range add {
		if ident, err = st.Emails.AddTestRecipient(ctx, *id, e); err != nil {
			return err
		}
	}
	for _, e := range remove {
		if ident, err = st.Emails.RemoveTestRecipient(ctx, *id, e); err != nil {
			return err
		}
	}
	v := testRecipientsView{OrganizerID: ident.OrganizerID, TestRecipients: ident.TestRecipients, Contacts: ident.Contacts}
	return a.emit(v, func(w io.Writer) {
		or := func(l []string) string {
			if len(l) == 0 {
				return "-"
			}
			return strings.Join(l, ", ")
		}
		fmt.Fprintf(w, "organizer:       %s\ntest recipients: %s\ncontacts:        %s\n", v.OrganizerID, or(v.TestRecipients), or(v.Contacts))
		fmt.Fprintf(w, "Test-mode emails reach only these addresses; any other buyer's is skipped (reason test_mode).\n")
	})
}
