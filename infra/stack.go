package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/config"
	"tix/internal/queue"
	"tix/internal/store"
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
}

// Function is one of tix's Lambdas: functions/<Name>/main.go.
type Function struct {
	Name    string
	Memory  int           // MB; Lambda gives CPU in proportion to memory
	Timeout time.Duration // the Lambda timeout
	Sends   []string      // queues (queue.Queues) the function sends to
}

// Functions are the six Lambdas, with the memory and timeout each gets.
var Functions = []Function{
	// Seating maps render up to ~2 MB of JSON: Lambda's CPU grows with memory,
	// so 512 MB encodes a big map about twice as fast as 256 MB would, and holds
	// it comfortably. 10 s is far above any request and well under API
	// Gateway's own 30 s integration limit, so a stuck call is cut by us, with
	// our logs, not by the gateway.
	{Name: "catalog", Memory: 512, Timeout: 10 * time.Second},
	// The other HTTP groups handle small JSON bodies (a QR PNG for orders is a
	// few KB): 256 MB, the same 10 s. Creating holds, orders and webhook changes
	// schedule timers (expiry, settlement) and queue webhook fan-outs.
	{Name: "holds", Memory: 256, Timeout: 10 * time.Second, Sends: []string{queue.TimersQueue, queue.DeliveriesQueue}},
	{Name: "orders", Memory: 256, Timeout: 10 * time.Second, Sends: []string{queue.TimersQueue, queue.DeliveriesQueue}},
	{Name: "webhooks", Memory: 256, Timeout: 10 * time.Second, Sends: []string{queue.TimersQueue, queue.DeliveriesQueue}},
	// A batch of 10 webhook attempts runs concurrently, each with a 10 s POST
	// timeout (TIX_WEBHOOK_TIMEOUT) plus a few DynamoDB writes: 60 s leaves
	// plenty of room. Memory is mostly idle waiting on receivers: 256 MB.
	{Name: "deliver", Memory: 256, Timeout: 60 * time.Second, Sends: []string{queue.DeliveriesQueue}},
	// Timer batches are small; the sweep expires up to 500 orders and
	// re-queues overdue webhook work per run: 60 s.
	{Name: "timers", Memory: 256, Timeout: 60 * time.Second, Sends: []string{queue.TimersQueue, queue.DeliveriesQueue}},
}

// Consumers maps each work queue to the function its event source mapping
// invokes. Every name in queue.Queues must have one.
var Consumers = map[string]string{
	queue.DeliveriesQueue: "deliver",
	queue.TimersQueue:     "timers",
}

// Routes are the HTTP API routes (one group of endpoints each) and the function serving each.
// $default catches every other path, so an unknown route gets the API's JSON
// 404 not_found from the router, not API Gateway's bare {"message":"Not Found"}.
var Routes = map[string]string{
	"/events":                      "catalog",
	"/events/{proxy+}":             "catalog",
	"/ping":                        "catalog",
	"/health":                      "catalog",
	"/openapi.json":                "catalog",
	"$default":                     "catalog",
	"/seat-holds":                  "holds",
	"/orders":                      "orders",
	"/orders/{proxy+}":             "orders",
	"/webhook-endpoints":           "webhooks",
	"/webhook-deliveries":          "webhooks",
	"/webhook-deliveries/{proxy+}": "webhooks",
}

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
	// API stage throttling: the steady rate and burst the whole API accepts
	// before answering 429. The account limit (10,000 rps) is shared by every API
	// in the region; 1,000 rps of ~50 ms calls is ~50 concurrent Lambdas, and a
	// 2,000 burst absorbs an on-sale spike. Per-key limits are the app's own.
	APIRateLimit  = 1000
	APIBurstLimit = 2000
	// Alarm thresholds.
	Alarm5xxPercent   = 1.0  // API 5xx / requests over 5 minutes, in percent
	Alarm5xxMinCount  = 100  // ... only when at least this many requests came
	AlarmP99LatencyMs = 2000 // API p99 latency over 5 minutes
)

// stackOwned are variables the stack sets itself; settings may not override them.
var stackOwned = map[string]bool{
	"TIX_TABLE": true, "TIX_QUEUE_PREFIX": true, "TIX_CURSOR_SECRET": true, "TIX_WEBHOOK_KEYRING": true,
	"TIX_CURSOR_SECRET_ARN": true, "TIX_WEBHOOK_KEYRING_ARN": true, "TIX_WEBHOOK_KEYRING_IDS": true,
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
			errs = append(errs, fmt.Sprintf("%s is not a TIX_ variable the functions read (see README, Configuration)", name))
		case stackOwned[name]:
			errs = append(errs, fmt.Sprintf("%s is set by the stack and cannot be overridden", name))
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("settings: %s", strings.Join(errs, "; "))
	}
	_, err := config.Load(func(name string) string {
		switch name {
		case "TIX_CURSOR_SECRET":
			return "synth-time-placeholder-cursor-secret"
		case "TIX_WEBHOOK_KEYRING":
			return config.LocalKeyring // placeholder: validation only
		}
		return settings[name]
	})
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return nil
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
// schedule and alarms.
func NewTixStack(scope constructs.Construct, id string, props *TixStackProps) (awscdk.Stack, error) {
	if props == nil {
		props = &TixStackProps{}
	}
	stage := props.Stage
	if !stageRe.MatchString(stage) {
		return nil, fmt.Errorf("stage %q: use 1-20 lowercase letters, digits or '-', starting with a letter (dev, prod, ...)", stage)
	}
	if err := CheckSettings(props.Settings); err != nil {
		return nil, err
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
	assetDir := props.AssetDir
	if assetDir == nil {
		root := repoRoot()
		assetDir = func(name string) string { return filepath.Join(root, "build", name) }
	}

	prod := stage == ProdStage
	prefix := "tix-" + stage
	removal := awscdk.RemovalPolicy_DESTROY
	logRetention := awslogs.RetentionDays_TWO_WEEKS
	if prod {
		removal = awscdk.RemovalPolicy_RETAIN
		logRetention = awslogs.RetentionDays_THREE_MONTHS
	}

	sp := props.StackProps
	if sp.Description == nil {
		sp.Description = jsii.String(fmt.Sprintf("tix %s: ticketing API (HTTP API, Lambda, DynamoDB, SQS)", stage))
	}
	if prod {
		sp.TerminationProtection = jsii.Bool(true) // deleting prod takes two deliberate steps
	}
	stack := awscdk.NewStack(scope, jsii.String(id), &sp)
	awscdk.Tags_Of(stack).Add(jsii.String("project"), jsii.String("tix"), nil)
	awscdk.Tags_Of(stack).Add(jsii.String("stage"), jsii.String(stage), nil)

	key, cursorSecret, keyringSecret := newSecrets(stack, stage, prefix, prod, removal)

	// --- DynamoDB: built from store.Table, the schema the local stack uses ----
	// On demand (no capacity to plan for on-sale spikes), point-in-time
	// recovery (35 days of restores) on every stage. AWS-owned encryption: the
	// items that hold secrets are sealed by the app (webhook keyring) or hashed
	// (keys, tokens).
	schema := store.Table
	table := awsdynamodb.NewTable(stack, jsii.String("Table"), &awsdynamodb.TableProps{
		TableName:    jsii.String(prefix),
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(schema.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String(schema.SortKey), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		TimeToLiveAttribute: jsii.String(schema.TTLAttribute), // housekeeping only
		DeletionProtection:  jsii.Bool(prod),
		RemovalPolicy:       removal,
	})
	for _, ix := range schema.Indexes {
		table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ix.Name),
			PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(ix.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
			SortKey:        &awsdynamodb.Attribute{Name: jsii.String(ix.SortKey), Type: awsdynamodb.AttributeType_STRING},
			ProjectionType: awsdynamodb.ProjectionType_ALL,
		})
	}

	// --- SQS: each work queue with its dead-letter queue -------------------------
	// Queues keep the default removal (destroy) on every stage: they hold work
	// in flight only, and the sweep re-creates lost webhook work from the table.
	timeoutOf := map[string]time.Duration{}
	for _, f := range Functions {
		timeoutOf[f.Name] = f.Timeout
	}
	queues := map[string]awssqs.Queue{}
	dlqs := map[string]awssqs.Queue{}
	for _, name := range queue.Queues {
		cid := camel(name)
		dlq := awssqs.NewQueue(stack, jsii.String(cid+"Dlq"), &awssqs.QueueProps{
			QueueName:       jsii.String(prefix + "-" + queue.DLQ(name)),
			RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)), // SQS's maximum: two weeks to look and redrive
			Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
			EnforceSSL:      jsii.Bool(true), // a queue policy denies requests without TLS (aws:SecureTransport)
		})
		visibility := time.Duration(VisibilityFactor) * timeoutOf[Consumers[name]]
		queues[name] = awssqs.NewQueue(stack, jsii.String(cid+"Queue"), &awssqs.QueueProps{
			QueueName:         jsii.String(prefix + "-" + name),
			VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(visibility.Seconds())),
			// Four days (SQS's default): every message is due within 15 minutes
			// (longer waits are several hops), so anything older is stuck.
			RetentionPeriod: awscdk.Duration_Days(jsii.Number(4)),
			Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
			EnforceSSL:      jsii.Bool(true),
			DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(queue.MaxReceives)},
		})
		dlqs[name] = dlq
	}

	// --- Lambdas -----------------------------------------------------------------
	env := map[string]*string{
		"TIX_TABLE":        table.TableName(),
		"TIX_QUEUE_PREFIX": jsii.String(prefix),
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
	fns := map[string]awslambda.Function{}
	for _, f := range Functions {
		cid := camel(f.Name)
		logs := awslogs.NewLogGroup(stack, jsii.String(cid+"Logs"), &awslogs.LogGroupProps{
			LogGroupName:  jsii.String("/aws/lambda/" + prefix + "-" + f.Name),
			Retention:     logRetention,
			RemovalPolicy: removal,
		})
		// One role per function, with hand-written statements only (no managed
		// policy: AWSLambdaBasicExecutionRole would allow writing to any group).
		role := awsiam.NewRole(stack, jsii.String(cid+"Role"), &awsiam.RoleProps{
			AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
			Description: jsii.String("tix " + stage + " " + f.Name + " function"),
		})
		role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("Logs"),
			Actions:   jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
			Resources: jsii.Strings(*logs.LogGroupArn()),
		}))
		tableStatements(role, table, f.Name)
		if len(f.Sends) > 0 {
			var arns []*string
			for _, q := range f.Sends {
				arns = append(arns, queues[q].QueueArn())
			}
			role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("Send"),
				Actions:   jsii.Strings("sqs:SendMessage", "sqs:GetQueueUrl"),
				Resources: &arns,
			}))
		}
		// The two secrets, read once at start, and their key, only through
		// Secrets Manager (which decrypts them on the caller's behalf).
		role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("Secrets"),
			Actions:   jsii.Strings("secretsmanager:GetSecretValue"),
			Resources: jsii.Strings(*cursorSecret.Ref(), *keyringSecret.Ref()),
		}))
		role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("SecretsKey"),
			Actions:   jsii.Strings("kms:Decrypt"),
			Resources: jsii.Strings(*key.KeyArn()),
			Conditions: &map[string]any{"StringEquals": map[string]any{
				"kms:ViaService": "secretsmanager." + *stack.Region() + ".amazonaws.com",
			}},
		}))
		fp := &awslambda.FunctionProps{
			FunctionName: jsii.String(prefix + "-" + f.Name),
			Description:  jsii.String("tix " + stage + ": functions/" + f.Name),
			Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
			Architecture: awslambda.Architecture_ARM_64(),
			Handler:      jsii.String("bootstrap"),
			Code:         awslambda.Code_FromAsset(jsii.String(assetDir(f.Name)), nil),
			MemorySize:   jsii.Number(float64(f.Memory)),
			Timeout:      awscdk.Duration_Seconds(jsii.Number(f.Timeout.Seconds())),
			// Nothing secret in it: Lambda's own key encrypts it.
			Environment: &env,
			// The app writes slog JSON; Lambda's JSON format keeps it as is and
			// makes its own START/REPORT lines JSON too.
			LoggingFormat: awslambda.LoggingFormat_JSON,
			LogGroup:      logs,
			Role:          role,
		}
		if f.Name == "timers" {
			// Asynchronous invocations (the schedule) are not retried: the next
			// sweep comes a minute later anyway.
			fp.RetryAttempts = jsii.Number(0)
		}
		fns[f.Name] = awslambda.NewFunction(stack, jsii.String(cid+"Function"), fp)
	}

	// --- Queue consumers ----------------------------------------------------
	for _, name := range queue.Queues {
		esp := &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(BatchSize),
			ReportBatchItemFailures: jsii.Bool(true), // the handlers return the failed message ids
		}
		if Consumers[name] == "deliver" {
			esp.MaxConcurrency = jsii.Number(DeliverMaxConcurrency)
		}
		// The mapping grants the consumer sqs:ReceiveMessage, DeleteMessage,
		// ChangeMessageVisibility, GetQueueAttributes and GetQueueUrl on this
		// queue only (no KMS: the queue uses SQS-managed encryption).
		fns[Consumers[name]].AddEventSource(awslambdaeventsources.NewSqsEventSource(queues[name], esp))
	}

	// --- The sweep: EventBridge, every minute -> timers ---------------------
	// functions/timers tells it from a queue batch by detail-type "Scheduled Event".
	sweep := awsevents.NewRule(stack, jsii.String("SweepSchedule"), &awsevents.RuleProps{
		RuleName:    jsii.String(prefix + "-sweep"),
		Description: jsii.String("tix " + stage + ": the sweep (lost order expiries and webhook work) every minute"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(1))),
	})
	sweep.AddTarget(awseventstargets.NewLambdaFunction(fns["timers"], &awseventstargets.LambdaFunctionProps{
		MaxEventAge:   awscdk.Duration_Minutes(jsii.Number(1)), // a later sweep replaces an old one
		RetryAttempts: jsii.Number(2),
	}))

	// --- HTTP API -----------------------------------------------------------
	// No CORS configuration on the gateway: the app answers preflights itself
	// (OPTIONS reaches the functions through the ANY routes). No default stage:
	// the only stage is v1, so the URL path carries the API version.
	integrations := map[string]awsapigatewayv2.HttpRouteIntegration{}
	for _, f := range Functions {
		integrations[f.Name] = awsapigatewayv2integrations.NewHttpLambdaIntegration(
			jsii.String(camel(f.Name)+"Integration"), fns[f.Name],
			&awsapigatewayv2integrations.HttpLambdaIntegrationProps{
				PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
			})
	}
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String(prefix),
		Description:        jsii.String("tix " + stage + " ticketing API"),
		CreateDefaultStage: jsii.Bool(false),
		DefaultIntegration: integrations[Routes["$default"]], // the $default route
	})
	paths := make([]string, 0, len(Routes))
	for p := range Routes {
		if p != "$default" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(p),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_ANY},
			Integration: integrations[Routes[p]],
		})
	}
	apiStage := awsapigatewayv2.NewHttpStage(stack, jsii.String("ApiStageV1"), &awsapigatewayv2.HttpStageProps{
		HttpApi:    api,
		StageName:  jsii.String("v1"),
		AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(APIRateLimit),
			BurstLimit: jsii.Number(APIBurstLimit),
		},
	})
	apiAccessLogs(stack, apiStage, prefix, logRetention, removal)

	topic := newAlarms(stack, stage, prefix, props.AlarmEmail, apiStage, fns, table, dlqs)

	// --- Outputs --------------------------------------------------------------
	out := func(id, desc string, v *string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: v, Description: jsii.String(desc)})
	}
	out("ApiBaseUrl", "Base URL of the API (stage v1)", apiStage.Url())
	out("TableName", "DynamoDB table", table.TableName())
	out("CursorSecretArn", "Secrets Manager secret of TIX_CURSOR_SECRET", cursorSecret.Ref())
	out("WebhookKeyringSecretArn", "Secrets Manager secret of the TIX_WEBHOOK_KEYRING keys", keyringSecret.Ref())
	out("AlarmTopicArn", "SNS topic of the alarms (subscribe on-call here)", topic.TopicArn())
	return stack, nil
}

// camel turns "deliveries" into "Deliveries" for construct ids.
func camel(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
