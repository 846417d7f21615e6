package main

import (
	"fmt"
	"maps"
	"path/filepath"
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
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/queue"
	"tix/internal/store"
)

// build is what every step of one stage's stack shares: the stack, its stage
// and name prefix, and what the stage decides (prod keeps its data longer and
// retains it when the stack goes).
type build struct {
	stack        awscdk.Stack
	stage        string
	prefix       string
	prod         bool
	removal      awscdk.RemovalPolicy
	logRetention awslogs.RetentionDays
	assetDir     func(name string) string
	mailOn       bool // mailFrom is set: the functions send email (mail.go)
}

// newBuild makes the stack (tags, description, prod's termination protection)
// and the stage's choices.
func newBuild(scope constructs.Construct, id string, props *TixStackProps) *build {
	b := &build{stage: props.Stage, prefix: "tix-" + props.Stage, prod: props.Stage == ProdStage,
		removal: awscdk.RemovalPolicy_DESTROY, logRetention: awslogs.RetentionDays_TWO_WEEKS, assetDir: props.AssetDir}
	if b.assetDir == nil {
		root := repoRoot()
		b.assetDir = func(name string) string { return filepath.Join(root, "build", name) }
	}
	if b.prod {
		b.removal = awscdk.RemovalPolicy_RETAIN
		b.logRetention = awslogs.RetentionDays_THREE_MONTHS
	}
	sp := props.StackProps
	if sp.Description == nil {
		sp.Description = jsii.String(fmt.Sprintf("tix %s: ticketing API (HTTP API, Lambda, DynamoDB, SQS)", b.stage))
	}
	if b.prod {
		sp.TerminationProtection = jsii.Bool(true) // deleting prod takes two deliberate steps
	}
	b.stack = awscdk.NewStack(scope, jsii.String(id), &sp)
	awscdk.Tags_Of(b.stack).Add(jsii.String("project"), jsii.String("tix"), nil)
	awscdk.Tags_Of(b.stack).Add(jsii.String("stage"), jsii.String(b.stage), nil)
	return b
}

// table is the DynamoDB table, built from store.Table, the schema the local
// stack uses. On demand (no capacity to plan for on-sale spikes), point-in-time
// recovery (35 days of restores) on every stage. AWS-owned encryption: the
// items that hold secrets are sealed by the app (webhook keyring) or hashed
// (keys, tokens). Warm throughput (on.TableWarm*, on.IndexWarm*) prepares
// an on-sale.
func (b *build) table(on OnSale) awsdynamodb.Table {
	schema := store.Table
	table := awsdynamodb.NewTable(b.stack, jsii.String("Table"), &awsdynamodb.TableProps{
		TableName:    jsii.String(b.prefix),
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(schema.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String(schema.SortKey), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		TimeToLiveAttribute: jsii.String(schema.TTLAttribute), // housekeeping only
		DeletionProtection:  jsii.Bool(b.prod),
		RemovalPolicy:       b.removal,
		WarmThroughput:      warm(on.TableWarmReads, on.TableWarmWrites),
	})
	for _, ix := range schema.Indexes {
		table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ix.Name),
			PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(ix.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
			SortKey:        &awsdynamodb.Attribute{Name: jsii.String(ix.SortKey), Type: awsdynamodb.AttributeType_STRING},
			ProjectionType: awsdynamodb.ProjectionType_ALL,
			WarmThroughput: warm(on.IndexWarmReads, on.IndexWarmWrites),
		})
	}
	return table
}

// queues are the work queues, each with its dead-letter queue. They keep the
// default removal (destroy) on every stage: they hold work in flight only, and
// the sweep re-creates lost webhook work from the table.
func (b *build) queues() (queues, dlqs map[string]awssqs.Queue) {
	timeoutOf := map[string]time.Duration{}
	for _, f := range Functions {
		timeoutOf[f.Name] = f.Timeout
	}
	queues, dlqs = map[string]awssqs.Queue{}, map[string]awssqs.Queue{}
	for _, name := range queue.Queues {
		cid := camel(name)
		dlq := awssqs.NewQueue(b.stack, jsii.String(cid+"Dlq"), &awssqs.QueueProps{
			QueueName:       jsii.String(b.prefix + "-" + queue.DLQ(name)),
			RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)), // SQS's maximum: two weeks to look and redrive
			Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
			EnforceSSL:      jsii.Bool(true), // a queue policy denies requests without TLS (aws:SecureTransport)
		})
		visibility := time.Duration(VisibilityFactor) * timeoutOf[Consumers[name]]
		queues[name] = awssqs.NewQueue(b.stack, jsii.String(cid+"Queue"), &awssqs.QueueProps{
			QueueName:         jsii.String(b.prefix + "-" + name),
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
	return queues, dlqs
}

// secretGrants are the two secrets every function reads once at start and the
// key that encrypts them.
type secretGrants struct {
	key     awskms.IKey
	secrets []*string
}

// MemLimitPercent is the share of a function's memory given to the Go runtime
// as GOMEMLIMIT: the garbage collector works harder as the heap nears it
// instead of the function being killed at the memory size (a burst such as
// deliver's batch of 10 emails rendered at once). The rest is for the
// runtime's own memory outside the heap, the binary and Lambda's agent.
const MemLimitPercent = 90

// withMemLimit is env with GOMEMLIMIT at MemLimitPercent of memoryMB (a copy:
// the functions share env).
func withMemLimit(env map[string]*string, memoryMB int) map[string]*string {
	out := maps.Clone(env)
	out["GOMEMLIMIT"] = jsii.String(fmt.Sprintf("%dMiB", memoryMB*MemLimitPercent/100))
	return out
}

// function is one Lambda with its log group and its own role; reserved > 0
// reserves that much concurrency for it (an on-sale).
func (b *build) function(f Function, env map[string]*string, table awsdynamodb.Table, queues map[string]awssqs.Queue, grants secretGrants, reserved int) awslambda.Function {
	cid := camel(f.Name)
	logs := awslogs.NewLogGroup(b.stack, jsii.String(cid+"Logs"), &awslogs.LogGroupProps{
		LogGroupName:  jsii.String("/aws/lambda/" + b.prefix + "-" + f.Name),
		Retention:     b.logRetention,
		RemovalPolicy: b.removal,
	})
	env = withMemLimit(env, f.Memory)
	fp := &awslambda.FunctionProps{
		FunctionName: jsii.String(b.prefix + "-" + f.Name),
		Description:  jsii.String("tix " + b.stage + ": functions/" + f.Name),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(b.assetDir(f.Name)), nil),
		MemorySize:   jsii.Number(float64(f.Memory)),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(f.Timeout.Seconds())),
		// Nothing secret in it: Lambda's own key encrypts it.
		Environment: &env,
		// The app writes slog JSON; Lambda's JSON format keeps it as is and
		// makes its own START/REPORT lines JSON too.
		LoggingFormat: awslambda.LoggingFormat_JSON,
		LogGroup:      logs,
		Role:          b.role(f, logs, table, queues, grants),
	}
	if f.Name == "timers" {
		// Asynchronous invocations (the schedule) are not retried: the next
		// sweep comes a minute later anyway.
		fp.RetryAttempts = jsii.Number(0)
	}
	if reserved > 0 {
		fp.ReservedConcurrentExecutions = jsii.Number(float64(reserved))
	}
	return awslambda.NewFunction(b.stack, jsii.String(cid+"Function"), fp)
}

// role is a function's role, with hand-written statements only (no managed
// policy: AWSLambdaBasicExecutionRole would allow writing to any group): its
// log group, its table actions (store.Permissions), the queues it sends to,
// and the two secrets with their key, only through Secrets Manager (which
// decrypts them on the caller's behalf).
func (b *build) role(f Function, logs awslogs.LogGroup, table awsdynamodb.Table, queues map[string]awssqs.Queue, grants secretGrants) awsiam.Role {
	role := awsiam.NewRole(b.stack, jsii.String(camel(f.Name)+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("tix " + b.stage + " " + f.Name + " function"),
	})
	allow := func(sid string, actions []string, resources []*string, cond *map[string]any) {
		role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: jsii.String(sid), Actions: jsii.Strings(actions...), Resources: &resources, Conditions: cond,
		}))
	}
	allow("Logs", []string{"logs:CreateLogStream", "logs:PutLogEvents"}, []*string{logs.LogGroupArn()}, nil)
	tableStatements(role, table, f.Name, b.mailOn)
	if len(f.Sends) > 0 {
		var arns []*string
		for _, q := range f.Sends {
			arns = append(arns, queues[q].QueueArn())
		}
		allow("Send", []string{"sqs:SendMessage", "sqs:GetQueueUrl"}, arns, nil)
	}
	allow("Secrets", []string{"secretsmanager:GetSecretValue"}, grants.secrets, nil)
	allow("SecretsKey", []string{"kms:Decrypt"}, []*string{grants.key.KeyArn()}, &map[string]any{"StringEquals": map[string]any{
		"kms:ViaService": "secretsmanager." + *b.stack.Region() + ".amazonaws.com",
	}})
	return role
}

// TimersMaxConcurrency caps the timers function's concurrent invocations
// from its queue, as DeliverMaxConcurrency does deliver's: an on-sale's
// expiries come due together 15 minutes after its orders (at 5,000 unpaid
// orders/s, batches of 10 at ~100 ms take about 50 instances); past the cap
// they wait in the queue (its oldest-age alarm) instead of taking the
// account's concurrency from the API.
const TimersMaxConcurrency = 50

// MappingMaxConcurrency is the cap of each consumer's queue mapping.
var MappingMaxConcurrency = map[string]int{"deliver": DeliverMaxConcurrency, "timers": TimersMaxConcurrency}

// consumers connect each queue to its consumer function.
func (b *build) consumers(fns map[string]awslambda.Function, queues map[string]awssqs.Queue, on OnSale) {
	for _, name := range queue.Queues {
		esp := &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(BatchSize),
			ReportBatchItemFailures: jsii.Bool(true), // the handlers return the failed message ids
		}
		limit := MappingMaxConcurrency[Consumers[name]]
		if Consumers[name] == "deliver" && on.DeliverConcurrency > 0 {
			limit = on.DeliverConcurrency // an on-sale's webhooks and email jobs
		}
		esp.MaxConcurrency = jsii.Number(float64(limit))
		// The mapping grants the consumer sqs:ReceiveMessage, DeleteMessage,
		// ChangeMessageVisibility, GetQueueAttributes and GetQueueUrl on this
		// queue only (no KMS: the queue uses SQS-managed encryption).
		fns[Consumers[name]].AddEventSource(awslambdaeventsources.NewSqsEventSource(queues[name], esp))
	}
}

// sweep is the EventBridge schedule that runs the sweep every minute on
// timers, which tells it from a queue batch by detail-type "Scheduled Event".
func (b *build) sweep(timers awslambda.Function) {
	rule := awsevents.NewRule(b.stack, jsii.String("SweepSchedule"), &awsevents.RuleProps{
		RuleName:    jsii.String(b.prefix + "-sweep"),
		Description: jsii.String("tix " + b.stage + ": the sweep (lost order expiries and webhook work) every minute"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(1))),
	})
	rule.AddTarget(awseventstargets.NewLambdaFunction(timers, &awseventstargets.LambdaFunctionProps{
		MaxEventAge:   awscdk.Duration_Minutes(jsii.Number(1)), // a later sweep replaces an old one
		RetryAttempts: jsii.Number(2),
	}))
}

// api is the HTTP API and its one stage, v1. No CORS configuration on the
// gateway: the app answers preflights itself (OPTIONS reaches the functions
// through the ANY routes). No default stage: the only stage is v1, so the URL
// path carries the API version. A function with provisioned concurrency is
// invoked through its "live" alias; the stage's throttle is on's, and the
// bank's notification route has its own.
func (b *build) api(fns map[string]awslambda.Function, on OnSale) awsapigatewayv2.HttpStage {
	integrations := map[string]awsapigatewayv2.HttpRouteIntegration{}
	for _, f := range Functions {
		integrations[f.Name] = awsapigatewayv2integrations.NewHttpLambdaIntegration(
			jsii.String(camel(f.Name)+"Integration"), b.target(f.Name, fns[f.Name], on),
			&awsapigatewayv2integrations.HttpLambdaIntegrationProps{
				PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
			})
	}
	api := awsapigatewayv2.NewHttpApi(b.stack, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String(b.prefix),
		Description:        jsii.String("tix " + b.stage + " ticketing API"),
		CreateDefaultStage: jsii.Bool(false),
		DefaultIntegration: integrations[Routes["$default"]], // the $default route
	})
	keys := make([]string, 0, len(Routes))
	for k := range Routes {
		if k != "$default" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var ownThrottle []awsapigatewayv2.HttpRoute // the routes with a throttle of their own
	for _, k := range keys {
		method, path, ok := strings.Cut(k, " ")
		if !ok {
			panic(fmt.Sprintf("Routes: %q is not METHOD /path", k))
		}
		routes := api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(path),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod(method)},
			Integration: integrations[Routes[k]],
		})
		if path == NotificationRoutePath || path == SecretScanningRoutePath {
			ownThrottle = append(ownThrottle, *routes...)
		}
	}
	rate, burst := on.throttle()
	stage := awsapigatewayv2.NewHttpStage(b.stack, jsii.String("ApiStageV1"), &awsapigatewayv2.HttpStageProps{
		HttpApi:    api,
		StageName:  jsii.String("v1"),
		AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(rate),
			BurstLimit: jsii.Number(burst),
		},
	})
	// The bank's route gets its own throttle (NotificationRateLimit), and so
	// does GitHub's (SecretScanningRateLimit). A route setting names a route
	// key that must exist when the stage is created.
	nRate, nBurst := on.notificationThrottle()
	cfn := stage.Node().DefaultChild().(awsapigatewayv2.CfnStage)
	cfn.SetRouteSettings(map[string]any{
		"POST " + NotificationRoutePath: map[string]any{"ThrottlingRateLimit": nRate, "ThrottlingBurstLimit": nBurst},
		"POST " + SecretScanningRoutePath: map[string]any{"ThrottlingRateLimit": SecretScanningRateLimit,
			"ThrottlingBurstLimit": SecretScanningBurstLimit},
	})
	for _, r := range ownThrottle {
		stage.Node().AddDependency(r)
	}
	return stage
}
