package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/queue"
	"tix/internal/store"
	"tix/internal/webhook"
)

// The templates of the stages, synthesized once in TestMain (a synthesis
// costs seconds: jsii runs aws-cdk-lib in a Node process): as JSON for the
// checks that walk them, and as assertions.Template for the matchers.
var (
	templates = map[string]map[string]any{}
	tmpls     = map[string]assertions.Template{}
)

// annotations are the CDK messages (warnings, errors) of each stage's synthesis.
var annotations = map[string]assertions.Annotations{}

// Props of the prod synthesis, to check they arrive.
var (
	prodEmail    = "oncall@example.com"
	prodKeyIDs   = []string{"k2", "k1"}
	prodSettings = map[string]string{"TIX_HOLD_TTL": "10m", "TIX_LOG_LEVEL": "warn"}
	// prod is served by a custom domain and talks to another bank URL, from
	// context (dev takes the defaults: the API's own URL, the production bank).
	prodPublicURL = "https://api.tix.example"
	prodTBankURL  = "https://bank.example/eacq"
	// prodSecretScanningKeysURL: the context secretScanningKeysUrl of prod.
	prodSecretScanningKeysURL = "https://scanner.example/meta/public_keys/secret_scanning"
	// prod is prepared for an on-sale, as from context (onsale_test.go checks
	// the parsing); dev keeps the everyday stack.
	// prod sends email through SES as prodMailFrom, with the stack creating
	// the domain identity; dev has email off.
	prodMailFrom, prodMailIdentity = "tickets@tix.example", "tix.example"
	prodOnSale                     = OnSale{TableWarmReads: 60000, TableWarmWrites: 40000, IndexWarmReads: 12000, IndexWarmWrites: 20000,
		Reserved:    map[string]int{"catalog": 400, "holds": 100, "orders": 400},
		Provisioned: map[string]int{"orders": 20}, APIRateLimit: 30000, APIBurstLimit: 10000,
		NotificationRateLimit: 300, NotificationBurstLimit: 600, DeliverConcurrency: 200,
		Quotas: Quotas{TableReads: 60000, APIRate: 30000, APIBurst: 10000}} // the quotas the account was granted
)

func TestMain(m *testing.M) {
	// aws-cdk-lib's own CloudFormation validation (a WebAssembly rule engine run
	// at every synth, whose report only warns and which no test reads) took
	// about 30 of the 36 s of these tests; the checks here and cdk-nag's rules
	// (TestCdkNag) are what the templates are held to. make synth still runs it.
	_ = os.Setenv("CDK_VALIDATION", "false")
	if os.Getenv(runAppEnv) != "" {
		main() // the app as the cdk CLI runs it (cli_test.go)
		os.Exit(0)
	}
	prepareNodeEnv()
	closeJSII := quietJSIIExit()
	code := func() int {
		if err := synthAll(); err != nil {
			fmt.Fprintln(os.Stderr, "synth:", err)
			return 1
		}
		return m.Run()
	}()
	closeJSII()
	os.Exit(code)
}

func synthAll() error {
	// Dummy bootstraps, so the tests do not need `make build`.
	assets, err := os.MkdirTemp("", "tix-infra-assets-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(assets)
	for _, f := range Functions {
		if err := os.MkdirAll(filepath.Join(assets, f.Name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(assets, f.Name, "bootstrap"), []byte("#!/bin/sh\n# "+f.Name+"\n"), 0o755); err != nil {
			return err
		}
	}
	// The feature flags of cdk.json, so the tests see what `cdk synth` makes.
	raw, err := os.ReadFile("../cdk.json")
	if err != nil {
		return err
	}
	var cdkJSON struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &cdkJSON); err != nil {
		return fmt.Errorf("cdk.json: %w", err)
	}
	for _, stage := range []string{"dev", ProdStage, edgeStage, edgeARNStage, edgeWAFStage} {
		out, err := os.MkdirTemp("", "tix-infra-cdk-out-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(out)
		app := awscdk.NewApp(&awscdk.AppProps{Context: &cdkJSON.Context, Outdir: jsii.String(out)})
		props := &TixStackProps{
			Stage:    stage,
			AssetDir: func(name string) string { return filepath.Join(assets, name) },
		}
		switch stage {
		case ProdStage:
			props.AlarmEmail, props.WebhookKeyIDs, props.Settings = prodEmail, prodKeyIDs, prodSettings
			props.PublicURL, props.TBankAPIURL = prodPublicURL+"/", prodTBankURL // the trailing slash is dropped
			props.OnSale = prodOnSale
			props.MailFrom, props.MailIdentity = prodMailFrom, prodMailIdentity
			props.SecretScanningKeysURL = prodSecretScanningKeysURL
		case edgeStage: // in us-east-1: the stack makes its web ACL
			props.StackProps.Env = &awscdk.Environment{Account: jsii.String(edgeAccount), Region: jsii.String("us-east-1")}
			props.Edge = edgeProps
		case edgeARNStage: // elsewhere: the web ACL by ARN, keyed requests also direct
			props.StackProps.Env = &awscdk.Environment{Account: jsii.String(edgeAccount), Region: jsii.String("eu-central-1")}
			props.Edge = Edge{On: true, WebACLArn: edgeWebACLArn, Direct: true}
		}
		var stack awscdk.Stack
		if stage == edgeWAFStage {
			stack, err = NewEdgeWAFStack(app, "tix-dev-edge-waf", &EdgeWAFProps{Account: edgeAccount, Stage: "dev", Edge: Edge{On: true}})
		} else {
			stack, err = NewTixStack(app, "tix-"+stage, props)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", stage, err)
		}
		annotations[stage] = assertions.Annotations_FromStack(stack)
		tmpls[stage] = assertions.Template_FromStack(stack, nil)
		b, err := json.Marshal(tmpls[stage].ToJSON())
		if err != nil {
			return err
		}
		var t map[string]any
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		templates[stage] = t
	}
	return nil
}

var stages = []string{"dev", ProdStage}

// resources of a type, by logical id.
func resources(t *testing.T, stage, typ string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for id, r := range templates[stage]["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] == typ {
			out[id] = r
		}
	}
	return out
}

func props(r map[string]any) map[string]any {
	p, _ := r["Properties"].(map[string]any)
	return p
}

// only is the single resource of a type.
func only(t *testing.T, stage, typ string) (string, map[string]any) {
	t.Helper()
	rs := resources(t, stage, typ)
	if len(rs) != 1 {
		t.Fatalf("%s: %d %s, want 1", stage, len(rs), typ)
	}
	for id, r := range rs {
		return id, r
	}
	return "", nil
}

// flat renders an intrinsic as a string: Ref X -> ${X}, GetAtt X.A -> ${X.A},
// Fn::Join concatenated.
func flat(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if r, ok := v["Ref"]; ok {
			return "${" + fmt.Sprint(r) + "}"
		}
		if g, ok := v["Fn::GetAtt"].([]any); ok {
			return "${" + fmt.Sprint(g[0]) + "." + fmt.Sprint(g[1]) + "}"
		}
		if j, ok := v["Fn::Join"].([]any); ok {
			var parts []string
			for _, p := range j[1].([]any) {
				parts = append(parts, flat(p))
			}
			return strings.Join(parts, j[0].(string))
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// refID is the logical id a {"Ref": X} or {"Fn::GetAtt": [X, ...]} points at.
func refID(v any) string {
	m, _ := v.(map[string]any)
	if r, ok := m["Ref"].(string); ok {
		return r
	}
	if g, ok := m["Fn::GetAtt"].([]any); ok {
		return g[0].(string)
	}
	return ""
}

// functionIDs maps function name -> logical id.
func functionIDs(t *testing.T, stage string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for id, r := range resources(t, stage, "AWS::Lambda::Function") {
		name := strings.TrimPrefix(props(r)["FunctionName"].(string), "tix-"+stage+"-")
		ids[name] = id
	}
	return ids
}

// topicIDs maps topic name (alarms, ses-events) -> logical id.
func topicIDs(t *testing.T, stage string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for id, r := range resources(t, stage, "AWS::SNS::Topic") {
		ids[strings.TrimPrefix(props(r)["TopicName"].(string), "tix-"+stage+"-")] = id
	}
	return ids
}

// queueIDs maps queue name (deliveries, deliveries-dlq, ...) -> logical id.
func queueIDs(t *testing.T, stage string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for id, r := range resources(t, stage, "AWS::SQS::Queue") {
		ids[strings.TrimPrefix(props(r)["QueueName"].(string), "tix-"+stage+"-")] = id
	}
	return ids
}

func num(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case string:
		var f float64
		if _, err := fmt.Sscan(v, &f); err != nil {
			return -1
		}
		return f
	}
	return -1
}

// TestNoAnnotations: CDK has no warning or error about the stack (deprecated
// APIs, missing permissions it can see, ...), but the one that a stack
// without alarmEmail (dev) has alarms nobody receives.
func TestNoAnnotations(t *testing.T) {
	for _, stage := range stages {
		a := annotations[stage]
		noEmail := noAlarmEmailWarning()
		if stage == ProdStage { // alarmEmail set
			holds(t, stage+": no CDK warning", func() { a.HasNoWarning(jsii.String("*"), assertions.Match_AnyValue()) })
		} else {
			holds(t, stage+": the warning that the alarms reach nobody", func() { a.HasWarning(jsii.String("*"), noEmail) })
			holds(t, stage+": no other CDK warning", func() { a.HasNoWarning(jsii.String("*"), assertions.Match_Not(noEmail)) })
		}
		holds(t, stage+": no CDK error", func() { a.HasNoError(jsii.String("*"), assertions.Match_AnyValue()) })
	}
}

// noAlarmEmailWarning matches the warning of a stack without alarmEmail.
func noAlarmEmailWarning() assertions.Matcher {
	return assertions.Match_StringLikeRegexp(jsii.String("no alarmEmail.*ALARM_EMAIL="))
}

// holds runs an assertions.Template (or Annotations) check, which panics with
// the differences when it fails, and reports the failure as the test's.
func holds(t *testing.T, what string, check func()) {
	t.Helper()
	if failure := recovered(check); failure != nil {
		t.Errorf("%s: %v", what, failure)
	}
}

func recovered(f func()) (failure any) {
	defer func() { failure = recover() }()
	f()
	return nil
}

// obj is a JSON object for a matcher.
type obj = map[string]any

// like matches an object with at least these keys (nested objects too).
func like(m obj) assertions.Matcher { return assertions.Match_ObjectLike(&m) }

// TestResourceCount: exactly these resources of each type, and no other type
// (153 in dev, 164 in prod): a resource added or lost is a decision to make here.
func TestResourceCount(t *testing.T) {
	want := map[string]int{
		"AWS::ApiGatewayV2::Api": 1, "AWS::ApiGatewayV2::Integration": 6, "AWS::ApiGatewayV2::Route": 29, // Routes: 27 ANY (2 the dashboard's, 5 the door's, 2 the transfers', the waiting room's /queue/{proxy+}, /seat-holds/{proxy+}, /test-helpers/{proxy+}, /order-events, /webhook-endpoints/{proxy+}, /request-log/{proxy+}) and $default, POST notifications, POST secret scanning
		"AWS::ApiGatewayV2::Stage": 1,
		"AWS::CloudWatch::Alarm":   33, // 3 API, 8+8+8 function errors, throttles and p99 duration, 2 table (throttles, transaction conflicts), 2+2 queues (DLQ depth, oldest age)
		"AWS::DynamoDB::Table":     1, "AWS::Events::Rule": 1,
		"AWS::IAM::Policy": 8, "AWS::IAM::Role": 8, "AWS::KMS::Alias": 1, "AWS::KMS::Key": 1,
		"AWS::Lambda::EventInvokeConfig": 1, "AWS::Lambda::EventSourceMapping": 2, "AWS::Lambda::Function": 8,
		"AWS::Lambda::Permission": 30, // API Gateway for each of the 29 routes, EventBridge for the sweep
		"AWS::Logs::LogGroup":     9,  // 8 functions and the API's access log
		"AWS::Logs::MetricFilter": 1,  // the access log's 429s
		"AWS::SNS::Topic":         1, "AWS::SNS::TopicPolicy": 1, "AWS::SQS::Queue": 4, "AWS::SQS::QueuePolicy": 4,
		"AWS::SecretsManager::Secret": 2,
	}
	for _, stage := range stages {
		w := maps.Clone(want)
		if stage == ProdStage {
			w["AWS::SNS::Subscription"] = 1 // the alarm e-mail
			// orders' provisioned concurrency: a version and its alias "live"
			w["AWS::Lambda::Version"], w["AWS::Lambda::Alias"] = 1, 1
			// its spillover alarm, and the SES bounce and complaint rates
			w["AWS::CloudWatch::Alarm"] += 3
			// mailFrom and mailIdentity (mail.go): the configuration set, the
			// identity, the event destination, the events topic with its
			// policy and its subscription to the deliveries queue
			w["AWS::SES::ConfigurationSet"], w["AWS::SES::EmailIdentity"], w["AWS::SES::ConfigurationSetEventDestination"] = 1, 1, 1
			w["AWS::SNS::Topic"], w["AWS::SNS::TopicPolicy"], w["AWS::SNS::Subscription"] = 2, 2, 2
		}
		for typ, n := range w {
			holds(t, stage+": "+typ, func() { tmpls[stage].ResourceCountIs(jsii.String(typ), jsii.Number(n)) })
		}
		for id, r := range templates[stage]["Resources"].(map[string]any) {
			if typ := r.(map[string]any)["Type"].(string); w[typ] == 0 {
				t.Errorf("%s: %s is a %s, a type the stack should not have", stage, id, typ)
			}
		}
	}
}

// TestTableMatchesSchema compares the table with store.Table.CreateTableInput,
// the definition the local stack creates, field by field.
func TestTableMatchesSchema(t *testing.T) {
	for _, stage := range stages {
		_, tr := only(t, stage, "AWS::DynamoDB::Table")
		p := props(tr)
		want := store.Table.CreateTableInput("tix-" + stage)

		if p["TableName"] != *want.TableName {
			t.Errorf("%s: TableName %v, want %s", stage, p["TableName"], *want.TableName)
		}
		if p["BillingMode"] != string(want.BillingMode) {
			t.Errorf("%s: BillingMode %v, want %s", stage, p["BillingMode"], want.BillingMode)
		}
		keys := func(v any) [][2]string {
			var ks [][2]string
			for _, k := range v.([]any) {
				k := k.(map[string]any)
				ks = append(ks, [2]string{k["AttributeName"].(string), k["KeyType"].(string)})
			}
			return ks
		}
		var wantKeys [][2]string
		for _, k := range want.KeySchema {
			wantKeys = append(wantKeys, [2]string{*k.AttributeName, string(k.KeyType)})
		}
		if got := keys(p["KeySchema"]); !reflect.DeepEqual(got, wantKeys) {
			t.Errorf("%s: KeySchema %v, want %v", stage, got, wantKeys)
		}
		gotAttrs := map[string]string{}
		for _, a := range p["AttributeDefinitions"].([]any) {
			a := a.(map[string]any)
			gotAttrs[a["AttributeName"].(string)] = a["AttributeType"].(string)
		}
		wantAttrs := map[string]string{}
		for _, a := range want.AttributeDefinitions {
			wantAttrs[*a.AttributeName] = string(a.AttributeType)
		}
		if !reflect.DeepEqual(gotAttrs, wantAttrs) {
			t.Errorf("%s: AttributeDefinitions %v, want %v", stage, gotAttrs, wantAttrs)
		}
		type gsi struct {
			Keys       [][2]string
			Projection string
		}
		gotGSIs := map[string]gsi{}
		for _, g := range p["GlobalSecondaryIndexes"].([]any) {
			g := g.(map[string]any)
			gotGSIs[g["IndexName"].(string)] = gsi{keys(g["KeySchema"]), g["Projection"].(map[string]any)["ProjectionType"].(string)}
		}
		wantGSIs := map[string]gsi{}
		for _, g := range want.GlobalSecondaryIndexes {
			var ks [][2]string
			for _, k := range g.KeySchema {
				ks = append(ks, [2]string{*k.AttributeName, string(k.KeyType)})
			}
			wantGSIs[*g.IndexName] = gsi{ks, string(g.Projection.ProjectionType)}
		}
		if !reflect.DeepEqual(gotGSIs, wantGSIs) {
			t.Errorf("%s: GlobalSecondaryIndexes %v, want %v", stage, gotGSIs, wantGSIs)
		}
		holds(t, stage+": TTL and point-in-time recovery on", func() {
			tmpls[stage].HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), like(obj{
				"TimeToLiveSpecification":          obj{"AttributeName": store.Table.TTLAttribute, "Enabled": true},
				"PointInTimeRecoverySpecification": obj{"PointInTimeRecoveryEnabled": true},
			}))
		})
	}
}

func TestRetention(t *testing.T) {
	// Everything holding data that cannot be re-created.
	kept := []string{"AWS::DynamoDB::Table", "AWS::KMS::Key", "AWS::SecretsManager::Secret", "AWS::Logs::LogGroup"}
	for _, stage := range stages {
		prod := stage == ProdStage
		tm := tmpls[stage]
		policy, days := "Delete", 14
		if prod {
			policy, days = "Retain", 90
		}
		holds(t, stage+": table deletion protection", func() {
			tm.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), like(obj{"DeletionProtectionEnabled": prod}))
		})
		for _, typ := range kept {
			holds(t, stage+": "+typ+" "+policy, func() {
				tm.AllResources(jsii.String(typ), like(obj{"DeletionPolicy": policy, "UpdateReplacePolicy": policy}))
			})
		}
		holds(t, stage+": log retention", func() {
			tm.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), like(obj{"RetentionInDays": days}))
		})
	}
}

// TestNoWildcardActions walks the whole template: every policy statement
// anywhere (IAM policies, role inline policies, the key policy) names its
// actions, and none of them is a Scan.
func TestNoWildcardActions(t *testing.T) {
	for _, stage := range stages {
		var actions []string
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					// A Deny only takes away (the queues' and topic's
					// aws:SecureTransport policies deny sqs:* and sns:Publish
					// without TLS): its wildcard grants nothing.
					if (k == "Action" || k == "NotAction") && v["Effect"] != "Deny" {
						switch a := x.(type) {
						case string:
							actions = append(actions, a)
						case []any:
							for _, s := range a {
								actions = append(actions, fmt.Sprint(s))
							}
						default:
							t.Errorf("%s: Action %v is neither a string nor a list", stage, x)
						}
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(templates[stage]["Resources"])
		if len(actions) < 20 {
			t.Fatalf("%s: found only %d actions; is the walk broken?", stage, len(actions))
		}
		for _, a := range actions {
			if strings.Contains(a, "*") {
				t.Errorf("%s: wildcard action %q", stage, a)
			}
			if strings.EqualFold(a, "dynamodb:Scan") {
				t.Errorf("%s: %s is allowed", stage, a)
			}
		}
		// Hand-written statements only: no managed policy.
		holds(t, stage+": roles without managed policies", func() {
			tmpls[stage].AllResourcesProperties(jsii.String("AWS::IAM::Role"), like(obj{"ManagedPolicyArns": assertions.Match_Absent()}))
		})
		holds(t, stage+": no managed policy", func() {
			tmpls[stage].ResourceCountIs(jsii.String("AWS::IAM::ManagedPolicy"), jsii.Number(0))
		})
	}
}

// TestFunctionPermissions checks each function's role allows what its code
// needs and no more.
func TestFunctionPermissions(t *testing.T) {
	consumes := map[string]string{}
	for q, fn := range Consumers {
		consumes[fn] = q
	}
	for _, stage := range stages {
		fnIDs, qIDs := functionIDs(t, stage), queueIDs(t, stage)
		policies := resources(t, stage, "AWS::IAM::Policy")
		for _, f := range Functions {
			fp := props(templates[stage]["Resources"].(map[string]any)[fnIDs[f.Name]].(map[string]any))
			roleID := refID(fp["Role"])
			// action -> the resources it is allowed on
			allowed := map[string][]string{}
			for _, pol := range policies {
				attached := false
				for _, r := range props(pol)["Roles"].([]any) {
					attached = attached || refID(r) == roleID
				}
				if !attached {
					continue
				}
				for _, s := range props(pol)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
					s := s.(map[string]any)
					if s["Effect"] != "Allow" {
						continue
					}
					var acts, res []string
					for _, a := range list(s["Action"]) {
						acts = append(acts, a.(string))
					}
					for _, r := range list(s["Resource"]) {
						res = append(res, flat(r))
					}
					for _, a := range acts {
						allowed[a] = append(allowed[a], res...)
					}
				}
			}
			var wantSend []string
			for _, q := range f.Sends {
				wantSend = append(wantSend, "${"+qIDs[q]+".Arn}")
			}
			if got := uniq(allowed["sqs:SendMessage"]); !reflect.DeepEqual(got, uniq(wantSend)) {
				t.Errorf("%s %s: sqs:SendMessage on %v, want %v", stage, f.Name, got, uniq(wantSend))
			}
			// GetQueueUrl: the queues it sends to, and the one it consumes (the
			// event source mapping's grant).
			wantURL := wantSend
			if q := consumes[f.Name]; q != "" {
				wantURL = append(wantURL[:len(wantURL):len(wantURL)], "${"+qIDs[q]+".Arn}")
			}
			if got := uniq(allowed["sqs:GetQueueUrl"]); !reflect.DeepEqual(got, uniq(wantURL)) {
				t.Errorf("%s %s: sqs:GetQueueUrl on %v, want %v", stage, f.Name, got, uniq(wantURL))
			}
			for _, a := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"} {
				var want []string
				if q := consumes[f.Name]; q != "" {
					want = []string{"${" + qIDs[q] + ".Arn}"}
				}
				if got := allowed[a]; !reflect.DeepEqual(uniq(got), uniq(want)) {
					t.Errorf("%s %s: %s on %v, want %v", stage, f.Name, a, got, want)
				}
			}
		}
	}
}

func list(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

func uniq(s []string) []string {
	m := map[string]bool{}
	var out []string
	for _, x := range s {
		if !m[x] {
			m[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func TestFunctions(t *testing.T) {
	// Every functions/<name> is deployed, and nothing else.
	entries, err := os.ReadDir("../functions")
	if err != nil {
		t.Fatal(err)
	}
	var dirs, names []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	for _, f := range Functions {
		names = append(names, f.Name)
	}
	sort.Strings(dirs)
	sort.Strings(names)
	if !reflect.DeepEqual(dirs, names) {
		t.Fatalf("functions/ has %v, the stack deploys %v", dirs, names)
	}
	for _, stage := range stages {
		fns := resources(t, stage, "AWS::Lambda::Function")
		if len(fns) != len(Functions) {
			t.Fatalf("%s: %d functions, want %d", stage, len(fns), len(Functions))
		}
		tableID, _ := only(t, stage, "AWS::DynamoDB::Table")
		secrets := map[string]string{} // secret name suffix -> logical id
		for id, s := range resources(t, stage, "AWS::SecretsManager::Secret") {
			secrets[strings.TrimPrefix(props(s)["Name"].(string), "tix-"+stage+"/")] = id
		}
		ids := functionIDs(t, stage)
		for _, f := range Functions {
			p := props(fns[ids[f.Name]])
			if p == nil {
				t.Errorf("%s: no function tix-%s-%s", stage, stage, f.Name)
				continue
			}
			check := func(what string, got, want any) {
				t.Helper()
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s: %s = %v, want %v", stage, f.Name, what, got, want)
				}
			}
			// The secrets are not in the environment, not even as dynamic
			// references (below): only their ARNs, which the function reads at
			// start; so the environment needs no customer key (KmsKeyArn).
			holds(t, stage+" "+f.Name+": arm64 provided.al2023, memory, timeout, JSON logs to its own group", func() {
				tmpls[stage].HasResourceProperties(jsii.String("AWS::Lambda::Function"), like(obj{
					"FunctionName":  "tix-" + stage + "-" + f.Name,
					"Architectures": []any{"arm64"}, "Runtime": "provided.al2023", "Handler": "bootstrap",
					"MemorySize": f.Memory, "Timeout": f.Timeout.Seconds(),
					"LoggingConfig": obj{"LogFormat": "JSON", "LogGroup": obj{"Ref": assertions.Match_AnyValue()}},
					"KmsKeyArn":     assertions.Match_Absent(),
					"Environment": obj{"Variables": obj{
						"TIX_TABLE": obj{"Ref": tableID}, "TIX_QUEUE_PREFIX": "tix-" + stage, "TIX_LOG_FORMAT": "json",
						// The Go heap's soft limit, 90% of the memory size.
						"GOMEMLIMIT":        map[int]string{256: "230MiB", 512: "460MiB"}[f.Memory],
						"TIX_CURSOR_SECRET": assertions.Match_Absent(), "TIX_WEBHOOK_KEYRING": assertions.Match_Absent(),
					}},
				}))
			})
			vars := p["Environment"].(map[string]any)["Variables"].(map[string]any)
			for name, v := range vars {
				if strings.Contains(flat(v), "resolve:secretsmanager") {
					t.Errorf("%s %s: %s resolves a secret into the environment: %v", stage, f.Name, name, flat(v))
				}
			}
			check("TIX_CURSOR_SECRET_ARN", flat(vars["TIX_CURSOR_SECRET_ARN"]), "${"+secrets["cursor-secret"]+"}")
			check("TIX_WEBHOOK_KEYRING_ARN", flat(vars["TIX_WEBHOOK_KEYRING_ARN"]), "${"+secrets["webhook-keyring"]+"}")
			keyIDs := []string{"k1"}
			if stage == ProdStage {
				keyIDs = prodKeyIDs
			}
			check("TIX_WEBHOOK_KEYRING_IDS", vars["TIX_WEBHOOK_KEYRING_IDS"], strings.Join(keyIDs, ","))
			if stage == ProdStage {
				for k, v := range prodSettings {
					check(k, vars[k], v)
				}
			} else {
				check("TIX_LOG_LEVEL", vars["TIX_LOG_LEVEL"], "info")
			}
		}
	}
}

// TestSecrets checks the generated secrets have the shape the code decodes.
func TestSecrets(t *testing.T) {
	for _, stage := range stages {
		tm := tmpls[stage]
		keyID, _ := only(t, stage, "AWS::KMS::Key")
		holds(t, stage+": key rotation on", func() {
			tm.HasResourceProperties(jsii.String("AWS::KMS::Key"), like(obj{"EnableKeyRotation": true}))
		})
		holds(t, stage+": two secrets", func() { tm.ResourceCountIs(jsii.String("AWS::SecretsManager::Secret"), jsii.Number(2)) })
		// Encrypted with the stack's key, no punctuation; the cursor secret a
		// plain 48-character string, the keyring {"k1": 43 characters}.
		key := obj{"Fn::GetAtt": []any{keyID, "Arn"}}
		holds(t, stage+": cursor secret", func() {
			tm.HasResourceProperties(jsii.String("AWS::SecretsManager::Secret"), like(obj{
				"Name": "tix-" + stage + "/cursor-secret", "KmsKeyId": key,
				"GenerateSecretString": obj{"ExcludePunctuation": true, "PasswordLength": 48, "GenerateStringKey": assertions.Match_Absent()},
			}))
		})
		holds(t, stage+": webhook keyring secret", func() {
			tm.HasResourceProperties(jsii.String("AWS::SecretsManager::Secret"), like(obj{
				"Name": "tix-" + stage + "/webhook-keyring", "KmsKeyId": key,
				"GenerateSecretString": obj{"ExcludePunctuation": true, "PasswordLength": 43, "GenerateStringKey": "k1", "SecretStringTemplate": "{}"},
			}))
		})
	}
	// What Secrets Manager generates for the keyring (43 of [A-Za-z0-9]) is a
	// key the webhook package accepts.
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for range 20 {
		var b strings.Builder
		for range 43 {
			n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alnum))))
			b.WriteByte(alnum[n.Int64()])
		}
		if _, err := webhook.NewAESBox("k2:" + b.String() + ",k1:" + b.String()); err != nil {
			t.Fatalf("keyring k1:%s: %v", b.String(), err)
		}
	}
}

func TestQueues(t *testing.T) {
	for _, stage := range stages {
		qIDs, fnIDs := queueIDs(t, stage), functionIDs(t, stage)
		all := templates[stage]["Resources"].(map[string]any)
		if len(qIDs) != 2*len(queue.Queues) {
			t.Errorf("%s: queues %v, want each of %v and its DLQ", stage, qIDs, queue.Queues)
		}
		holds(t, stage+": queues encrypted (SSE-SQS)", func() {
			tmpls[stage].AllResourcesProperties(jsii.String("AWS::SQS::Queue"), like(obj{"SqsManagedSseEnabled": true}))
		})
		holds(t, stage+": event source mappings report item failures, batches of BatchSize", func() {
			tmpls[stage].AllResourcesProperties(jsii.String("AWS::Lambda::EventSourceMapping"), like(obj{
				"FunctionResponseTypes": []any{"ReportBatchItemFailures"}, "BatchSize": BatchSize}))
		})
		timeout := map[string]time.Duration{}
		for _, f := range Functions {
			timeout[f.Name] = f.Timeout
		}
		mappings := resources(t, stage, "AWS::Lambda::EventSourceMapping")
		if len(mappings) != len(queue.Queues) {
			t.Fatalf("%s: %d event source mappings, want %d", stage, len(mappings), len(queue.Queues))
		}
		byQueue := map[string]map[string]any{}
		for _, m := range mappings {
			byQueue[refID(props(m)["EventSourceArn"])] = props(m)
		}
		for _, name := range queue.Queues {
			consumer := Consumers[name]
			qp := props(all[qIDs[name]].(map[string]any))
			if vt := num(qp["VisibilityTimeout"]); vt < 6*timeout[consumer].Seconds() {
				t.Errorf("%s: %s VisibilityTimeout %v < 6 x %s's timeout %v", stage, name, vt, consumer, timeout[consumer])
			}
			rp := qp["RedrivePolicy"].(map[string]any)
			if refID(rp["deadLetterTargetArn"]) != qIDs[queue.DLQ(name)] || num(rp["maxReceiveCount"]) != queue.MaxReceives {
				t.Errorf("%s: %s RedrivePolicy %v, want %s after %d receives", stage, name, rp, queue.DLQ(name), queue.MaxReceives)
			}
			dp := props(all[qIDs[queue.DLQ(name)]].(map[string]any))
			if num(dp["MessageRetentionPeriod"]) != 14*24*3600 {
				t.Errorf("%s: %s retention %v, want 14 days", stage, queue.DLQ(name), dp["MessageRetentionPeriod"])
			}
			m := byQueue[qIDs[name]]
			if m == nil {
				t.Errorf("%s: no event source mapping on %s", stage, name)
				continue
			}
			if refID(m["FunctionName"]) != fnIDs[consumer] {
				t.Errorf("%s: %s is consumed by %v, want %s", stage, name, m["FunctionName"], consumer)
			}
			// Every consumer is capped (deliver 20, timers 50): a backlog cannot
			// take the account's concurrency from the API. Prod's on-sale
			// context raises deliver's (deliverConcurrency).
			want := map[string]float64{"deliver": 20, "timers": 50}[consumer]
			if stage == ProdStage && consumer == "deliver" {
				want = float64(prodOnSale.DeliverConcurrency)
			}
			if sc, _ := m["ScalingConfig"].(map[string]any); want == 0 || num(sc["MaximumConcurrency"]) != want {
				t.Errorf("%s: %s ScalingConfig %v, want MaximumConcurrency %v", stage, consumer, sc, want)
			}
		}
	}
}

func TestHTTPAPI(t *testing.T) {
	for _, stage := range stages {
		tm := tmpls[stage]
		apiID, _ := only(t, stage, "AWS::ApiGatewayV2::Api")
		holds(t, stage+": an HTTP API", func() {
			tm.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), like(obj{"ProtocolType": "HTTP"}))
		})
		holds(t, stage+": Lambda proxy integrations, payload 2.0", func() {
			tm.AllResourcesProperties(jsii.String("AWS::ApiGatewayV2::Integration"), like(obj{
				"PayloadFormatVersion": "2.0", "IntegrationType": "AWS_PROXY"}))
		})
		fnByID := map[string]string{}
		for name, id := range functionIDs(t, stage) {
			fnByID[id] = name
		}
		for id, a := range resources(t, stage, "AWS::Lambda::Alias") { // provisioned concurrency
			fnByID[id] = fnByID[refID(props(a)["FunctionName"])]
		}
		integrationFn := map[string]string{}
		for id, in := range resources(t, stage, "AWS::ApiGatewayV2::Integration") {
			integrationFn[id] = fnByID[refID(props(in)["IntegrationUri"])]
		}
		got := map[string]string{}
		for _, r := range resources(t, stage, "AWS::ApiGatewayV2::Route") {
			p := props(r)
			if refID(p["ApiId"]) != apiID {
				t.Errorf("%s: route %v on another API", stage, p["RouteKey"])
			}
			target := flat(p["Target"])
			got[p["RouteKey"].(string)] = integrationFn[strings.TrimSuffix(strings.TrimPrefix(target, "integrations/${"), "}")]
		}
		want := maps.Clone(Routes)
		// The route table, written out once more on purpose.
		design := map[string]string{
			"ANY /events": "catalog", "ANY /events/{proxy+}": "catalog", "ANY /ping": "catalog",
			"ANY /health": "catalog", "ANY /openapi.json": "catalog", "$default": "catalog",
			"ANY /seat-holds": "holds", "ANY /seat-holds/{proxy+}": "holds", "ANY /queue/{proxy+}": "holds",
			"ANY /orders": "orders", "ANY /orders/{proxy+}": "orders", "POST /payment-notifications/tbank": "orders",
			"ANY /test-helpers/{proxy+}": "orders",
			"ANY /webhook-endpoints":     "webhooks", "ANY /webhook-deliveries": "webhooks", "ANY /webhook-deliveries/{proxy+}": "webhooks",
			"ANY /order-events": "webhooks", "ANY /webhook-endpoints/{proxy+}": "webhooks", "ANY /request-log/{proxy+}": "webhooks",
			"POST /secret-scanning/github": "webhooks",
			"ANY /dashboard":               "dashboard", "ANY /dashboard/{proxy+}": "dashboard",
			"ANY /ticket-keys": "checkins", "ANY /check-ins": "checkins", "ANY /check-ins/{proxy+}": "checkins",
			"ANY /events/{id}/check-in-stats": "checkins", "ANY /events/{id}/admission-list": "checkins",
			"ANY /tickets/{proxy+}": "orders", "ANY /transfers/{proxy+}": "orders",
		}
		if !reflect.DeepEqual(want, design) {
			t.Errorf("Routes %v differ from the route table %v", want, design)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: routes %v, want %v", stage, got, want)
		}
		rate, burst := APIRateLimit, APIBurstLimit
		if stage == ProdStage {
			rate, burst = prodOnSale.APIRateLimit, prodOnSale.APIBurstLimit
		}
		holds(t, stage+": one stage, v1, auto-deployed and throttled", func() {
			tm.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Stage"), jsii.Number(1))
			tm.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), like(obj{
				"StageName": "v1", "AutoDeploy": true,
				"DefaultRouteSettings": obj{"ThrottlingRateLimit": rate, "ThrottlingBurstLimit": burst},
			}))
		})
		for _, name := range []string{"ApiBaseUrl", "TableName", "CursorSecretArn", "WebhookKeyringSecretArn", "AlarmTopicArn", "PaymentNotificationUrl"} {
			holds(t, stage+": output "+name, func() { tm.HasOutput(jsii.String(name), assertions.Match_AnyValue()) })
		}
		outputs := templates[stage]["Outputs"].(map[string]any)
		if u := flat(outputs["ApiBaseUrl"].(map[string]any)["Value"]); !strings.HasPrefix(u, "https://${"+apiID+"}.execute-api.") || !strings.HasSuffix(u, "/v1") {
			t.Errorf("%s: ApiBaseUrl %s, want https://<api>.execute-api.<region>.<suffix>/v1", stage, u)
		}
	}
}

func TestSweepSchedule(t *testing.T) {
	for _, stage := range stages {
		tm := tmpls[stage]
		timers := obj{"Fn::GetAtt": []any{functionIDs(t, stage)["timers"], "Arn"}}
		holds(t, stage+": one rule", func() { tm.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(1)) })
		holds(t, stage+": the sweep runs the timers function every minute", func() {
			tm.HasResourceProperties(jsii.String("AWS::Events::Rule"), like(obj{
				"ScheduleExpression": "rate(1 minute)", "Targets": []any{like(obj{"Arn": timers})}}))
		})
		holds(t, stage+": EventBridge may invoke timers", func() {
			tm.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), like(obj{
				"Principal": "events.amazonaws.com", "Action": "lambda:InvokeFunction", "FunctionName": timers}))
		})
	}
}

func TestAlarms(t *testing.T) {
	want := map[string]int{
		"api-5xx": 1, "api-p99-latency": 1, "api-429": 1,
		"function-errors": len(Functions), "function-throttles": len(Functions), "function-p99-duration": len(Functions),
		"dynamodb-throttles": 1, "dlq-depth": len(queue.Queues), "oldest-age": len(queue.Queues),
		"dynamodb-transaction-conflicts": 1,
	}
	for _, stage := range stages {
		topicID := topicIDs(t, stage)["alarms"]
		w := maps.Clone(want)
		if stage == ProdStage { // email on, orders provisioned
			w["ses-bounce-rate"], w["ses-complaint-rate"], w["spillover"] = 1, 1, len(prodOnSale.Provisioned)
		}
		got := map[string]int{}
		for _, a := range resources(t, stage, "AWS::CloudWatch::Alarm") {
			p := props(a)
			name := strings.TrimPrefix(p["AlarmName"].(string), "tix-"+stage+"-")
			kind := name
			switch {
			case strings.HasSuffix(name, "-dlq-depth"):
				kind = "dlq-depth"
			case strings.HasSuffix(name, "-oldest-age"):
				kind = "oldest-age"
			case strings.HasSuffix(name, "-spillover"):
				kind = "spillover"
			case strings.HasSuffix(name, "-p99-duration"):
				kind = "function-p99-duration"
			case name != "dynamodb-throttles" && strings.HasSuffix(name, "-throttles"):
				kind = "function-throttles"
			case strings.HasSuffix(name, "-errors"):
				kind = "function-errors"
			}
			got[kind]++
		}
		holds(t, stage+": every alarm acts on the topic", func() {
			tmpls[stage].AllResourcesProperties(jsii.String("AWS::CloudWatch::Alarm"), like(obj{
				"AlarmActions": []any{obj{"Ref": topicID}}}))
		})
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: alarms %v, want %v", stage, got, w)
		}
		// The alarm e-mail in prod; no subscription without alarmEmail.
		subs := 0
		if stage == ProdStage {
			subs = 1
			holds(t, stage+": the alarm e-mail", func() {
				tmpls[stage].HasResourceProperties(jsii.String("AWS::SNS::Subscription"), like(obj{
					"Protocol": "email", "Endpoint": prodEmail, "TopicArn": obj{"Ref": topicID}}))
			})
		}
		n := 0
		for _, sub := range resources(t, stage, "AWS::SNS::Subscription") {
			if refID(props(sub)["TopicArn"]) == topicID {
				n++
			}
		}
		if n != subs {
			t.Errorf("%s: %d subscriptions to the alarm topic, want %d", stage, n, subs)
		}
	}
}

func TestSettings(t *testing.T) {
	if err := CheckSettings(map[string]string{"TIX_HOLD_TTL": "10m", "TIX_WEBHOOK_SCHEDULE": "0s,1m"}); err != nil {
		t.Errorf("valid settings: %v", err)
	}
	for _, bad := range []map[string]string{
		{"TIX_HOLD_TLL": "10m"},            // typo
		{"HOME": "/"},                      // not TIX_
		{"TIX_TABLE": "other"},             // the stack's
		{"TIX_SQS_ENDPOINT": "http://x"},   // local only
		{"TIX_HOLD_TTL": "ten minutes"},    // bad value
		{"TIX_WEBHOOK_SCHEDULE": "1h,-1s"}, // bad value
	} {
		if err := CheckSettings(bad); err == nil {
			t.Errorf("CheckSettings(%v) accepted it", bad)
		}
	}
	for _, in := range []any{nil, "", `{"TIX_HOLD_TTL":"10m"}`, map[string]any{"TIX_HOLD_TTL": "10m"}} {
		if _, err := ParseSettings(in); err != nil {
			t.Errorf("ParseSettings(%v): %v", in, err)
		}
	}
	for _, in := range []any{`TIX_HOLD_TTL=10m`, map[string]any{"TIX_RATE_READS": 600.0}, 3.0} {
		if _, err := ParseSettings(in); err == nil {
			t.Errorf("ParseSettings(%v) accepted it", in)
		}
	}
}

// TestDocumentedResourceCount: the one resource count of docs/aws.md
// (Preparing an on-sale) is the dev template's.
func TestDocumentedResourceCount(t *testing.T) {
	raw, err := os.ReadFile("../docs/aws.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\(([0-9,]+) resources in a stage without\s+alarm e-mail`).FindSubmatch(raw)
	if m == nil {
		t.Fatal(`docs/aws.md: no "(N resources in a stage without alarm e-mail"`)
	}
	n := len(templates["dev"]["Resources"].(map[string]any))
	if got := strings.ReplaceAll(string(m[1]), ",", ""); got != fmt.Sprint(n) {
		t.Errorf("docs/aws.md says %s resources, the dev template has %d", m[1], n)
	}
}
