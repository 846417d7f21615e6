// Command infra is tix's CDK app: one stack per stage, tix-<stage>.
//
//	make synth [STAGE=dev]          # make build, then cdk synth into cdk.out/ (offline)
//	make deploy STAGE=prod          # make build, then cdk deploy (needs AWS credentials)
//
// Context (cdk.json, -c name=value on the cdk command line, or CDK_ARGS="-c ..." for make):
//
//	stage          dev (default; also env TIX_STAGE) | prod | any [a-z][a-z0-9-]*
//	               prod retains data, keys, secrets and logs; every other stage is disposable
//	alarmEmail     address subscribed to the alarm topic (optional; make: ALARM_EMAIL=...)
//	settings       JSON object of TIX_* overrides for every function, checked at synth time:
//	               scripts/node_modules/.bin/cdk deploy -c stage=dev -c settings='{"TIX_HOLD_TTL":"10m"}'
//	webhookKeyIds  comma-separated webhook keyring ids, the sealing one first (default k1);
//	               see the keyring secret in secrets.go for rotation
//	publicUrl      the API's public base URL without /v1 when a custom domain serves it
//	               (https://api.example.com); default the HTTP API's execute-api URL.
//	               T-Bank posts notifications to <it>/v1/payment-notifications/tbank
//	tbankApiUrl    T-Bank Internet Acquiring API base URL without /v2 (default
//	               https://securepay.tinkoff.ru, which DEMO terminals use too)
//	mailFrom       the address tix sends email from through Amazon SES
//	               (tickets@example.com); unset: email off (TIX_MAIL_SENDER=none)
//	               and no SES resource. See mail.go and docs/email.md, Email on AWS (SES)
//	secretScanningKeysUrl  where POST /v1/secret-scanning/github reads the reporter's
//	               published keys (default GitHub's, https://api.github.com/meta/public_keys/secret_scanning);
//	               see docs/secret-scanning.md
//	mailIdentity   the SES identity the stack creates: mailFrom's domain (DKIM
//	               records in the outputs) or mailFrom itself (SES mails a link);
//	               unset: the operator verified the identity already
//
// On-sale context (onsale.go; docs/aws.md, Preparing an on-sale), all unset by default:
//
//	tableWarmReads, tableWarmWrites   table warm throughput, units/s (unset: the
//	                                  on-demand baseline, 12,000 reads / 4,000 writes)
//	indexWarmReads, indexWarmWrites   the same for each GSI
//	reservedConcurrency               e.g. catalog=400,holds=100,orders=400 (unset: the account pool)
//	provisionedConcurrency            e.g. orders=50: pre-started instances behind alias "live"
//	                                  (billed per hour while set; unset: none)
//	apiRateLimit, apiBurstLimit       the v1 stage's throttle (default 1000 and 2000 requests/s)
//	notificationRateLimit,            the bank's notification route's own throttle
//	notificationBurstLimit            (default 100 and 200 requests/s)
//	deliverConcurrency                the deliver function's queue mapping cap, 2-1000
//	                                  (default 20 invocations of 10 messages)
//	quotaTableReads, quotaTableWrites the account's quotas the values above must fit (unset:
//	quotaConcurrency                  AWS's defaults, 40,000 units per table and index, 1,000
//	quotaApiRate, quotaApiBurst       concurrent executions, 10,000/5,000 API requests/s)
//
// Edge context (edge.go; docs/aws.md, Preparing an on-sale), off by default:
//
//	edge=true                         CloudFront with AWS WAF in front of the API (output EdgeUrl)
//	edgeWebAclArn                     the web ACL (us-east-1) of a stack elsewhere: deploy
//	                                  tix-<stage>-edge-waf first and pass its WebAclArn output;
//	                                  a stack in us-east-1 makes its own
//	edgeRateLimit, edgeWriteRateLimit requests, and order/hold creations, per IP per minute
//	                                  (default 1000 and 120)
//	edgeDirect=true                   keep the execute-api URL open to keyed requests
//	                                  (default: only through the edge)
//
// Account and region come from CDK_DEPLOY_ACCOUNT/CDK_DEPLOY_REGION, else from
// CDK_DEFAULT_ACCOUNT/CDK_DEFAULT_REGION (which the cdk CLI sets from the AWS
// profile); with neither the stack is environment-agnostic.
//
// It is its own Go module (tix/infra) so that the Lambdas and the root
// `go test ./...` never compile the CDK bindings. Its tests (stack_test.go)
// synthesize the stages offline and check the templates.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	prepareNodeEnv()
	closeJSII := quietJSIIExit()
	err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
	}
	closeJSII() // ends jsii's Node process and removes its temporary files
	if err != nil {
		os.Exit(1)
	}
}

func run() error {
	app := awscdk.NewApp(nil)
	stage := contextString(app, "stage", os.Getenv("TIX_STAGE"))
	if stage == "" {
		stage = "dev"
	}
	settings, err := ParseSettings(app.Node().TryGetContext(jsii.String("settings")))
	if err != nil {
		return err
	}
	onSale, err := ParseOnSale(func(name string) any { return app.Node().TryGetContext(jsii.String(name)) })
	if err != nil {
		return err
	}
	edge, err := ParseEdge(func(name string) any { return app.Node().TryGetContext(jsii.String(name)) })
	if err != nil {
		return err
	}
	var keyIDs []string
	for _, k := range strings.Split(contextString(app, "webhookKeyIds", ""), ",") {
		if k = strings.TrimSpace(k); k != "" {
			keyIDs = append(keyIDs, k)
		}
	}
	root := repoRoot()
	assetDir := func(name string) string { return filepath.Join(root, "build", name) }
	for _, f := range Functions {
		if _, err := os.Stat(filepath.Join(assetDir(f.Name), "bootstrap")); err != nil {
			return fmt.Errorf("%s: missing; run `make build` first (make synth and make deploy do)", filepath.Join(assetDir(f.Name), "bootstrap"))
		}
	}
	stackEnv := env()
	region := ""
	if stackEnv != nil && stackEnv.Region != nil {
		region = *stackEnv.Region
	}
	if edge.On && region != edgeRegion {
		// The web ACL of a stage outside us-east-1 lives in its own stack there.
		account := ""
		if stackEnv != nil && stackEnv.Account != nil {
			account = *stackEnv.Account
		}
		if _, err := NewEdgeWAFStack(app, "tix-"+stage+"-edge-waf", &EdgeWAFProps{Account: account, Stage: stage, Edge: edge}); err != nil {
			return err
		}
		if edge.NeedsWAFStack(region) {
			fmt.Fprintf(os.Stderr, "infra: edge: a CloudFront web ACL must be in %s. Deploy tix-%s-edge-waf first (bootstrap %s once), "+
				"then deploy with -c edgeWebAclArn=<its WebAclArn output>; tix-%s is not synthesized until then\n", edgeRegion, stage, edgeRegion, stage)
			app.Synth(nil)
			return nil
		}
	}
	_, err = NewTixStack(app, "tix-"+stage, &TixStackProps{
		StackProps:    awscdk.StackProps{Env: stackEnv},
		Stage:         stage,
		AssetDir:      assetDir,
		AlarmEmail:    contextString(app, "alarmEmail", ""),
		Settings:      settings,
		WebhookKeyIDs: keyIDs,
		PublicURL:     contextString(app, "publicUrl", ""),
		TBankAPIURL:   contextString(app, "tbankApiUrl", ""),
		OnSale:        onSale,
		MailFrom:      contextString(app, "mailFrom", ""),
		MailIdentity:  contextString(app, "mailIdentity", ""),
		Edge:          edge,
		// GitHub's secret scanning key list, or another reporter's.
		SecretScanningKeysURL: contextString(app, "secretScanningKeysUrl", ""),
	})
	if err != nil {
		return err
	}
	app.Synth(nil)
	return nil
}

// contextString is a context value as a string, or def when unset.
func contextString(app awscdk.App, name, def string) string {
	switch v := app.Node().TryGetContext(jsii.String(name)).(type) {
	case string:
		if v != "" {
			return v
		}
	case nil:
	default:
		return fmt.Sprint(v)
	}
	return def
}

// env is the stack's account and region from the usual CDK variables.
func env() *awscdk.Environment {
	first := func(names ...string) string {
		for _, n := range names {
			if v := os.Getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	account := first("CDK_DEPLOY_ACCOUNT", "CDK_DEFAULT_ACCOUNT")
	region := first("CDK_DEPLOY_REGION", "CDK_DEFAULT_REGION")
	if account == "" && region == "" {
		return nil
	}
	e := &awscdk.Environment{}
	if account != "" {
		e.Account = jsii.String(account)
	}
	if region != "" {
		e.Region = jsii.String(region)
	}
	return e
}

// repoRoot is the tix repository: the nearest directory above the working
// directory holding both functions/ and infra/ (cdk.json runs `cd infra && go run .`).
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ".."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if isDir(filepath.Join(d, "functions")) && isDir(filepath.Join(d, "infra")) {
			return d
		}
		if filepath.Dir(d) == d {
			return filepath.Dir(dir)
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
