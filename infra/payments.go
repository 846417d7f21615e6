package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/config"
)

// Live payments on AWS: the functions that call T-Bank (Function.Acquirer)
// learn where the bank is (TIX_TBANK_API_URL) and where it must post its
// notifications (TIX_PUBLIC_URL). Both are the stack's, never settings.
// Terminal passwords are sealed with the webhook keyring, which every
// function already reads (keyringSecret); the functions run outside any VPC,
// so they reach the bank over the internet without a NAT gateway.

// livePayments is what checkPayments settled for the acquirer functions.
type livePayments struct {
	publicURL string // "" : the HTTP API's own execute-api URL
	tbankURL  string
}

// checkPayments validates the context publicUrl and tbankApiUrl (the bank's
// URL defaults to config's, the production one, which DEMO terminals use too)
// and that every acquirer function outlives a bank call that takes its whole
// TIX_TBANK_TIMEOUT.
func checkPayments(props *TixStackProps) (livePayments, error) {
	lp := livePayments{tbankURL: props.TBankAPIURL}
	if lp.tbankURL == "" {
		for _, v := range config.Vars {
			if v.Name == "TIX_TBANK_API_URL" {
				lp.tbankURL = v.Default
			}
		}
	}
	var err error
	if lp.tbankURL, err = httpsBase("tbankApiUrl", lp.tbankURL, "/v2"); err != nil {
		return lp, err
	}
	if props.PublicURL != "" {
		if lp.publicURL, err = httpsBase("publicUrl", props.PublicURL, "/v1"); err != nil {
			return lp, err
		}
	}
	cfg, err := loadSettings(props.Settings)
	if err != nil {
		return lp, fmt.Errorf("settings: %w", err)
	}
	for _, f := range Functions {
		if f.Acquirer && cfg.Payments.TBankTimeout+BankHeadroom > f.Timeout {
			return lp, fmt.Errorf("settings: TIX_TBANK_TIMEOUT %v leaves the %s function (timeout %v) less than %v for its own work: at most %v",
				cfg.Payments.TBankTimeout, f.Name, f.Timeout, BankHeadroom, f.Timeout-BankHeadroom)
		}
	}
	return lp, nil
}

// httpsBase checks that raw is an https base URL (no query, no fragment, not
// ending in the version path the app adds) and returns it without a
// trailing slash.
func httpsBase(name, raw, version string) (string, error) {
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s %q: %v", name, raw, err)
	case u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("%s %q: want an https base URL such as https://host (no query, fragment or credentials)", name, raw)
	case strings.HasSuffix(u.Path, version):
		return "", fmt.Errorf("%s %q: give the base URL without %s (tix adds it)", name, raw, version)
	}
	return s, nil
}

// acquirerEnv gives the acquirer functions TIX_TBANK_API_URL and
// TIX_PUBLIC_URL (the latter also to the functions serving the OpenAPI
// document and the dashboard; the dashboard also its TIX_DASHBOARD_PATH) and returns the notification URL. Without a publicUrl the
// public URL is built from the API's id, the region and the URL suffix, not
// from the stage's URL: the functions' configuration must not wait for the
// stage, whose routes wait for the functions (a dependency cycle).
func (b *build) acquirerEnv(fns map[string]awslambda.Function, api awsapigatewayv2.IHttpApi, lp livePayments) *string {
	public := jsii.String(lp.publicURL)
	if lp.publicURL == "" {
		public = awscdk.Fn_Join(jsii.String(""), &[]*string{
			jsii.String("https://"), api.ApiId(), jsii.String(".execute-api."), b.stack.Region(), jsii.String("."), b.stack.UrlSuffix(),
		})
	}
	for _, f := range Functions {
		if f.Acquirer {
			fns[f.Name].AddEnvironment(jsii.String("TIX_TBANK_API_URL"), jsii.String(lp.tbankURL), nil)
		}
		if f.Acquirer || f.Documents || f.Dashboard {
			fns[f.Name].AddEnvironment(jsii.String("TIX_PUBLIC_URL"), public, nil)
		}
		if f.Dashboard {
			fns[f.Name].AddEnvironment(jsii.String("TIX_DASHBOARD_PATH"), jsii.String(DashboardPath), nil)
		}
	}
	return awscdk.Fn_Join(jsii.String(""), &[]*string{public, jsii.String("/v1" + NotificationRoutePath)})
}
