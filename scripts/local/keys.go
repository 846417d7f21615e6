package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"tix/internal/auth"
	"tix/internal/catalogimport"
	"tix/internal/config"
	"tix/internal/demo"
	"tix/internal/store"
	"tix/internal/ticketing"
)

// demoKey is a demo key as remembered locally. Keys are stored only hashed, so
// the local runner keeps the demo secrets in .data/demo-keys.json (git-ignored,
// local stack only) to print them again on the next `make run`.
type demoKey struct {
	Label       string `json:"label"`
	ID          string `json:"id"`
	OrganizerID string `json:"organizer_id"`
	Secret      string `json:"secret"`
}

type demoKeySpec struct {
	label   string
	org     string
	typ     auth.KeyType
	env     ticketing.Environment
	origins []string
}

// liveKeyLabel labels the demo organizer's live key: its orders are paid at
// the local T-Bank simulator.
const liveKeyLabel = "sk_live (SIMULATED bank: the local T-Bank simulator; no real money)"

var demoKeySpecs = []demoKeySpec{
	{label: "sk_test (every scope)", org: demo.OrganizerID, typ: auth.Secret, env: ticketing.EnvTest},
	{label: "pk_test (origin http://localhost:3000)", org: demo.OrganizerID, typ: auth.Publishable, env: ticketing.EnvTest, origins: []string{"http://localhost:3000"}},
	{label: "sk_test of the other organizer", org: demo.OtherOrganizerID, typ: auth.Secret, env: ticketing.EnvTest},
	{label: liveKeyLabel, org: demo.OrganizerID, typ: auth.Secret, env: ticketing.EnvLive},
}

// ensureDemoKeys creates the demo keys that do not exist yet (the live one
// only when live: the demo organizer is connected to the simulator) and
// returns them, remembered in dataDir.
func ensureDemoKeys(ctx context.Context, st *store.Store, dataDir string, live bool) ([]demoKey, error) {
	path := filepath.Join(dataDir, "demo-keys.json")
	var saved []demoKey
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &saved)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	usable := map[string]bool{} // key ids that exist and are usable
	for _, org := range []string{demo.OrganizerID, demo.OtherOrganizerID} {
		ks, err := st.Keys.ListKeys(ctx, org)
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			if k.Usable(time.Now()) {
				usable[k.ID] = true
			}
		}
	}
	var out []demoKey
	changed := false
	for _, spec := range demoKeySpecs {
		if spec.env == ticketing.EnvLive && !live {
			continue
		}
		i := slices.IndexFunc(saved, func(k demoKey) bool { return k.Label == spec.label && usable[k.ID] })
		if i >= 0 {
			out = append(out, saved[i])
			continue
		}
		secret := auth.NewSecret(spec.typ, spec.env)
		k := auth.Key{
			ID: auth.NewKeyID(), OrganizerID: spec.org, Type: spec.typ, Environment: spec.env,
			Name: "demo " + spec.label, Scopes: auth.DefaultScopes(spec.typ), AllowedOrigins: spec.origins,
			Last4: secret[len(secret)-4:], CreatedAt: time.Now().UTC(),
		}
		if err := st.Keys.CreateKey(ctx, k, auth.Hash(secret)); err != nil {
			return nil, err
		}
		out = append(out, demoKey{Label: spec.label, ID: k.ID, OrganizerID: spec.org, Secret: secret})
		changed = true
	}
	if changed {
		b, _ := json.MarshalIndent(out, "", "  ")
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, err
		}
		step("Created demo keys (remembered in %s)", path)
	} else {
		step("Reusing demo keys from %s", path)
	}
	return out, nil
}

// jsonID is the shell pipe that prints the "id" of a JSON response.
const jsonID = `python3 -c 'import sys,json;print(json.load(sys.stdin)["id"])'`

// printWelcome prints the demo keys and commands that work when pasted into
// bash or zsh, in order: every curl line names the key and the base URL, and
// the tixctl lines carry the settings (endpoint, table, region) they need to
// reach this stack's table when those are not tixctl's defaults.
func printWelcome(cfg config.Config, addr string, keys []demoKey, owner demoOwner, sim *simulator) {
	base := "http://" + addr + "/v1"
	tixctl := tixctlEnv(cfg) + "go run ./scripts/tixctl"
	var b strings.Builder
	fmt.Fprintf(&b, "\ntix is running on %s (Ctrl-C stops it and the emulators it started)\n\n", base)
	fmt.Fprintf(&b, "API reference: %s/docs (OpenAPI: %s/openapi.json; guide: docs/api.md)\n", base, base)
	fmt.Fprintf(&b, "Dashboard: http://%s%s/  sign in: %s / %s\n", addr, cfg.Dashboard.Path, owner.Email, owner.Password)
	if cfg.Mail.Sender == "smtp" {
		fmt.Fprintf(&b, "Email inbox (MailDev: every email this stack sends lands here): %s\n", getenv("TIX_MAILDEV_URL"))
	}
	b.WriteString("\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-42s %s\n", k.Label+":", k.Secret)
	}
	sk := keys[0].Secret
	fmt.Fprintf(&b, "\nTry it:\n  curl -s -H 'Authorization: Bearer %s' %s/events\n", sk, base)
	fmt.Fprintf(&b, "  curl -s -H 'Authorization: Bearer %s' -H 'Origin: http://localhost:3000' %s/ping\n", keys[1].Secret, base)
	fmt.Fprintf(&b, "  curl -s %s/health\n", base)
	tier := catalogimport.CatalogTierID(demo.OrganizerID, demo.RefConcert, "dance-floor")
	fmt.Fprintf(&b, "\nBuy a ticket (test mode: pay it with simulate-payment, then fetch the tickets; paste in order, bash or zsh):\n")
	fmt.Fprintf(&b, "  ORDER=$(curl -s -X POST -H 'Authorization: Bearer %s' -H \"Idempotency-Key: try-$RANDOM$RANDOM\" -H 'Content-Type: application/json' \\\n", sk)
	fmt.Fprintf(&b, "    -d '{\"tier_id\":\"%s\",\"quantity\":2,\"buyer\":{\"email\":\"%s\"}}' %s/orders | %s)\n", tier, demo.BuyerEmail, base, jsonID)
	fmt.Fprintf(&b, "  curl -s -X POST -H 'Authorization: Bearer %s' %s/orders/$ORDER/simulate-payment\n", sk, base)
	fmt.Fprintf(&b, "  curl -s -H 'Authorization: Bearer %s' %s/orders/$ORDER/tickets\n", sk, base)
	fmt.Fprintf(&b, "  curl -s -H 'Authorization: Bearer %s' %s/orders/$ORDER   # \"email\": the tickets email (marked TEST) to %s, in the inbox\n", sk, base, demo.BuyerEmail)
	fmt.Fprintf(&b, "\nReceive webhooks (your receiver must answer endpoint.verify with its data.nonce; docs/webhooks.md runs one with go run ./scripts/webhookreceiver):\n")
	fmt.Fprintf(&b, "  WE=$(%s --json webhooks create --organizer %s --env test --url http://127.0.0.1:9000/hooks | %s)\n", tixctl, demo.OrganizerID, jsonID)
	fmt.Fprintf(&b, "  %s webhooks verify $WE\n", tixctl)
	fmt.Fprintf(&b, "  curl -s -H 'Authorization: Bearer %s' %s/webhook-deliveries\n", sk, base)
	printLive(&b, tixctl, base, keys, sim)
	fmt.Fprintf(&b, "\nOperator CLI: %s --help\n", tixctl)
	fmt.Print(b.String())
}

// tixctlEnv is the environment a tixctl command line needs to reach this
// stack's table: the settings that differ from tixctl's defaults (DynamoDB
// Local on 127.0.0.1:8000, table tix, region us-east-1), e.g. with
// TIX_DYNAMODB_PORT=8001 "TIX_DYNAMODB_ENDPOINT=http://127.0.0.1:8001 ".
func tixctlEnv(cfg config.Config) string {
	var env []string
	if cfg.DynamoDBEndpoint != localDefaults["TIX_DYNAMODB_ENDPOINT"] {
		env = append(env, "TIX_DYNAMODB_ENDPOINT="+cfg.DynamoDBEndpoint)
	}
	if cfg.Table != "tix" {
		env = append(env, "TIX_TABLE="+cfg.Table)
	}
	if cfg.Region != "us-east-1" {
		env = append(env, "AWS_REGION="+cfg.Region)
	}
	if len(env) == 0 {
		return ""
	}
	return strings.Join(env, " ") + " "
}
