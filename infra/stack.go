package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/config"
	"tix/internal/queue"
)

// ProdStage is the one stage whose data outlives the stack: its table, keys,
// secrets and logs are retained and its table and stack are deletion-protected.
// Every other stage (dev, a developer's own) is disposable.
const ProdStage = "prod"

// TixStackProps configure one stage of tix.
type TixStackProps struct {
	awscdk.StackProps
	// Stage names every resource: tix-<stage>, tix-<stage>-<function>, ...
	Stage string
	// AssetDir returns the directory holding a function's bootstrap (make build
	// writes build/<name>/bootstrap). Nil means <repo>/build/<name>.
	AssetDir func(name string) string
	// AlarmEmail, when set, subscribes an address to the alarm topic (it must
	// confirm the subscription from the mail AWS sends).
	AlarmEmail string
	// Settings are TIX_* overrides passed to every function, for example
	// {"TIX_HOLD_TTL": "10m"}. They are checked like the functions check them.
	Settings map[string]string
	// WebhookKeyIDs are the ids of the webhook keyring, first one sealing
	// (default ["k1"]). Each id is a JSON field of the keyring secret; see
	// keyringSecret for rotation.
	WebhookKeyIDs []string
	// PublicURL is the API's public base URL without /v1 (https://host), when
	// a custom domain serves it: T-Bank posts payment notifications to
	// <PublicURL>/v1/payment-notifications/tbank. Empty: the HTTP API's own
	// execute-api URL.
	PublicURL string
	// TBankAPIURL is T-Bank's Internet Acquiring API base URL, without /v2.
	// Empty: the production URL (config's default), which DEMO terminals use too.
	TBankAPIURL string
	// OnSale prepares the stage for an on-sale spike (onsale.go; context
	// tableWarmReads, reservedConcurrency, apiRateLimit, ...). Zero: none.
	OnSale OnSale
	// MailFrom is the address tix sends email from through Amazon SES
	// (mail.go). Empty: email is off (TIX_MAIL_SENDER=none), no SES resource.
	MailFrom string
	// MailIdentity is the SES identity the stack creates: MailFrom itself or
	// its domain (or a parent domain). Empty: the operator verified one already.
	MailIdentity string
	// Edge puts CloudFront with AWS WAF in front of the API (edge.go; context
	// edge=true, edgeWebAclArn, ...). Zero: none.
	Edge Edge
	// SecretScanningKeysURL is where the webhooks function reads the secret
	// scanning reporter's published keys (secretscan.go; context
	// secretScanningKeysUrl). Empty: GitHub's list.
	SecretScanningKeysURL string
}

// Function is one of tix's Lambdas: functions/<Name>/main.go.
type Function struct {
	Name    string
	Memory  int           // MB; Lambda gives CPU in proportion to memory
	Timeout time.Duration // the Lambda timeout
	Sends   []string      // queues (queue.Queues) the function sends to
	// Acquirer: the function calls the live acquirer (T-Bank) over the
	// internet: it creates, refunds or reconciles live orders, or checks a
	// terminal an owner connects in the dashboard. It gets
	// TIX_PUBLIC_URL (the notification URL the bank is given) and
	// TIX_TBANK_API_URL, and its timeout leaves room for a bank call that
	// takes all of TIX_TBANK_TIMEOUT (BankHeadroom).
	Acquirer bool
	// Mails: the function sends email (ses:SendEmail as mailFrom). Every
	// function gets the email environment (they all read email statuses or
	// write jobs); only the queue consumer of email jobs sends.
	Mails bool
	// Documents: the function serves /v1/openapi.json, whose servers URL is
	// TIX_PUBLIC_URL (never a request's Host), so it gets TIX_PUBLIC_URL too.
	Documents bool
	// Dashboard: the function serves the organizer dashboard below the
	// stage (TIX_DASHBOARD_PATH DashboardPath); its emailed links start with
	// TIX_PUBLIC_URL (never a request's Host), so it gets that too.
	Dashboard bool
}

// DashboardPath is the dashboard's path below the API's host: the stage's
// /v1 prefix, then the dashboard's routes.
const DashboardPath = "/v1/dashboard"

// Functions are the eight Lambdas, with the memory and timeout each gets.
var Functions = []Function{
	// Seating maps render up to ~2 MB of JSON: Lambda's CPU grows with memory,
	// so 512 MB encodes a big map about twice as fast as 256 MB would, and holds
	// it comfortably. 10 s is far above any request and well under API
	// Gateway's own 30 s integration limit, so a stuck call is cut by us, with
	// our logs, not by the gateway.
	{Name: "catalog", Memory: 512, Timeout: 10 * time.Second, Documents: true},
	// The other HTTP groups handle small JSON bodies (a QR PNG for orders is a
	// few KB): 256 MB, the same 10 s. Creating holds, orders and webhook changes
	// schedule timers (expiry, settlement) and queue webhook fan-outs.
	{Name: "holds", Memory: 256, Timeout: 10 * time.Second, Sends: []string{queue.TimersQueue, queue.DeliveriesQueue}},
	// orders creates and refunds live orders through T-Bank (CheckOrder, Init
	// and GetQr, or GetState and Cancel) within TIX_TBANK_TIMEOUT (10 s by
	// default): 20 s, so a bank that hangs is answered with our 502
	// payment_provider_error instead of a Lambda timeout, still well under
	// API Gateway's 30 s. The notifications route is served here too.
	{Name: "orders", Memory: 256, Timeout: 20 * time.Second, Sends: []string{queue.TimersQueue, queue.DeliveriesQueue}, Acquirer: true},
	{Name: "webhooks", Memory: 256, Timeout: 10 * time.Second, Sends: []string{queue.TimersQueue, queue.DeliveriesQueue}},
	// The door: a check-in is one conditional write, its code verified in
	// memory; 256 MB, 10 s. When an endpoint subscribes to ticket.checked_in
	// it writes the event and queues its fan-out.
	{Name: "checkins", Memory: 256, Timeout: 10 * time.Second, Sends: []string{queue.DeliveriesQueue}},
	// The organizer dashboard's pages: small, but a sign-in hashes a
	// password with argon2id (19 MiB, about 30 ms at 256 MB), and the Test
	// and Verify buttons POST to the receiver within TIX_WEBHOOK_TIMEOUT
	// (10 s): 20 s. It writes email jobs (sign-up, reset, invitations),
	// whose messages go to the deliveries queue.
	// The dashboard checks a terminal's credentials with T-Bank when an
	// owner connects it (Acquirer: the bank's URL, room for its timeout).
	{Name: "dashboard", Memory: 256, Timeout: 20 * time.Second, Sends: []string{queue.DeliveriesQueue}, Dashboard: true, Acquirer: true},
	// A batch of 10 webhook attempts runs concurrently, each with a 10 s POST
	// timeout (TIX_WEBHOOK_TIMEOUT) plus a few DynamoDB writes: 60 s leaves
	// plenty of room. Memory is mostly idle waiting on receivers: 256 MB.
	// It sends the email jobs too (Mails) and applies SES's bounces and
	// complaints, which arrive on its queue.
	{Name: "deliver", Memory: 256, Timeout: 60 * time.Second, Sends: []string{queue.DeliveriesQueue}, Mails: true},
	// Timer batches are small; the sweep expires up to 500 orders and
	// re-queues overdue webhook work per run: 60 s. It reconciles live orders
	// (GetState at expiry, payment.check, refund.check) and voids or refunds
	// through T-Bank.
	{Name: "timers", Memory: 256, Timeout: 60 * time.Second, Sends: []string{queue.TimersQueue, queue.DeliveriesQueue}, Acquirer: true},
}

// Consumers maps each work queue to the function its event source mapping
// invokes. Every name in queue.Queues must have one.
var Consumers = map[string]string{
	queue.DeliveriesQueue: "deliver",
	queue.TimersQueue:     "timers",
}

// Routes are the HTTP API's route keys (METHOD /path below the stage, or
// $default) and the function serving each; a test routes every route of the
// router (api.Server.RouteKeys) through them to the function of its group.
// $default catches every other path, so an unknown route gets the API's JSON
// 404 not_found from the router, not API Gateway's bare {"message":"Not Found"}.
// The groups' routes take ANY method (the router answers 405 and preflights
// itself); T-Bank's notifications are a POST without an API key, authenticated
// by the Token under the terminal's password, so only POST is routed there.
var Routes = map[string]string{
	"ANY /events":                      "catalog",
	"ANY /events/{proxy+}":             "catalog",
	"ANY /ping":                        "catalog",
	"ANY /health":                      "catalog",
	"ANY /openapi.json":                "catalog",
	"$default":                         "catalog",
	"ANY /seat-holds":                  "holds",
	"ANY /seat-holds/{proxy+}":         "holds",
	"ANY /queue/{proxy+}":              "holds", // the waiting room (docs/waiting-room.md)
	"ANY /orders":                      "orders",
	"ANY /orders/{proxy+}":             "orders",
	"ANY /test-helpers/{proxy+}":       "orders",
	"POST " + NotificationRoutePath:    "orders",
	"POST " + SecretScanningRoutePath:  "webhooks",
	"ANY /webhook-endpoints":           "webhooks",
	"ANY /webhook-endpoints/{proxy+}":  "webhooks", // replays (docs/webhooks.md)
	"ANY /webhook-deliveries":          "webhooks",
	"ANY /webhook-deliveries/{proxy+}": "webhooks",
	"ANY /request-log/{proxy+}":        "webhooks",
	"ANY /order-events":                "webhooks",
	"ANY /ticket-keys":                 "checkins",
	"ANY /check-ins":                   "checkins",
	"ANY /check-ins/{proxy+}":          "checkins",
	// Below /events, but the door's: a {param} route wins over a greedy one.
	"ANY /events/{id}/check-in-stats": "checkins",
	"ANY /events/{id}/admission-list": "checkins",
	// Ticket transfers (docs/transfers.md): the orders function's.
	"ANY /tickets/{proxy+}":   "orders",
	"ANY /transfers/{proxy+}": "orders",
	"ANY /dashboard":          "dashboard",
	"ANY /dashboard/{proxy+}": "dashboard",
}

// NotificationRoutePath is where T-Bank posts payment notifications, below
// the stage (/v1): the app's NotificationPath without its /v1.
const NotificationRoutePath = "/payment-notifications/tbank"

// Settings of the stack that are not configurable per deploy.
const (
	// VisibilityFactor: AWS recommends a queue visibility timeout of at least six
	// times the timeout of the function its event source mapping invokes, so
	// that retries of a throttled batch do not make messages visible again while
	// they are still being processed.
	VisibilityFactor = 6
	// BatchSize: SQS messages per invocation (SQS's receive maximum).
	BatchSize = 10
	// DeliverMaxConcurrency caps the deliver function's concurrent invocations
	// from its queue: 20 invocations x 10 messages = at most 200 webhook POSTs
	// in flight, whatever the backlog, so a burst cannot exhaust the account's
	// Lambda concurrency (1,000 by default) that the API needs.
	DeliverMaxConcurrency = 20
	// API stage throttling: the v1 stage's default route throttling, the
	// steady rate and burst accepted before answering 429; a route with a
	// setting of its own (the bank's, below) is throttled by that instead,
	// separately from the rest of the API. The account limit
	// (10,000 rps) is shared by every API in the region; 1,000 rps of ~50 ms
	// calls is ~50 concurrent Lambdas, and a 2,000 burst absorbs an on-sale
	// spike. Per-key limits are the app's own.
	APIRateLimit  = 1000
	APIBurstLimit = 2000
	// The bank's notification route (POST /payment-notifications/tbank, no
	// key) has its own, lower throttle: a flood of forged notifications
	// (each verified, then answered by a GetState call to the bank) takes at
	// most this much of the account's rate and of the orders function's
	// concurrency, which order creation shares. The bank's genuine
	// notifications come at a few per payment; one refused with 429 is
	// retried by the bank, and reconciliation asks the bank at the order's
	// expiry in any case. Context notificationRateLimit/notificationBurstLimit.
	NotificationRateLimit  = 100
	NotificationBurstLimit = 200
	// BankHeadroom: an Acquirer function's timeout is at least
	// TIX_TBANK_TIMEOUT plus this, for the DynamoDB work around a bank call
	// that takes its whole timeout.
	BankHeadroom = 5 * time.Second
	// Alarm thresholds.
	Alarm5xxPercent   = 1.0  // API 5xx / requests over 5 minutes, in percent
	Alarm5xxMinCount  = 5    // ... once at least this many 5xx came (so low traffic alarms too)
	AlarmP99LatencyMs = 2000 // API p99 latency over 5 minutes
)

// stackOwned are variables the stack sets itself; settings may not override them.
var stackOwned = map[string]bool{
	"TIX_TABLE": true, "TIX_QUEUE_PREFIX": true, "TIX_CURSOR_SECRET": true, "TIX_WEBHOOK_KEYRING": true,
	"TIX_CURSOR_SECRET_ARN": true, "TIX_WEBHOOK_KEYRING_ARN": true, "TIX_WEBHOOK_KEYRING_IDS": true,
	// Context publicUrl and tbankApiUrl set these (TixStackProps).
	"TIX_PUBLIC_URL": true, "TIX_TBANK_API_URL": true,
	// Context secretScanningKeysUrl sets this (secretscan.go).
	"TIX_SECRET_SCANNING_KEYS_URL": true,
	// Context mailFrom sets these (mail.go).
	"TIX_MAIL_SENDER": true, "TIX_MAIL_FROM": true, "TIX_SES_CONFIGURATION_SET": true,
	// Context edge sets these (edge.go).
	"TIX_EDGE_SECRET": true, "TIX_EDGE_SECRET_ARN": true, "TIX_EDGE_ONLY": true,
	// The emulator endpoints are for the local stack only.
	"TIX_DYNAMODB_ENDPOINT": true, "TIX_SQS_ENDPOINT": true,
}

// CheckSettings validates TIX_* overrides: each must be a variable the
// functions read (config.Vars), not one the stack owns, and the values must
// pass the functions' own validation (config.Load), so a typo fails the synth
// instead of every cold start.
func CheckSettings(settings map[string]string) error {
	known := map[string]bool{}
	for _, v := range config.Vars {
		known[v.Name] = true
	}
	var errs []string
	for name := range settings {
		switch {
		case !strings.HasPrefix(name, "TIX_") || !known[name]:
			errs = append(errs, fmt.Sprintf("%s is not a TIX_ variable the functions read (see docs/configuration.md)", name))
		case name == "TIX_PUBLIC_URL" || name == "TIX_TBANK_API_URL":
			errs = append(errs, fmt.Sprintf("%s is set by the stack: use the context publicUrl or tbankApiUrl", name))
		case name == "TIX_MAIL_SENDER" || name == "TIX_MAIL_FROM" || name == "TIX_SES_CONFIGURATION_SET":
			errs = append(errs, fmt.Sprintf("%s is set by the stack: use the context mailFrom (and mailIdentity)", name))
		case strings.HasPrefix(name, "TIX_EDGE_"):
			errs = append(errs, fmt.Sprintf("%s is set by the stack: use the context edge (and edgeDirect)", name))
		case name == "TIX_SECRET_SCANNING_KEYS_URL":
			errs = append(errs, fmt.Sprintf("%s is set by the stack: use the context secretScanningKeysUrl", name))
		case stackOwned[name]:
			errs = append(errs, fmt.Sprintf("%s is set by the stack and cannot be overridden", name))
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("settings: %s", strings.Join(errs, "; "))
	}
	if _, err := loadSettings(settings); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return nil
}

// loadSettings is the configuration the functions load from settings, with
// placeholders for the secrets (validation only).
func loadSettings(settings map[string]string) (config.Config, error) {
	return config.Load(func(name string) string {
		switch name {
		case "TIX_CURSOR_SECRET":
			return "synth-time-placeholder-cursor-secret"
		case "TIX_WEBHOOK_KEYRING":
			return config.LocalKeyring // placeholder: validation only
		}
		return settings[name]
	})
}

// ParseSettings reads the settings context value: a JSON object of strings
// (cdk.json or -c settings='{"TIX_HOLD_TTL":"10m"}'), or nil.
func ParseSettings(v any) (map[string]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			return nil, fmt.Errorf(`settings: want a JSON object of strings such as {"TIX_HOLD_TTL":"10m"}: %v`, err)
		}
		return m, nil
	case map[string]any:
		m := map[string]string{}
		for k, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("settings: %s must be a string (Go duration syntax such as \"90s\" for durations)", k)
			}
			m[k] = s
		}
		return m, nil
	}
	return nil, fmt.Errorf("settings: want a JSON object of strings, got %T", v)
}

var stageRe = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)

// NewTixStack is one stage of tix: table, queues, secrets, functions, HTTP API,
// schedule, alarms and, with mailFrom, SES, each built by a named step
// (resources.go, mail.go).
func NewTixStack(scope constructs.Construct, id string, props *TixStackProps) (awscdk.Stack, error) {
	if props == nil {
		props = &TixStackProps{}
	}
	keyIDs, err := checkProps(props)
	if err != nil {
		return nil, err
	}
	live, err := checkPayments(props)
	if err != nil {
		return nil, err
	}
	mailing, err := checkMail(props)
	if err != nil {
		return nil, err
	}
	if err := checkEdge(props); err != nil {
		return nil, err
	}
	scanKeysURL, err := checkSecretScanning(props)
	if err != nil {
		return nil, err
	}
	b := newBuild(scope, id, props)
	b.mailOn = mailing.from != ""
	key, cursorSecret, keyringSecret := newSecrets(b.stack, b.stage, b.prefix, b.prod, b.removal)
	table := b.table(props.OnSale)
	queues, dlqs := b.queues()
	env := map[string]*string{
		"TIX_TABLE":        table.TableName(),
		"TIX_QUEUE_PREFIX": jsii.String(b.prefix),
		"TIX_LOG_FORMAT":   jsii.String("json"),
		"TIX_LOG_LEVEL":    jsii.String("info"),
		// The secrets themselves are not in the environment (anyone who can
		// read the function's configuration could read them): each function
		// reads them from Secrets Manager once at start (internal/awscfg).
		"TIX_CURSOR_SECRET_ARN":   cursorSecret.Ref(),
		"TIX_WEBHOOK_KEYRING_ARN": keyringSecret.Ref(),
		"TIX_WEBHOOK_KEYRING_IDS": jsii.String(strings.Join(keyIDs, ",")),
		// AWS_REGION is set by Lambda itself.
	}
	for k, v := range props.Settings {
		env[k] = jsii.String(v)
	}
	mailEnv, configSet := b.mail(mailing, queues[queue.DeliveriesQueue])
	for k, v := range mailEnv {
		env[k] = v
	}
	grants := secretGrants{key: key, secrets: []*string{cursorSecret.Ref(), keyringSecret.Ref()}}
	fns := map[string]awslambda.Function{}
	for _, f := range Functions {
		fns[f.Name] = b.function(f, env, table, queues, grants, props.OnSale.Reserved[f.Name])
	}
	b.allowSend(mailing, configSet, fns)
	b.consumers(fns, queues, props.OnSale)
	b.sweep(fns["timers"])
	secretScanningEnv(fns, scanKeysURL)
	apiStage := b.api(fns, props.OnSale)
	notificationURL := b.acquirerEnv(fns, apiStage.Api(), live)
	var edge awscloudfront.Distribution
	if props.Edge.On {
		edge = b.edge(props.Edge, apiStage, fns, key)
	}
	apiAccessLogs(b.stack, apiStage, b.prefix, b.logRetention, b.removal)
	topic := newAlarms(b.stack, b.stage, b.prefix, props.AlarmEmail, apiStage, fns, table, dlqs, configSet, props.OnSale.Provisioned)

	stackOutputs(b.stack, apiStage, table, cursorSecret, keyringSecret, topic, notificationURL, edge)
	return b.stack, nil
}

// stackOutputs names what an operator needs after a deploy: the API's URL
// (and the edge's, when there is one), the table, the secrets to fill, the
// alarm topic and the bank's notification URL.
func stackOutputs(stack awscdk.Stack, apiStage awsapigatewayv2.HttpStage, table awsdynamodb.Table, cursorSecret, keyringSecret awssecretsmanager.CfnSecret,
	topic awssns.Topic, notificationURL *string, edge awscloudfront.Distribution) {
	out := func(id, desc string, v *string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: v, Description: jsii.String(desc)})
	}
	out("ApiBaseUrl", "Base URL of the API (stage v1)", apiStage.Url())
	out("TableName", "DynamoDB table", table.TableName())
	out("CursorSecretArn", "Secrets Manager secret of TIX_CURSOR_SECRET", cursorSecret.Ref())
	out("WebhookKeyringSecretArn", "Secrets Manager secret of the TIX_WEBHOOK_KEYRING keys", keyringSecret.Ref())
	out("AlarmTopicArn", "SNS topic of the alarms (subscribe on-call here)", topic.TopicArn())
	out("PaymentNotificationUrl", "Where T-Bank posts payment notifications (NotificationURL of every live payment)", notificationURL)
	if edge != nil {
		out("EdgeUrl", "Base URL of the API through CloudFront and AWS WAF (give clients this one)",
			awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("https://"), edge.DistributionDomainName(), jsii.String("/v1")}))
	}
}

// checkProps validates the stage, the settings, the webhook key ids (returned,
// defaulted to k1) and that every queue has a consumer.
func checkProps(props *TixStackProps) ([]string, error) {
	if !stageRe.MatchString(props.Stage) {
		return nil, fmt.Errorf("stage %q: use 1-20 lowercase letters, digits or '-', starting with a letter (dev, prod, ...)", props.Stage)
	}
	if err := CheckSettings(props.Settings); err != nil {
		return nil, err
	}
	if err := props.OnSale.check(); err != nil {
		return nil, fmt.Errorf("on-sale: %w", err)
	}
	keyIDs := props.WebhookKeyIDs
	if len(keyIDs) == 0 {
		keyIDs = []string{"k1"}
	}
	keyIDRe := regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
	for _, k := range keyIDs {
		if !keyIDRe.MatchString(k) {
			return nil, fmt.Errorf("webhook key id %q: use 1-32 letters, digits, '-' or '_'", k)
		}
	}
	for _, q := range queue.Queues {
		if Consumers[q] == "" {
			return nil, fmt.Errorf("queue %q has no consumer function in Consumers", q)
		}
	}
	return keyIDs, nil
}

// camel turns "deliveries" into "Deliveries" for construct ids.
func camel(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
