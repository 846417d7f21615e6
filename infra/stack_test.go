package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/queue"
	"tix/internal/store"
	"tix/internal/webhook"
)

// The templates of the stages, synthesized once in TestMain (a synthesis
// costs seconds: jsii runs aws-cdk-lib in a Node process).
var templates = map[string]map[string]any{}

// annotations are the CDK warnings and errors of each stage's synthesis.
var annotations = map[string][]string{}

// Props of the prod synthesis, to check they arrive.
var (
	prodEmail    = "oncall@example.com"
	prodKeyIDs   = []string{"k2", "k1"}
	prodSettings = map[string]string{"TIX_HOLD_TTL": "10m", "TIX_LOG_LEVEL": "warn"}
)

func TestMain(m *testing.M) {
	// aws-cdk-lib's own CloudFormation validation (a WebAssembly rule engine run
	// at every synth, whose report only warns and which no test reads) took
	// about 30 of the 36 s of these tests; the checks here and cdk-nag's rules
	// (TestCdkNag) are what the templates are held to. make synth still runs it.
	os.Setenv("CDK_VALIDATION", "false")
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
	for _, stage := range []string{"dev", ProdStage} {
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
		if stage == ProdStage {
			props.AlarmEmail, props.WebhookKeyIDs, props.Settings = prodEmail, prodKeyIDs, prodSettings
		}
		stack, err := NewTixStack(app, "tix-"+stage, props)
		if err != nil {
			return fmt.Errorf("%s: %w", stage, err)
		}
		notes := assertions.Annotations_FromStack(stack)
		for kind, msgs := range map[string]*[]*cxapi.SynthesisMessage{
			"warning": notes.FindWarning(jsii.String("*"), assertions.Match_AnyValue()),
			"error":   notes.FindError(jsii.String("*"), assertions.Match_AnyValue()),
		} {
			for _, m := range *msgs {
				annotations[stage] = append(annotations[stage], fmt.Sprintf("%s at %s: %v", kind, *m.Id, m.Entry.Data))
			}
		}
		tmpl := assertions.Template_FromStack(stack, nil).ToJSON()
		b, err := json.Marshal(tmpl)
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
		fmt.Sscan(v, &f)
		return f
	}
	return -1
}

// TestNoAnnotations: CDK has no warning or error about the stack (deprecated
// APIs, missing permissions it can see, ...).
func TestNoAnnotations(t *testing.T) {
	for _, stage := range stages {
		for _, a := range annotations[stage] {
			t.Errorf("%s: %s", stage, a)
		}
	}
}

func TestResourceCount(t *testing.T) {
	for _, stage := range stages {
		rs := templates[stage]["Resources"].(map[string]any)
		byType := map[string]int{}
		for _, r := range rs {
			byType[r.(map[string]any)["Type"].(string)]++
		}
		var types []string
		for k, n := range byType {
			types = append(types, fmt.Sprintf("%s=%d", strings.TrimPrefix(k, "AWS::"), n))
		}
		sort.Strings(types)
		t.Logf("%s: %d resources: %s", stage, len(rs), strings.Join(types, " "))
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
		ttl, _ := p["TimeToLiveSpecification"].(map[string]any)
		if ttl["AttributeName"] != store.Table.TTLAttribute || ttl["Enabled"] != true {
			t.Errorf("%s: TimeToLiveSpecification %v, want %s enabled", stage, ttl, store.Table.TTLAttribute)
		}
		pitr, _ := p["PointInTimeRecoverySpecification"].(map[string]any)
		if pitr["PointInTimeRecoveryEnabled"] != true {
			t.Errorf("%s: point-in-time recovery is not on: %v", stage, pitr)
		}
	}
}

func TestRetention(t *testing.T) {
	// Everything holding data that cannot be re-created.
	kept := []string{"AWS::DynamoDB::Table", "AWS::KMS::Key", "AWS::SecretsManager::Secret", "AWS::Logs::LogGroup"}
	for _, stage := range stages {
		prod := stage == ProdStage
		_, tr := only(t, stage, "AWS::DynamoDB::Table")
		if got := props(tr)["DeletionProtectionEnabled"] == true; got != prod {
			t.Errorf("%s: table DeletionProtectionEnabled %v, want %v", stage, got, prod)
		}
		for _, typ := range kept {
			for id, r := range resources(t, stage, typ) {
				want := "Delete"
				if prod {
					want = "Retain"
				}
				if r["DeletionPolicy"] != want || r["UpdateReplacePolicy"] != want {
					t.Errorf("%s: %s %s: DeletionPolicy %v, UpdateReplacePolicy %v, want %s", stage, typ, id, r["DeletionPolicy"], r["UpdateReplacePolicy"], want)
				}
			}
		}
		for id, r := range resources(t, stage, "AWS::Logs::LogGroup") {
			want := 14.0
			if prod {
				want = 90
			}
			if got := num(props(r)["RetentionInDays"]); got != want {
				t.Errorf("%s: log group %s keeps %v days, want %v", stage, id, got, want)
			}
		}
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
		for id, r := range resources(t, stage, "AWS::IAM::Role") {
			if _, ok := props(r)["ManagedPolicyArns"]; ok {
				t.Errorf("%s: role %s has managed policies; want hand-written statements only", stage, id)
			}
		}
		if n := len(resources(t, stage, "AWS::IAM::ManagedPolicy")); n != 0 {
			t.Errorf("%s: %d managed policies", stage, n)
		}
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
			check("Architectures", p["Architectures"], []any{"arm64"})
			check("Runtime", p["Runtime"], "provided.al2023")
			check("Handler", p["Handler"], "bootstrap")
			check("MemorySize", num(p["MemorySize"]), float64(f.Memory))
			check("Timeout", num(p["Timeout"]), f.Timeout.Seconds())
			lc, _ := p["LoggingConfig"].(map[string]any)
			check("LoggingConfig.LogFormat", lc["LogFormat"], "JSON")
			if lg := refID(lc["LogGroup"]); lg == "" {
				t.Errorf("%s %s: no explicit log group: %v", stage, f.Name, lc)
			}
			vars := p["Environment"].(map[string]any)["Variables"].(map[string]any)
			check("TIX_TABLE", flat(vars["TIX_TABLE"]), "${"+tableID+"}")
			check("TIX_QUEUE_PREFIX", vars["TIX_QUEUE_PREFIX"], "tix-"+stage)
			check("TIX_LOG_FORMAT", vars["TIX_LOG_FORMAT"], "json")
			// The secrets are not in the environment, not even as dynamic
			// references: only their ARNs, which the function reads at start.
			if _, ok := p["KmsKeyArn"]; ok {
				t.Errorf("%s %s: the environment needs no customer key: it holds no secret", stage, f.Name)
			}
			for _, name := range []string{"TIX_CURSOR_SECRET", "TIX_WEBHOOK_KEYRING"} {
				if v, ok := vars[name]; ok {
					t.Errorf("%s %s: %s is in the environment: %v", stage, f.Name, name, v)
				}
			}
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
		keyID, key := only(t, stage, "AWS::KMS::Key")
		if props(key)["EnableKeyRotation"] != true {
			t.Errorf("%s: key rotation is off", stage)
		}
		secrets := resources(t, stage, "AWS::SecretsManager::Secret")
		if len(secrets) != 2 {
			t.Fatalf("%s: %d secrets, want 2", stage, len(secrets))
		}
		for id, s := range secrets {
			p := props(s)
			if flat(p["KmsKeyId"]) != "${"+keyID+".Arn}" {
				t.Errorf("%s: secret %s is not encrypted with the stack's key: %v", stage, id, p["KmsKeyId"])
			}
			g := p["GenerateSecretString"].(map[string]any)
			if g["ExcludePunctuation"] != true {
				t.Errorf("%s: secret %s may contain punctuation", stage, id)
			}
			switch name := p["Name"].(string); name {
			case "tix-" + stage + "/cursor-secret":
				if num(g["PasswordLength"]) != 48 || g["GenerateStringKey"] != nil {
					t.Errorf("%s: cursor secret %v, want a plain 48-character string", stage, g)
				}
			case "tix-" + stage + "/webhook-keyring":
				if num(g["PasswordLength"]) != 43 || g["GenerateStringKey"] != "k1" || g["SecretStringTemplate"] != "{}" {
					t.Errorf("%s: keyring secret %v, want {\"k1\": 43 characters}", stage, g)
				}
			default:
				t.Errorf("%s: unexpected secret %s", stage, name)
			}
		}
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
		for name, id := range qIDs {
			if props(all[id].(map[string]any))["SqsManagedSseEnabled"] != true {
				t.Errorf("%s: queue %s is not encrypted (SSE-SQS)", stage, name)
			}
		}
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
			if !reflect.DeepEqual(m["FunctionResponseTypes"], []any{"ReportBatchItemFailures"}) {
				t.Errorf("%s: %s FunctionResponseTypes %v", stage, name, m["FunctionResponseTypes"])
			}
			if num(m["BatchSize"]) != BatchSize {
				t.Errorf("%s: %s BatchSize %v, want %d", stage, name, m["BatchSize"], BatchSize)
			}
			if consumer == "deliver" {
				sc, _ := m["ScalingConfig"].(map[string]any)
				if num(sc["MaximumConcurrency"]) != DeliverMaxConcurrency {
					t.Errorf("%s: deliver ScalingConfig %v, want MaximumConcurrency %d", stage, sc, DeliverMaxConcurrency)
				}
			}
		}
	}
}

func TestHTTPAPI(t *testing.T) {
	for _, stage := range stages {
		apiID, api := only(t, stage, "AWS::ApiGatewayV2::Api")
		if props(api)["ProtocolType"] != "HTTP" {
			t.Errorf("%s: API protocol %v", stage, props(api)["ProtocolType"])
		}
		fnByID := map[string]string{}
		for name, id := range functionIDs(t, stage) {
			fnByID[id] = name
		}
		integrationFn := map[string]string{}
		for id, in := range resources(t, stage, "AWS::ApiGatewayV2::Integration") {
			p := props(in)
			if p["PayloadFormatVersion"] != "2.0" || p["IntegrationType"] != "AWS_PROXY" {
				t.Errorf("%s: integration %s: payload %v, type %v", stage, id, p["PayloadFormatVersion"], p["IntegrationType"])
			}
			integrationFn[id] = fnByID[refID(p["IntegrationUri"])]
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
		want := map[string]string{}
		for path, fn := range Routes {
			if path == "$default" {
				want[path] = fn
			} else {
				want["ANY "+path] = fn
			}
		}
		// The route table, written out once more on purpose.
		design := map[string]string{
			"ANY /events": "catalog", "ANY /events/{proxy+}": "catalog", "ANY /ping": "catalog",
			"ANY /health": "catalog", "ANY /openapi.json": "catalog", "$default": "catalog",
			"ANY /seat-holds": "holds",
			"ANY /orders":     "orders", "ANY /orders/{proxy+}": "orders",
			"ANY /webhook-endpoints": "webhooks", "ANY /webhook-deliveries": "webhooks", "ANY /webhook-deliveries/{proxy+}": "webhooks",
		}
		if !reflect.DeepEqual(want, design) {
			t.Errorf("Routes %v differ from the route table %v", want, design)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: routes %v, want %v", stage, got, want)
		}
		_, st := only(t, stage, "AWS::ApiGatewayV2::Stage")
		sp := props(st)
		if sp["StageName"] != "v1" || sp["AutoDeploy"] != true {
			t.Errorf("%s: stage %v auto-deploy %v, want v1 auto-deployed", stage, sp["StageName"], sp["AutoDeploy"])
		}
		rs, _ := sp["DefaultRouteSettings"].(map[string]any)
		if num(rs["ThrottlingRateLimit"]) != APIRateLimit || num(rs["ThrottlingBurstLimit"]) != APIBurstLimit {
			t.Errorf("%s: stage throttling %v", stage, rs)
		}
		outputs := templates[stage]["Outputs"].(map[string]any)
		for _, name := range []string{"ApiBaseUrl", "TableName", "CursorSecretArn", "WebhookKeyringSecretArn", "AlarmTopicArn"} {
			if outputs[name] == nil {
				t.Errorf("%s: no output %s", stage, name)
			}
		}
		if u := flat(outputs["ApiBaseUrl"].(map[string]any)["Value"]); !strings.HasPrefix(u, "https://${"+apiID+"}.execute-api.") || !strings.HasSuffix(u, "/v1") {
			t.Errorf("%s: ApiBaseUrl %s, want https://<api>.execute-api.<region>.<suffix>/v1", stage, u)
		}
	}
}

func TestSweepSchedule(t *testing.T) {
	for _, stage := range stages {
		_, rule := only(t, stage, "AWS::Events::Rule")
		p := props(rule)
		if p["ScheduleExpression"] != "rate(1 minute)" {
			t.Errorf("%s: schedule %v", stage, p["ScheduleExpression"])
		}
		targets := p["Targets"].([]any)
		if len(targets) != 1 || refID(targets[0].(map[string]any)["Arn"]) != functionIDs(t, stage)["timers"] {
			t.Errorf("%s: sweep targets %v, want the timers function", stage, targets)
		}
		invoked := false
		for _, perm := range resources(t, stage, "AWS::Lambda::Permission") {
			pp := props(perm)
			invoked = invoked || pp["Principal"] == "events.amazonaws.com" && refID(pp["FunctionName"]) == functionIDs(t, stage)["timers"]
		}
		if !invoked {
			t.Errorf("%s: EventBridge may not invoke timers", stage)
		}
	}
}

func TestAlarms(t *testing.T) {
	want := map[string]int{
		"api-5xx": 1, "api-p99-latency": 1,
		"function-errors": len(Functions), "function-throttles": len(Functions),
		"dynamodb-throttles": 1, "dlq-depth": len(queue.Queues),
	}
	for _, stage := range stages {
		topicID, _ := only(t, stage, "AWS::SNS::Topic")
		got := map[string]int{}
		for id, a := range resources(t, stage, "AWS::CloudWatch::Alarm") {
			p := props(a)
			name := strings.TrimPrefix(p["AlarmName"].(string), "tix-"+stage+"-")
			kind := name
			switch {
			case strings.HasSuffix(name, "-dlq-depth"):
				kind = "dlq-depth"
			case name != "dynamodb-throttles" && strings.HasSuffix(name, "-throttles"):
				kind = "function-throttles"
			case strings.HasSuffix(name, "-errors"):
				kind = "function-errors"
			}
			got[kind]++
			if actions := list(p["AlarmActions"]); len(actions) != 1 || refID(actions[0]) != topicID {
				t.Errorf("%s: alarm %s actions %v, want the topic", stage, id, p["AlarmActions"])
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: alarms %v, want %v", stage, got, want)
		}
		subs := resources(t, stage, "AWS::SNS::Subscription")
		if stage == ProdStage {
			if len(subs) != 1 {
				t.Fatalf("%s: %d subscriptions, want the alarm e-mail", stage, len(subs))
			}
			for _, s := range subs {
				if props(s)["Protocol"] != "email" || props(s)["Endpoint"] != prodEmail {
					t.Errorf("%s: subscription %v", stage, props(s))
				}
			}
		} else if len(subs) != 0 {
			t.Errorf("%s: %d subscriptions without alarmEmail", stage, len(subs))
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
