package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"tix/internal/store"
)

// The security checks of the templates: secrets, table permissions, access
// logs, TLS-only policies, and cdk-nag's AWS Solutions rules.

// roleStatements are the Allow statements of the policies attached to a
// function's role.
func roleStatements(t *testing.T, stage, fn string) []map[string]any {
	t.Helper()
	fp := props(templates[stage]["Resources"].(map[string]any)[functionIDs(t, stage)[fn]].(map[string]any))
	roleID := refID(fp["Role"])
	var out []map[string]any
	for _, pol := range resources(t, stage, "AWS::IAM::Policy") {
		attached := false
		for _, r := range props(pol)["Roles"].([]any) {
			attached = attached || refID(r) == roleID
		}
		if !attached {
			continue
		}
		for _, s := range props(pol)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			if s := s.(map[string]any); s["Effect"] == "Allow" {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestSecretsAccess: each function may read the two secrets and nothing else
// from Secrets Manager, and may use their key only through Secrets Manager.
func TestSecretsAccess(t *testing.T) {
	for _, stage := range stages {
		keyID, _ := only(t, stage, "AWS::KMS::Key")
		var secretARNs []string
		for id := range resources(t, stage, "AWS::SecretsManager::Secret") {
			secretARNs = append(secretARNs, "${"+id+"}")
		}
		sort.Strings(secretARNs)
		for _, f := range Functions {
			var sm, kms int
			for _, s := range roleStatements(t, stage, f.Name) {
				var res []string
				for _, r := range list(s["Resource"]) {
					res = append(res, flat(r))
				}
				sort.Strings(res)
				for _, a := range list(s["Action"]) {
					a := a.(string)
					switch {
					case strings.HasPrefix(a, "secretsmanager:"):
						sm++
						if a != "secretsmanager:GetSecretValue" || !reflect.DeepEqual(res, secretARNs) {
							t.Errorf("%s %s: %s on %v, want only secretsmanager:GetSecretValue on %v", stage, f.Name, a, res, secretARNs)
						}
					case strings.HasPrefix(a, "kms:"):
						kms++
						via, _ := s["Condition"].(map[string]any)["StringEquals"].(map[string]any)
						if a != "kms:Decrypt" || !reflect.DeepEqual(res, []string{"${" + keyID + ".Arn}"}) ||
							flat(via["kms:ViaService"]) != "secretsmanager.${AWS::Region}.amazonaws.com" {
							t.Errorf("%s %s: %s on %v if %v, want kms:Decrypt on the secrets' key through Secrets Manager only", stage, f.Name, a, res, s["Condition"])
						}
					}
				}
			}
			if sm != 1 || kms != 1 {
				t.Errorf("%s %s: %d Secrets Manager and %d KMS actions, want GetSecretValue and Decrypt", stage, f.Name, sm, kms)
			}
		}
	}
}

// TestCdkNag runs cdk-nag's AWS Solutions rule pack (scripts/cdknag.js, the
// pinned npm packages of scripts/) over the dev and prod templates and the
// edge's (edge_test.go): any error
// or warning the script does not acknowledge with a reason fails.
func TestCdkNag(t *testing.T) {
	if _, err := os.Stat("../scripts/node_modules/cdk-nag"); err != nil {
		t.Fatalf("cdk-nag is not installed: run make setup (npm ci in scripts/): %v", err)
	}
	dir := t.TempDir()
	args := []string{"../scripts/cdknag.js"}
	if os.Getenv("TIX_CDKNAG_ALL") != "" {
		args = append(args, "--all") // the acknowledged findings too (counting them)
	}
	for _, stage := range append(stages, edgeStage, edgeARNStage, edgeWAFStage) {
		b, err := json.Marshal(templates[stage])
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "tix-"+stage+".template.json")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, f)
	}
	out, err := exec.Command("node", args...).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("cdk-nag: %v", err)
	}
}

// TestTablePermissions: each role has exactly the table actions of
// store.Permissions (which the functions' tests check their DynamoDB calls
// against), indexes named one by one, no function may write an API key
// item, and the HTTP functions may update the rate-limit counter items' counts.
func TestTablePermissions(t *testing.T) {
	http := map[string]bool{}
	for _, fn := range Routes {
		http[fn] = true
	}
	keyItems := []any{}
	for _, p := range store.KeyPrefixes {
		keyItems = append(keyItems, p+"*")
	}
	rlAttrs := []any{}
	for _, a := range store.RateLimitAttributes {
		rlAttrs = append(rlAttrs, a)
	}
	for _, stage := range stages {
		tableID, _ := only(t, stage, "AWS::DynamoDB::Table")
		table := "${" + tableID + ".Arn}"
		indexes := []string{table}
		for _, ix := range store.Table.Indexes {
			indexes = append(indexes, table+"/index/"+ix.Name)
		}
		sort.Strings(indexes)
		for _, f := range Functions {
			access := store.Permissions[f.Name]
			if access.RateLimit != http[f.Name] {
				t.Errorf("%s: store.Permissions RateLimit %v, but it serves HTTP routes: %v", f.Name, access.RateLimit, http[f.Name])
			}
			type stmt struct {
				Actions, Resources []string
				Condition          any
			}
			got := map[string]stmt{}
			for _, s := range roleStatements(t, stage, f.Name) {
				var acts, res []string
				for _, a := range list(s["Action"]) {
					if a := a.(string); strings.HasPrefix(a, "dynamodb:") {
						acts = append(acts, a)
					}
				}
				if len(acts) == 0 {
					continue
				}
				for _, r := range list(s["Resource"]) {
					res = append(res, flat(r))
				}
				sort.Strings(acts)
				sort.Strings(res)
				sid, _ := s["Sid"].(string)
				if _, dup := got[sid]; dup || sid == "" {
					t.Errorf("%s %s: table statement without a unique Sid: %v", stage, f.Name, s)
				}
				got[sid] = stmt{acts, res, s["Condition"]}
			}
			want := map[string]stmt{}
			var reads []string
			for _, a := range access.Reads {
				if a == "dynamodb:Query" {
					want["TableQuery"] = stmt{[]string{a}, indexes, nil}
				} else {
					reads = append(reads, a)
				}
			}
			if len(reads) > 0 {
				sort.Strings(reads)
				want["TableRead"] = stmt{reads, []string{table}, nil}
			}
			if len(access.Writes) > 0 {
				w := append([]string(nil), access.Writes...)
				sort.Strings(w)
				want["TableWrite"] = stmt{w, []string{table}, map[string]any{
					"ForAllValues:StringNotLike": map[string]any{"dynamodb:LeadingKeys": keyItems}}}
			}
			if access.KeyIPs && stage == ProdStage { // email on: mailFrom
				var prefixes []any
				for _, p := range store.KeyIPPrefixes {
					prefixes = append(prefixes, p+"*")
				}
				want["KeyIPs"] = stmt{[]string{"dynamodb:PutItem"}, []string{table}, map[string]any{
					"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": prefixes}}}
			}
			if access.RevokeKeys {
				revAttrs := []any{}
				for _, a := range store.RevocationAttributes {
					revAttrs = append(revAttrs, a)
				}
				want["RevokeKeys"] = stmt{[]string{"dynamodb:UpdateItem"}, []string{table}, map[string]any{
					"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": keyItems, "dynamodb:Attributes": revAttrs}}}
			}
			if access.Keys {
				w := append([]string(nil), access.Writes...)
				sort.Strings(w)
				want["KeyWrite"] = stmt{w, []string{table}, map[string]any{
					"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": keyItems}}}
			}
			if access.RateLimit {
				want["RateLimit"] = stmt{[]string{"dynamodb:UpdateItem"}, []string{table}, map[string]any{
					"ForAllValues:StringLike": map[string]any{
						"dynamodb:LeadingKeys": []any{store.RateLimitKeyPrefix + "*"},
						"dynamodb:Attributes":  rlAttrs,
					}}}
				want["RequestLog"] = stmt{[]string{"dynamodb:PutItem"}, []string{table}, map[string]any{
					"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{store.RequestLogKeyPrefix + "*"}}}}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: table statements\n got %+v\nwant %+v", stage, f.Name, got, want)
			}
			// The invariant, whatever store.Permissions says: every table
			// write is conditioned on the item's partition key.
			for sid, s := range got {
				for _, a := range s.Actions {
					switch a {
					case "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query":
					default:
						if s.Condition == nil {
							t.Errorf("%s %s: %s (%s) may write any item, API keys included", stage, f.Name, a, sid)
						}
					}
				}
			}
		}
		// The catalog only reads: no write but the rate-limit counters.
		if w := store.Permissions["catalog"].Writes; len(w) != 0 {
			t.Errorf("catalog writes %v", w)
		}
	}
}

// TestAPIAccessLogs: the stage logs every request as JSON (request id,
// route, status, latency, source IP) into a log group with retention.
func TestAPIAccessLogs(t *testing.T) {
	for _, stage := range stages {
		_, st := only(t, stage, "AWS::ApiGatewayV2::Stage")
		als, _ := props(st)["AccessLogSettings"].(map[string]any)
		lgID := refID(als["DestinationArn"])
		lg, ok := resources(t, stage, "AWS::Logs::LogGroup")[lgID]
		if !ok {
			t.Fatalf("%s: access logs go to %v, not a log group of the stack", stage, als["DestinationArn"])
		}
		want := 14.0
		if stage == ProdStage {
			want = 90
		}
		if got := num(props(lg)["RetentionInDays"]); got != want {
			t.Errorf("%s: access log retention %v days, want %v", stage, got, want)
		}
		var format map[string]string
		if err := json.Unmarshal([]byte(fmt.Sprint(als["Format"])), &format); err != nil {
			t.Fatalf("%s: access log format is not JSON: %v", stage, err)
		}
		for field, v := range map[string]string{"requestId": "$context.requestId", "routeKey": "$context.routeKey",
			"status": "$context.status", "latencyMs": "$context.responseLatency", "sourceIp": "$context.identity.sourceIp"} {
			if format[field] != v {
				t.Errorf("%s: access log %s = %q, want %q", stage, field, format[field], v)
			}
		}
		for field, v := range format {
			if strings.Contains(v, "querystring") || strings.Contains(v, "authorizer") || strings.Contains(v, "header") {
				t.Errorf("%s: access log %s logs %s (poll tokens and keys travel there)", stage, field, v)
			}
		}
	}
}

// TestSecureTransport: every queue and the topic deny requests without TLS.
func TestSecureTransport(t *testing.T) {
	for _, stage := range stages {
		denied := map[string]bool{} // logical id of a queue or topic
		for typ, target := range map[string]string{"AWS::SQS::QueuePolicy": "Queues", "AWS::SNS::TopicPolicy": "Topics"} {
			for _, pol := range resources(t, stage, typ) {
				for _, s := range props(pol)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
					s := s.(map[string]any)
					cond, _ := s["Condition"].(map[string]any)["Bool"].(map[string]any)
					if s["Effect"] == "Deny" && fmt.Sprint(cond["aws:SecureTransport"]) == "false" {
						for _, r := range list(props(pol)[target]) {
							denied[refID(r)] = true
						}
					}
				}
			}
		}
		for _, typ := range []string{"AWS::SQS::Queue", "AWS::SNS::Topic"} {
			for id := range resources(t, stage, typ) {
				if !denied[id] {
					t.Errorf("%s: %s %s accepts requests without TLS", stage, typ, id)
				}
			}
		}
	}
}

// topicPolicy is the policy of a topic.
func topicPolicy(t *testing.T, stage, topicID string) map[string]any {
	t.Helper()
	for _, pol := range resources(t, stage, "AWS::SNS::TopicPolicy") {
		for _, r := range list(props(pol)["Topics"]) {
			if refID(r) == topicID {
				return pol
			}
		}
	}
	t.Fatalf("%s: topic %s has no policy", stage, topicID)
	return nil
}

// TestAlarmTopicAcceptsCloudWatch: the alarm topic's policy (which replaces
// SNS's default one) lets CloudWatch publish this stage's alarms, and every
// alarm acts on that topic.
func TestAlarmTopicAcceptsCloudWatch(t *testing.T) {
	for _, stage := range stages {
		topicID := topicIDs(t, stage)["alarms"]
		pol := topicPolicy(t, stage, topicID)
		allowed := false
		for _, s := range props(pol)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			s := s.(map[string]any)
			principal, _ := s["Principal"].(map[string]any)
			svc, _ := principal["Service"].(string)
			cond, _ := s["Condition"].(map[string]any)
			like, _ := cond["ArnLike"].(map[string]any)
			if s["Effect"] == "Allow" && svc == "cloudwatch.amazonaws.com" && fmt.Sprint(s["Action"]) == "sns:Publish" &&
				flat(s["Resource"]) == "${"+topicID+"}" &&
				flat(like["aws:SourceArn"]) == "arn:${AWS::Partition}:cloudwatch:${AWS::Region}:${AWS::AccountId}:alarm:tix-"+stage+"-*" {
				allowed = true
			}
		}
		if !allowed {
			t.Errorf("%s: the alarm topic's policy does not let CloudWatch publish this stage's alarms: %v", stage, props(pol)["PolicyDocument"])
		}
		for id, a := range resources(t, stage, "AWS::CloudWatch::Alarm") {
			name, _ := props(a)["AlarmName"].(string)
			if !strings.HasPrefix(name, "tix-"+stage+"-") {
				t.Errorf("%s: alarm %s is named %q, outside the topic policy's tix-%s-*", stage, id, name, stage)
			}
		}
	}
}
