package main

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/api"
)

// The edge's syntheses (synthAll): a stage in us-east-1 that makes its own web
// ACL, a stage elsewhere that takes one by ARN (keyed requests also direct),
// and the web ACL's own stack for such a stage.
const (
	edgeStage     = "edge"
	edgeARNStage  = "edgearn"
	edgeWAFStage  = "edgewaf"
	edgeAccount   = "123456789012"
	edgeWebACLArn = "arn:aws:wafv2:us-east-1:123456789012:global/webacl/tix-edgearn-edge/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"
)

var edgeProps = Edge{On: true, RateLimit: 500, WriteRateLimit: 50}

// TestParseEdge: the context values arrive; bad ones fail the synth by name.
func TestParseEdge(t *testing.T) {
	ctx := map[string]any{"edge": "true", "edgeWebAclArn": edgeWebACLArn, "edgeRateLimit": "500", "edgeWriteRateLimit": float64(50), "edgeDirect": true}
	got, err := ParseEdge(func(n string) any { return ctx[n] })
	if want := (Edge{On: true, WebACLArn: edgeWebACLArn, RateLimit: 500, WriteRateLimit: 50, Direct: true}); err != nil || got != want {
		t.Errorf("ParseEdge = %+v, %v; want %+v", got, err, want)
	}
	if none, err := ParseEdge(func(string) any { return nil }); err != nil || none != (Edge{}) {
		t.Errorf("no context: %+v, %v; want no edge", none, err)
	}
	if all, writes := (Edge{On: true}).limits(); all != EdgeRateLimit || writes != EdgeWriteRateLimit {
		t.Errorf("default limits %v/%v", all, writes)
	}
	for name, bad := range map[string]map[string]any{
		"edge":               {"edge": "yes"},
		"edgeRateLimit":      {"edge": "true", "edgeRateLimit": "5"}, // below WAF's minimum
		"edgeWriteRateLimit": {"edge": "true", "edgeWriteRateLimit": "many"},
		"edgeWebAclArn":      {"edge": "true", "edgeWebAclArn": strings.Replace(edgeWebACLArn, "us-east-1", "eu-central-1", 1)},
		"need edge=true":     {"edgeRateLimit": "500"},
	} {
		if _, err := ParseEdge(func(n string) any { return bad[n] }); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: error %v, want one naming %s", bad, err, name)
		}
	}
}

// TestEdgeNeedsAWebACLInUSEast1: a stage outside us-east-1 (or of no known
// region) without edgeWebAclArn is refused before anything is built, with
// the way out.
func TestEdgeNeedsAWebACLInUSEast1(t *testing.T) {
	for _, env := range []*awscdk.Environment{nil, {Region: jsii.String("eu-central-1")}} {
		err := checkEdge(&TixStackProps{StackProps: awscdk.StackProps{Env: env}, Stage: "dev", Edge: Edge{On: true}})
		if err == nil || !strings.Contains(err.Error(), "tix-dev-edge-waf") || !strings.Contains(err.Error(), "edgeWebAclArn") {
			t.Errorf("env %v: %v, want the two-step way out", env, err)
		}
	}
	if err := checkEdge(&TixStackProps{StackProps: awscdk.StackProps{Env: &awscdk.Environment{Region: jsii.String("us-east-1")}}, Stage: "dev", Edge: Edge{On: true}}); err != nil {
		t.Errorf("us-east-1: %v", err)
	}
}

// TestEdgeDistribution: with the edge on, CloudFront sends every method and
// viewer header but Host to the API over TLS 1.2, caches nothing, adds the
// secret origin header from Secrets Manager (never in the template) and is
// behind the web ACL; the HTTP functions, and only they, read the secret and
// refuse direct keyed requests unless edgeDirect; dev and prod have no edge.
func TestEdgeDistribution(t *testing.T) {
	for _, stage := range stages {
		holds(t, stage+": no distribution", func() {
			tmpls[stage].ResourceCountIs(jsii.String("AWS::CloudFront::Distribution"), jsii.Number(0))
		})
		holds(t, stage+": no web ACL", func() { tmpls[stage].ResourceCountIs(jsii.String("AWS::WAFv2::WebACL"), jsii.Number(0)) })
	}
	for _, stage := range []string{edgeStage, edgeARNStage} {
		a := annotations[stage]
		// Like dev, these stages have no alarmEmail: that warning is TestNoAnnotations'.
		holds(t, stage+": no CDK warning", func() { a.HasNoWarning(jsii.String("*"), assertions.Match_Not(noAlarmEmailWarning())) })
		apiID, _ := only(t, stage, "AWS::ApiGatewayV2::Api")
		secretID := ""
		for id, s := range resources(t, stage, "AWS::SecretsManager::Secret") {
			if props(s)["Name"] == "tix-"+stage+"/edge-secret" {
				secretID = id
			}
		}
		if secretID == "" {
			t.Fatalf("%s: no edge secret", stage)
		}
		_, d := only(t, stage, "AWS::CloudFront::Distribution")
		dc := props(d)["DistributionConfig"].(map[string]any)
		b := dc["DefaultCacheBehavior"].(map[string]any)
		if b["CachePolicyId"] != "4135ea2d-6df8-44a3-9df3-4b5a84be39ad" || b["OriginRequestPolicyId"] != "b689b0a8-53d0-40ab-baf2-68738e2966ac" {
			t.Errorf("%s: cache policy %v, origin request policy %v; want CachingDisabled and AllViewerExceptHostHeader", stage, b["CachePolicyId"], b["OriginRequestPolicyId"])
		}
		if len(list(b["AllowedMethods"])) != 7 || b["ViewerProtocolPolicy"] != "https-only" {
			t.Errorf("%s: methods %v, viewer protocol %v; want all seven, https-only", stage, b["AllowedMethods"], b["ViewerProtocolPolicy"])
		}
		origins := list(dc["Origins"])
		if len(origins) != 1 {
			t.Fatalf("%s: origins %v", stage, origins)
		}
		o := origins[0].(map[string]any)
		region := map[string]string{edgeStage: "us-east-1", edgeARNStage: "eu-central-1"}[stage]
		if got, want := flat(o["DomainName"]), "${"+apiID+"}.execute-api."+region+".${AWS::URLSuffix}"; got != want {
			t.Errorf("%s: origin %s, want %s", stage, got, want)
		}
		if o["OriginPath"] != nil && o["OriginPath"] != "" {
			t.Errorf("%s: origin path %v: the viewer's /v1 is the stage's", stage, o["OriginPath"])
		}
		co := o["CustomOriginConfig"].(map[string]any)
		if co["OriginProtocolPolicy"] != "https-only" || !reflect.DeepEqual(co["OriginSSLProtocols"], []any{"TLSv1.2"}) {
			t.Errorf("%s: origin connection %v, want https-only over TLSv1.2", stage, co)
		}
		hs := list(o["OriginCustomHeaders"])
		want := "{{resolve:secretsmanager:${" + secretID + "}:SecretString:::}}"
		if len(hs) != 1 || hs[0].(map[string]any)["HeaderName"] != api.EdgeSecretHeader || flat(hs[0].(map[string]any)["HeaderValue"]) != want {
			t.Errorf("%s: origin headers %v, want %s: %s", stage, hs, api.EdgeSecretHeader, want)
		}
		wantACL := "${EdgeWebAcl.Arn}"
		if stage == edgeARNStage {
			wantACL = edgeWebACLArn
		}
		if got := flat(dc["WebACLId"]); !strings.HasPrefix(got, strings.TrimSuffix(wantACL, ".Arn}")) {
			t.Errorf("%s: web ACL %s, want %s", stage, got, wantACL)
		}
		if out := flat(templates[stage]["Outputs"].(map[string]any)["EdgeUrl"].(map[string]any)["Value"]); !strings.HasSuffix(out, ".DomainName}/v1") {
			t.Errorf("%s: output EdgeUrl %s, want https://<distribution>/v1", stage, out)
		}
		logs := dc["Logging"].(map[string]any)
		bucketID, bucket := only(t, stage, "AWS::S3::Bucket")
		if refID(logs["Bucket"]) != bucketID || logs["Prefix"] != "cloudfront/" {
			t.Errorf("%s: access logs %v, want the bucket %s", stage, logs, bucketID)
		}
		bp := props(bucket)
		if bp["OwnershipControls"] == nil || bp["PublicAccessBlockConfiguration"] == nil || bp["BucketEncryption"] == nil || bp["LifecycleConfiguration"] == nil {
			t.Errorf("%s: log bucket %v, want ownership controls, public access blocked, encryption and expiry", stage, bp)
		}
		edgeFunctionsRead(t, stage, secretID)
	}
}

// edgeFunctionsRead: the HTTP functions get the secret's ARN and
// TIX_EDGE_ONLY, and may read that secret; the others neither.
func edgeFunctionsRead(t *testing.T, stage, secretID string) {
	t.Helper()
	only := "true"
	if stage == edgeARNStage {
		only = "false"
	}
	all := templates[stage]["Resources"].(map[string]any)
	for name, id := range functionIDs(t, stage) {
		vars := props(all[id].(map[string]any))["Environment"].(map[string]any)["Variables"].(map[string]any)
		reads := false
		for _, s := range roleStatements(t, stage, name) {
			for _, r := range list(s["Resource"]) {
				reads = reads || refID(r) == secretID
			}
		}
		if !httpFunctions()[name] {
			if vars["TIX_EDGE_SECRET_ARN"] != nil || vars["TIX_EDGE_ONLY"] != nil || reads {
				t.Errorf("%s %s: serves no route but has the edge secret (%v, %v, reads %v)", stage, name, vars["TIX_EDGE_SECRET_ARN"], vars["TIX_EDGE_ONLY"], reads)
			}
			continue
		}
		if refID(vars["TIX_EDGE_SECRET_ARN"]) != secretID || vars["TIX_EDGE_ONLY"] != only || !reads {
			t.Errorf("%s %s: TIX_EDGE_SECRET_ARN %v, TIX_EDGE_ONLY %v, reads %v; want %s, %s, true", stage, name, vars["TIX_EDGE_SECRET_ARN"], vars["TIX_EDGE_ONLY"], reads, secretID, only)
		}
	}
}

// TestEdgeWebACL: the web ACL (in the us-east-1 stage, and in the web ACL's
// own stack) is CLOUDFRONT-scope, runs AWS's IP reputation and known bad
// input rules, and limits each IP: order and hold creation (POST on exactly
// those paths) tighter than every request, which leaves out the bank's
// notifications; a limited client gets 429 with the API's error envelope.
func TestEdgeWebACL(t *testing.T) {
	for stage, limits := range map[string][2]float64{edgeStage: {500, 50}, edgeWAFStage: {EdgeRateLimit, EdgeWriteRateLimit}} {
		_, acl := only(t, stage, "AWS::WAFv2::WebACL")
		p := props(acl)
		if p["Scope"] != "CLOUDFRONT" || !reflect.DeepEqual(p["DefaultAction"], map[string]any{"Allow": map[string]any{}}) {
			t.Errorf("%s: scope %v, default %v; want CLOUDFRONT, allow", stage, p["Scope"], p["DefaultAction"])
		}
		body := p["CustomResponseBodies"].(map[string]any)["rate_limited"].(map[string]any)
		var envelope struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal([]byte(body["Content"].(string)), &envelope); err != nil || envelope.Error.Code != "rate_limited" || envelope.Error.Message == "" || body["ContentType"] != "APPLICATION_JSON" {
			t.Errorf("%s: 429 body %v (%v), want the API's rate_limited envelope", stage, body, err)
		}
		rules := map[string]map[string]any{}
		for _, r := range list(p["Rules"]) {
			rules[r.(map[string]any)["Name"].(string)] = r.(map[string]any)
		}
		for _, m := range []string{"AWSManagedRulesAmazonIpReputationList", "AWSManagedRulesKnownBadInputsRuleSet"} {
			st, _ := rules[m]["Statement"].(map[string]any)["ManagedRuleGroupStatement"].(map[string]any)
			if st["VendorName"] != "AWS" || st["Name"] != m || !reflect.DeepEqual(rules[m]["OverrideAction"], map[string]any{"None": map[string]any{}}) {
				t.Errorf("%s: managed rule %s: %v", stage, m, rules[m])
			}
		}
		for name, want := range map[string]struct {
			limit float64
			scope string
		}{
			"PerIPOrderAndHoldCreation": {limits[1], `{"AndStatement":{"Statements":[{"ByteMatchStatement":{"FieldToMatch":{"Method":{}},"PositionalConstraint":"EXACTLY","SearchString":"POST","TextTransformations":[{"Priority":0,"Type":"NONE"}]}},{"RegexMatchStatement":{"FieldToMatch":{"UriPath":{}},"RegexString":"^/v1/(orders|seat-holds)/?$","TextTransformations":[{"Priority":0,"Type":"NONE"}]}}]}}`},
			"PerIPAllButBank":           {limits[0], `{"NotStatement":{"Statement":{"ByteMatchStatement":{"FieldToMatch":{"UriPath":{}},"PositionalConstraint":"STARTS_WITH","SearchString":"/v1/payment-notifications/","TextTransformations":[{"Priority":0,"Type":"NONE"}]}}}}`},
		} {
			r := rules[name]
			rb, _ := r["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)
			scope, _ := json.Marshal(rb["ScopeDownStatement"])
			if rb["AggregateKeyType"] != "IP" || num(rb["Limit"]) != want.limit || num(rb["EvaluationWindowSec"]) != EdgeRateWindow || string(scope) != want.scope {
				t.Errorf("%s: rule %s: %v; want IP, %v per %d s, scope %s", stage, name, rb, want.limit, EdgeRateWindow, want.scope)
			}
			block, _ := r["Action"].(map[string]any)["Block"].(map[string]any)["CustomResponse"].(map[string]any)
			if num(block["ResponseCode"]) != 429 || block["CustomResponseBodyKey"] != "rate_limited" {
				t.Errorf("%s: rule %s blocks with %v, want 429 rate_limited", stage, name, block)
			}
		}
		if len(rules) != 4 {
			t.Errorf("%s: rules %v, want the four", stage, rules)
		}
	}
	holds(t, "the web ACL's stack outputs its ARN", func() {
		tmpls[edgeWAFStage].HasOutput(jsii.String("WebAclArn"), like(obj{"Value": obj{"Fn::GetAtt": []any{"EdgeWebAcl", "Arn"}}}))
	})
	holds(t, "the ARN stage makes no web ACL", func() {
		tmpls[edgeARNStage].ResourceCountIs(jsii.String("AWS::WAFv2::WebACL"), jsii.Number(0))
	})
	// The paths the rules match are the router's.
	creation := regexp.MustCompile(EdgeCreationPaths)
	for path, want := range map[string]bool{"/v1/orders": true, "/v1/orders/": true, "/v1/seat-holds": true,
		"/v1/orders/preview": false, "/v1/orders/ord_1/refund": false, "/v1/events": false} {
		if creation.MatchString(path) != want {
			t.Errorf("creation rule on %s: %v, want %v", path, !want, want)
		}
	}
	if !strings.HasPrefix("/v1"+NotificationRoutePath, EdgeBankPath) {
		t.Errorf("EdgeBankPath %s does not cover the bank's route /v1%s", EdgeBankPath, NotificationRoutePath)
	}
}
