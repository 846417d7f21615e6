package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

var organizerIDPattern = regexp.MustCompile(`^org_[A-Za-z0-9_-]{1,60}$`)

func organizersCreate(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("organizers create", flag.ContinueOnError)
	name := fs.String("name", "", "organizer name")
	id := fs.String("id", "", "organizer id (default org_ + random)")
	if err := parseNamed(fs, args, "name"); err != nil {
		return err
	}
	if *id == "" {
		*id = "org_" + auth.RandomString("abcdefghijklmnopqrstuvwxyz0123456789", 12)
	} else if !organizerIDPattern.MatchString(*id) {
		return usagef("--id must look like org_x: org_ then 1-60 of A-Z, a-z, 0-9, '_' or '-'")
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	o := ticketing.Organizer{ID: *id, Name: *name, CreatedAt: a.clock.Now()}
	if err := st.Organizers.CreateOrganizer(ctx, o); err != nil {
		return err
	}
	return a.emit(o, func(w io.Writer) {
		fmt.Fprintf(w, "Created organizer %s (%s), not verified.\n", o.ID, o.Name)
		fmt.Fprintf(w, "Next: tixctl keys create --organizer %s --type sk --env test\n", o.ID)
	})
}

func organizersVerify(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("organizers verify", flag.ContinueOnError)
	id := fs.String("id", "", "organizer id")
	unverify := fs.Bool("unverify", false, "remove the verification instead")
	if err := parseNamed(fs, args, "id"); err != nil {
		return err
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	o, err := st.Organizers.SetOrganizerVerified(ctx, *id, !*unverify)
	if err != nil {
		return err
	}
	return a.emit(o, func(w io.Writer) {
		if o.Verified {
			fmt.Fprintf(w, "Organizer %s (%s) is verified: it may have live keys.\n", o.ID, o.Name)
		} else {
			fmt.Fprintf(w, "Organizer %s (%s) is not verified: new live keys are refused (existing ones keep working until revoked).\n", o.ID, o.Name)
		}
	})
}

func organizersList(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("organizers list", flag.ContinueOnError)
	if err := parseNamed(fs, args); err != nil {
		return err
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	list, err := st.Organizers.ListOrganizers(ctx)
	if err != nil {
		return err
	}
	if list == nil {
		list = []ticketing.Organizer{}
	}
	return a.emit(list, func(w io.Writer) {
		if len(list) == 0 {
			fmt.Fprintln(w, "No organizers yet: tixctl organizers create --name NAME")
			return
		}
		rows := make([][]string, len(list))
		for i, o := range list {
			rows[i] = []string{o.ID, strconv.FormatBool(o.Verified), o.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), o.Name}
		}
		table(w, []string{"ID", "VERIFIED", "CREATED", "NAME"}, rows)
	})
}
