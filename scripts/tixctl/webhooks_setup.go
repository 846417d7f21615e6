package main

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"

	tixapp "tix/internal/app"
	"tix/internal/config"
	"tix/internal/store"
	"tix/internal/webhook"
)

// How the webhooks group reaches the service: the keyring it may use and the
// webhook service over tixctl's store.

// localDynamo tells whether tixctl talks to a DynamoDB that is not AWS (the
// local stack): only there may the public local keyring be used.
func (a *app) localDynamo() bool {
	if a.endpoint == "" {
		return false
	}
	u, err := url.Parse(a.endpoint)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return host != "" && !strings.HasSuffix(host, ".amazonaws.com") && !strings.HasSuffix(host, ".amazonaws.com.cn")
}

// webhookConfig reads the webhook settings from the environment as the
// Lambdas do (config.Load), with what tixctl can default: the cursor secret
// (config.Load wants one; tixctl never uses it) and, on the local stack only,
// the local keyring.
func (a *app) webhookConfig() (config.Config, error) {
	local := a.localDynamo()
	if !local && strings.TrimSpace(os.Getenv("TIX_WEBHOOK_KEYRING")) == "" {
		return config.Config{}, errors.New("TIX_WEBHOOK_KEYRING is not set: against AWS, tixctl seals and opens webhook secrets " +
			"with the deployed stack's keyring; export TIX_WEBHOOK_KEYRING with the value the Lambdas have " +
			"(the local keyring is used only with a local --endpoint)")
	}
	getenv := func(name string) string {
		if v := os.Getenv(name); strings.TrimSpace(v) != "" {
			return v
		}
		switch name {
		case "TIX_CURSOR_SECRET":
			return "tixctl-does-not-use-the-cursor-secret"
		case "TIX_WEBHOOK_KEYRING":
			if local {
				return config.LocalKeyring
			}
		}
		return ""
	}
	return config.Load(getenv)
}

// webhooks builds the webhook service over tixctl's store. The queue is nil:
// the management actions (create, update, rotate, disable, enable, delete,
// verify, test) never enqueue; verify and test POST at once, outside the
// queue. Fan-out, attempts and redelivery do, and tixctl does not run them.
func (a *app) webhooks(ctx context.Context) (*webhook.Service, *store.Store, config.Config, error) {
	cfg, err := a.webhookConfig()
	if err != nil {
		return nil, nil, cfg, err
	}
	st, err := a.store(ctx)
	if err != nil {
		return nil, nil, cfg, err
	}
	svc, err := tixapp.NewWebhooks(cfg, st.Webhooks, nil, a.clock)
	if err != nil {
		return nil, nil, cfg, err
	}
	if a.localDynamo() {
		// The local stack delivers from this machine; a deployed one from Lambda,
		// where loopback is the runtime API.
		tixapp.AllowLoopbackWebhooks(svc, cfg)
	}
	return svc, st, cfg, nil
}
