package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// EdgeWAFProps configure the stack that holds only a stage's web ACL, in
// us-east-1, for a stage deployed elsewhere.
type EdgeWAFProps struct {
	// Account is the account to deploy to; empty: environment-agnostic
	// account (the region is always us-east-1).
	Account string
	Stage   string
	Edge    Edge
}

// NewEdgeWAFStack is tix-<stage>-edge-waf: the stage's CLOUDFRONT-scope web
// ACL in us-east-1, its ARN in the output WebAclArn for -c edgeWebAclArn.
func NewEdgeWAFStack(scope constructs.Construct, id string, props *EdgeWAFProps) (awscdk.Stack, error) {
	if !stageRe.MatchString(props.Stage) {
		return nil, fmt.Errorf("stage %q: use 1-20 lowercase letters, digits or '-', starting with a letter (dev, prod, ...)", props.Stage)
	}
	env := &awscdk.Environment{Region: jsii.String(edgeRegion)}
	if props.Account != "" {
		env.Account = jsii.String(props.Account)
	}
	stack := awscdk.NewStack(scope, jsii.String(id), &awscdk.StackProps{
		Env:         env,
		Description: jsii.String(fmt.Sprintf("tix %s: the AWS WAF web ACL of the stage's CloudFront edge (us-east-1)", props.Stage)),
	})
	awscdk.Tags_Of(stack).Add(jsii.String("project"), jsii.String("tix"), nil)
	awscdk.Tags_Of(stack).Add(jsii.String("stage"), jsii.String(props.Stage), nil)
	acl := newWebACL(stack, "tix-"+props.Stage, props.Edge)
	awscdk.NewCfnOutput(stack, jsii.String("WebAclArn"), &awscdk.CfnOutputProps{
		Value:       acl.AttrArn(),
		Description: jsii.String("Pass to the stage's deploy: -c edge=true -c edgeWebAclArn=<this>"),
	})
	return stack, nil
}

// newWebACL is the edge's web ACL (CLOUDFRONT scope, so us-east-1): AWS's
// IP reputation list and known bad inputs, then two rate-based rules per
// client IP over EdgeRateWindow: order and hold creation, and every request
// but the bank's notifications (a few bank addresses post every payment's
// notification: never rate-limited by IP; the API stage throttles that route
// on its own). A rate-limited client gets 429 with the API's error envelope.
func newWebACL(scope constructs.Construct, prefix string, e Edge) awswafv2.CfnWebACL {
	all, writes := e.limits()
	visibility := func(metric string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
		return &awswafv2.CfnWebACL_VisibilityConfigProperty{
			CloudWatchMetricsEnabled: jsii.Bool(true), SampledRequestsEnabled: jsii.Bool(true), MetricName: jsii.String(metric),
		}
	}
	none := []*awswafv2.CfnWebACL_TextTransformationProperty{{Priority: jsii.Number(0), Type: jsii.String("NONE")}}
	path := &awswafv2.CfnWebACL_FieldToMatchProperty{UriPath: map[string]any{}}
	managed := func(priority float64, name string) *awswafv2.CfnWebACL_RuleProperty {
		return &awswafv2.CfnWebACL_RuleProperty{
			Name: jsii.String(name), Priority: jsii.Number(priority),
			Statement: &awswafv2.CfnWebACL_StatementProperty{ManagedRuleGroupStatement: &awswafv2.CfnWebACL_ManagedRuleGroupStatementProperty{
				VendorName: jsii.String("AWS"), Name: jsii.String(name)}},
			OverrideAction:   &awswafv2.CfnWebACL_OverrideActionProperty{None: map[string]any{}},
			VisibilityConfig: visibility(name),
		}
	}
	tooMany := &awswafv2.CfnWebACL_RuleActionProperty{Block: &awswafv2.CfnWebACL_BlockActionProperty{
		CustomResponse: &awswafv2.CfnWebACL_CustomResponseProperty{ResponseCode: jsii.Number(429), CustomResponseBodyKey: jsii.String("rate_limited")}}}
	perIP := func(priority float64, name string, limit float64, scopeDown *awswafv2.CfnWebACL_StatementProperty) *awswafv2.CfnWebACL_RuleProperty {
		return &awswafv2.CfnWebACL_RuleProperty{
			Name: jsii.String(name), Priority: jsii.Number(priority),
			Statement: &awswafv2.CfnWebACL_StatementProperty{RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{
				AggregateKeyType: jsii.String("IP"), Limit: jsii.Number(limit), EvaluationWindowSec: jsii.Number(EdgeRateWindow),
				ScopeDownStatement: scopeDown}},
			Action:           tooMany,
			VisibilityConfig: visibility(name),
		}
	}
	creation := &awswafv2.CfnWebACL_StatementProperty{AndStatement: &awswafv2.CfnWebACL_AndStatementProperty{Statements: []any{
		&awswafv2.CfnWebACL_StatementProperty{ByteMatchStatement: &awswafv2.CfnWebACL_ByteMatchStatementProperty{
			FieldToMatch: &awswafv2.CfnWebACL_FieldToMatchProperty{Method: map[string]any{}}, PositionalConstraint: jsii.String("EXACTLY"),
			SearchString: jsii.String("POST"), TextTransformations: none}},
		&awswafv2.CfnWebACL_StatementProperty{RegexMatchStatement: &awswafv2.CfnWebACL_RegexMatchStatementProperty{
			FieldToMatch: path, RegexString: jsii.String(EdgeCreationPaths), TextTransformations: none}},
	}}}
	notBank := &awswafv2.CfnWebACL_StatementProperty{NotStatement: &awswafv2.CfnWebACL_NotStatementProperty{
		Statement: &awswafv2.CfnWebACL_StatementProperty{ByteMatchStatement: &awswafv2.CfnWebACL_ByteMatchStatementProperty{
			FieldToMatch: path, PositionalConstraint: jsii.String("STARTS_WITH"),
			SearchString: jsii.String(EdgeBankPath), TextTransformations: none}}}}
	return awswafv2.NewCfnWebACL(scope, jsii.String("EdgeWebAcl"), &awswafv2.CfnWebACLProps{
		Name:             jsii.String(prefix + "-edge"),
		Description:      jsii.String("tix: per-IP rate limits and AWS managed rules in front of the API"),
		Scope:            jsii.String("CLOUDFRONT"),
		DefaultAction:    &awswafv2.CfnWebACL_DefaultActionProperty{Allow: map[string]any{}},
		VisibilityConfig: visibility(prefix + "-edge"),
		CustomResponseBodies: map[string]any{"rate_limited": &awswafv2.CfnWebACL_CustomResponseBodyProperty{
			ContentType: jsii.String("APPLICATION_JSON"),
			Content:     jsii.String(`{"error":{"code":"rate_limited","message":"Too many requests from your address; wait a minute and retry"}}`),
		}},
		Rules: []any{
			managed(0, "AWSManagedRulesAmazonIpReputationList"),
			managed(1, "AWSManagedRulesKnownBadInputsRuleSet"),
			perIP(2, "PerIPOrderAndHoldCreation", writes, creation),
			perIP(3, "PerIPAllButBank", all, notBank),
		},
	})
}

// Paths the web ACL matches (the viewer's path, with the stage's /v1).
const (
	// EdgeCreationPaths: POST here creates an order or a hold (the router
	// drops one trailing slash).
	EdgeCreationPaths = `^/v1/(orders|seat-holds)/?$`
	// EdgeBankPath: the bank's notifications.
	EdgeBankPath = "/v1/payment-notifications/"
)
