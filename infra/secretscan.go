package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/config"
)

// SecretScanningRoutePath is where GitHub's secret scanning partner program
// posts the tix keys it finds in public, below the stage (/v1). The route has
// no authorizer: the report's signature under GitHub's published key is its
// authentication, checked by the webhooks function (docs/secret-scanning.md).
const SecretScanningRoutePath = "/secret-scanning/github"

// The secret scanning route's own throttle: GitHub reports a few matches at a
// time, rarely; a flood of forged reports (each a signature check, and at
// most one fetch of GitHub's key list a minute per function instance) takes
// at most this much of the account's rate and of the webhooks function's
// concurrency. A report refused with 429 is sent again by GitHub.
const (
	SecretScanningRateLimit  = 10
	SecretScanningBurstLimit = 20
)

// checkSecretScanning validates the context secretScanningKeysUrl (the key
// list reports are verified with) and returns the value the webhooks
// function gets: the context's, or the functions' default (GitHub's list).
func checkSecretScanning(props *TixStackProps) (string, error) {
	raw := strings.TrimSpace(props.SecretScanningKeysURL)
	if raw == "" {
		for _, v := range config.Vars {
			if v.Name == "TIX_SECRET_SCANNING_KEYS_URL" {
				return v.Default, nil
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
		return "", fmt.Errorf("secretScanningKeysUrl %q: want an https URL such as https://api.github.com/meta/public_keys/secret_scanning", raw)
	}
	return raw, nil
}

// secretScanningEnv gives the function serving the route (Routes) the key
// list's URL.
func secretScanningEnv(fns map[string]awslambda.Function, keysURL string) {
	fns[Routes["POST "+SecretScanningRoutePath]].AddEnvironment(jsii.String("TIX_SECRET_SCANNING_KEYS_URL"), jsii.String(keysURL), nil)
}
