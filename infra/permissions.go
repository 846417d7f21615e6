package main

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/store"
)

// tableStatements give a function's role the table actions of
// store.Permissions[fn] and nothing more (the functions' tests record their
// DynamoDB calls and check them against the same table):
//
//   - TableRead: its item reads (GetItem, BatchGetItem) on the table;
//   - TableQuery: Query on the table and on each index, named one by one;
//   - TableWrite: its write actions on every item but the API keys
//     (dynamodb:LeadingKeys not KEY#... or KEYID#...): only the operator's
//     tixctl creates and revokes keys;
//   - KeyWrite (the dashboard only: Keys): its write actions on the API key
//     items, which it creates and revokes for its organizers as tixctl does;
//   - RateLimit (HTTP functions): UpdateItem of the rate-limit counter items
//     only (dynamodb:LeadingKeys RL#..., dynamodb:Attributes PK, SK, n, ttl),
//     which is how every request is admitted; no function writes a key item;
//   - RequestLog (HTTP functions): PutItem of the request log's items only
//     (REQLOG#...), one per request authenticated with an organizer's key;
//   - KeyIPs (HTTP functions, only with email on: mailOn): PutItem of the
//     secret keys' client-network records and owner alert jobs only
//     (KEYIP#..., EMAIL#...); with email off nothing writes them;
//   - RevokeKeys (the function serving GitHub's secret scanning reports):
//     UpdateItem of the API key items (KEY#..., KEYID#...) naming only the
//     revocation's attributes (store.RevocationAttributes): a leaked key's
//     revocation, nothing else of a key.
func tableStatements(role awsiam.Role, table awsdynamodb.Table, fn string, mailOn bool) {
	access, ok := store.Permissions[fn]
	if !ok {
		panic(fmt.Sprintf("store.Permissions has no entry for function %q", fn))
	}
	var reads []string
	query := false
	for _, a := range access.Reads {
		if a == "dynamodb:Query" {
			query = true
		} else {
			reads = append(reads, a)
		}
	}
	add := func(sid string, actions []string, resources []*string, cond map[string]any) {
		if len(actions) == 0 {
			return
		}
		ps := &awsiam.PolicyStatementProps{Sid: jsii.String(sid), Actions: jsii.Strings(actions...), Resources: &resources}
		if cond != nil {
			ps.Conditions = &cond
		}
		role.AddToPolicy(awsiam.NewPolicyStatement(ps))
	}
	tableArn := []*string{table.TableArn()}
	add("TableRead", reads, tableArn, nil)
	if query {
		res := []*string{table.TableArn()}
		for _, ix := range store.Table.Indexes {
			res = append(res, jsii.String(*table.TableArn()+"/index/"+ix.Name))
		}
		add("TableQuery", []string{"dynamodb:Query"}, res, nil)
	}
	var keyItems []string
	for _, p := range store.KeyPrefixes {
		keyItems = append(keyItems, p+"*")
	}
	add("TableWrite", access.Writes, tableArn, map[string]any{
		"ForAllValues:StringNotLike": map[string]any{"dynamodb:LeadingKeys": keyItems},
	})
	if access.KeyIPs && mailOn {
		var prefixes []string
		for _, p := range store.KeyIPPrefixes {
			prefixes = append(prefixes, p+"*")
		}
		add("KeyIPs", []string{"dynamodb:PutItem"}, tableArn, map[string]any{
			"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": prefixes},
		})
	}
	if access.RevokeKeys {
		add("RevokeKeys", []string{"dynamodb:UpdateItem"}, tableArn, map[string]any{
			"ForAllValues:StringLike": map[string]any{
				"dynamodb:LeadingKeys": keyItems,
				"dynamodb:Attributes":  store.RevocationAttributes,
			},
		})
	}
	if access.Keys {
		// The dashboard creates and revokes its organizers' keys (the same
		// store calls as tixctl): write actions on the key items only.
		add("KeyWrite", access.Writes, tableArn, map[string]any{
			"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": keyItems},
		})
	}
	if access.RateLimit {
		add("RateLimit", []string{"dynamodb:UpdateItem"}, tableArn, map[string]any{
			"ForAllValues:StringLike": map[string]any{
				"dynamodb:LeadingKeys": []string{store.RateLimitKeyPrefix + "*"},
				"dynamodb:Attributes":  store.RateLimitAttributes,
			},
		})
		add("RequestLog", []string{"dynamodb:PutItem"}, tableArn, map[string]any{
			"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []string{store.RequestLogKeyPrefix + "*"}},
		})
	}
}

// AccessLogFields are the API's access log, one JSON object per request. The
// path carries no query string, so poll tokens passed there are not logged.
var AccessLogFields = map[string]string{
	"requestId":            "$context.requestId",
	"requestTime":          "$context.requestTime",
	"routeKey":             "$context.routeKey",
	"method":               "$context.httpMethod",
	"path":                 "$context.path",
	"status":               "$context.status",
	"latencyMs":            "$context.responseLatency",
	"integrationLatencyMs": "$context.integrationLatency",
	"integrationError":     "$context.integrationErrorMessage",
	"sourceIp":             "$context.identity.sourceIp",
	"userAgent":            "$context.identity.userAgent",
	"responseLength":       "$context.responseLength",
}

// apiAccessLogs turns on the stage's access log into a log group of its own
// with the stack's retention.
func apiAccessLogs(stack awscdk.Stack, apiStage awsapigatewayv2.HttpStage, prefix string, retention awslogs.RetentionDays, removal awscdk.RemovalPolicy) awslogs.LogGroup {
	logs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		LogGroupName:  jsii.String("/aws/apigateway/" + prefix + "-access"),
		Retention:     retention,
		RemovalPolicy: removal,
	})
	format, err := json.Marshal(AccessLogFields)
	if err != nil {
		panic(err)
	}
	// HTTP APIs publish no 429 metric: the access log counts them (api-429 alarm).
	awslogs.NewMetricFilter(stack, jsii.String("Api429Metric"), &awslogs.MetricFilterProps{
		LogGroup:        logs,
		FilterPattern:   awslogs.FilterPattern_StringValue(jsii.String("$.status"), jsii.String("="), jsii.String("429")),
		MetricNamespace: jsii.String(prefix),
		MetricName:      jsii.String(Api429Metric),
		MetricValue:     jsii.String("1"),
	})
	cfn := apiStage.Node().DefaultChild().(awsapigatewayv2.CfnStage)
	cfn.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: logs.LogGroupArn(),
		Format:         jsii.String(string(format)),
	})
	return logs
}
