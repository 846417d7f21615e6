package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

func tableCreate(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("table create", flag.ContinueOnError)
	if err := parseNamed(fs, args); err != nil {
		return err
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	created, err := st.EnsureTable(ctx)
	if err != nil {
		return err
	}
	endpoint := a.endpoint
	if endpoint == "" {
		endpoint = "aws"
	}
	res := struct {
		Table    string `json:"table"`
		Endpoint string `json:"endpoint"`
		Region   string `json:"region"`
		Created  bool   `json:"created"`
	}{a.table, endpoint, a.region, created}
	return a.emit(res, func(w io.Writer) {
		if created {
			fmt.Fprintf(w, "Created table %s at %s.\n", a.table, a.where())
		} else {
			fmt.Fprintf(w, "Table %s already exists at %s.\n", a.table, a.where())
		}
	})
}
