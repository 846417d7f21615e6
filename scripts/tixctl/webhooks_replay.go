package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"tix/internal/queue"
	"tix/internal/webhook"
)

// webhooksReplay (tixctl webhooks replay ID --since TIME) starts a replay of
// the event log to one endpoint (the service's StartReplay, as POST /webhook-endpoints/{id}/replay), or with
// --show reads one's progress. The replay's pages and attempts run where the
// deliveries queue is consumed (the deliver function, make run locally).
func webhooksReplay(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("webhooks replay", flag.ContinueOnError)
	since := fs.String("since", "", "replay events created at or after this Unix time or RFC 3339 time (at most 30 days ago)")
	key := fs.String("idempotency-key", "", "names the replay: the same key answers the same replay")
	show := fs.String("show", "", "read the progress of this replay (wrp_...) instead of starting one")
	// The endpoint is positional, as in the other webhooks commands (--endpoint is DynamoDB's).
	id, err := parseEndpointArgs(fs, args)
	if err != nil {
		return err
	}
	svc, st, cfg, err := a.webhooks(ctx)
	if err != nil {
		return err
	}
	ep, err := st.Webhooks.GetEndpoint(ctx, id)
	if err != nil {
		return namingEndpoint(err, id)
	}
	svc.Replays = st.WebhookReplays()
	var rp *webhook.Replay
	if *show != "" {
		rp, err = svc.GetReplay(ctx, ep.OrganizerID, ep.Environment, ep.ID, *show)
	} else {
		var t time.Time
		if t, err = parseSince(*since); err != nil {
			return err
		}
		q, qerr := queue.Open(ctx, cfg.Region, cfg.SQSEndpoint, cfg.QueuePrefix)
		if qerr != nil {
			return qerr
		}
		svc.Queue = queue.NewDeliveries(q)
		rp, err = svc.StartReplay(ctx, webhook.ReplayRequest{OrganizerID: ep.OrganizerID, Environment: ep.Environment,
			EndpointID: ep.ID, Since: t, IdempotencyKey: *key})
	}
	if err != nil {
		return err
	}
	v := rp.Wire()
	return a.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "Replay %s of %s since %s: %s, %d queued, %d done\n", v.ID, v.EndpointID,
			time.Unix(v.Since, 0).UTC().Format(time.RFC3339), v.Status, v.Queued, v.Done)
		if v.Status != webhook.ReplayDone {
			fmt.Fprintf(w, "Progress: tixctl webhooks replay %s --show %s\n", v.EndpointID, v.ID)
		}
	})
}

// parseSince reads --since: Unix seconds or an RFC 3339 time.
func parseSince(s string) (time.Time, error) {
	if err := required("since", s); err != nil {
		return time.Time{}, err
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("--since must be a Unix time or an RFC 3339 time such as 2026-11-25T09:00:00Z")
	}
	return t, nil
}
