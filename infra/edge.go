package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfrontorigins"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/api"
)

// The optional edge (context edge=true; docs/aws.md, Preparing an on-sale): a
// CloudFront distribution in front of the HTTP API with an AWS WAF web ACL of
// per-IP rate-based rules and AWS's managed IP reputation and known-bad-input
// rules. Nothing is cached; every method and viewer header but Host reaches
// the API. CloudFront adds a secret origin header (api.EdgeSecretHeader, the
// value generated in Secrets Manager); the HTTP functions read it at start
// (TIX_EDGE_SECRET_ARN) and take the client's address from
// CloudFront-Viewer-Address only for requests that carry it.
//
// A web ACL for CloudFront must live in us-east-1. A stack in us-east-1 makes
// its own; a stack elsewhere takes one by ARN (context edgeWebAclArn), made by
// the stack tix-<stage>-edge-waf that `cdk` synthesizes for that purpose in
// us-east-1 (NewEdgeWAFStack). No cross-region custom resource.

// Edge configures the edge of one stage.
type Edge struct {
	On bool
	// WebACLArn is a CLOUDFRONT-scope web ACL made elsewhere (its region is
	// us-east-1). Empty: the stack makes one, which needs the stack in us-east-1.
	WebACLArn string
	// RateLimit is the requests one IP may send in EdgeRateWindow on any
	// route but the bank's; WriteRateLimit the order and hold creations
	// (POST /v1/orders, POST /v1/seat-holds). 0 takes the defaults.
	RateLimit, WriteRateLimit int
	// Direct keeps the execute-api URL open to keyed requests (TIX_EDGE_ONLY
	// false); by default they must come through the edge.
	Direct bool
}

// Edge defaults. The web ACL's limits are a coarse outer bound per address,
// above the app's per-key, per-client budgets (TIX_RATE_IP_*): many buyers
// can share one address (mobile carriers' NAT, offices), so they catch
// floods, not buyers.
const (
	EdgeRateWindow     = 60   // seconds: WAF's evaluation window of the rate-based rules
	EdgeRateLimit      = 1000 // requests per IP per window, every route but the bank's
	EdgeWriteRateLimit = 120  // order and hold creations per IP per window
	edgeRegion         = "us-east-1"
	// MinWAFRateLimit is the lowest limit a WAF rate-based rule takes.
	MinWAFRateLimit = 10
)

var webACLArnRe = regexp.MustCompile(`^arn:aws[a-z-]*:wafv2:us-east-1:\d{12}:global/webacl/[A-Za-z0-9_-]+/[0-9a-f-]+$`)

// ParseEdge reads the edge context values through get (nil or "" when unset):
// edge, edgeWebAclArn, edgeRateLimit, edgeWriteRateLimit, edgeDirect.
func ParseEdge(get func(name string) any) (Edge, error) {
	str := func(name string) string {
		switch v := get(name).(type) {
		case nil:
			return ""
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		default:
			return strings.TrimSpace(fmt.Sprint(v))
		}
	}
	var e Edge
	var errs []string
	flag := func(name string) bool {
		switch s := str(name); s {
		case "", "false":
			return false
		case "true":
			return true
		default:
			errs = append(errs, fmt.Sprintf("%s: want true or false, got %q", name, s))
			return false
		}
	}
	e.On, e.Direct = flag("edge"), flag("edgeDirect")
	e.WebACLArn = str("edgeWebAclArn")
	for name, p := range map[string]*int{"edgeRateLimit": &e.RateLimit, "edgeWriteRateLimit": &e.WriteRateLimit} {
		if s := str(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < MinWAFRateLimit {
				errs = append(errs, fmt.Sprintf("%s: want a whole number of requests per IP per %d s, at least %d, got %q", name, EdgeRateWindow, MinWAFRateLimit, s))
			}
			*p = n
		}
	}
	if !e.On && (e.WebACLArn != "" || e.RateLimit != 0 || e.WriteRateLimit != 0 || e.Direct) {
		errs = append(errs, "edgeWebAclArn, edgeRateLimit, edgeWriteRateLimit and edgeDirect need edge=true")
	}
	if e.WebACLArn != "" && !webACLArnRe.MatchString(e.WebACLArn) {
		errs = append(errs, fmt.Sprintf("edgeWebAclArn %q: want the ARN of a CLOUDFRONT-scope web ACL (arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>)", e.WebACLArn))
	}
	if len(errs) > 0 {
		return Edge{}, fmt.Errorf("edge context: %s", strings.Join(errs, "; "))
	}
	return e, nil
}

// limits are the rate-based rules' limits.
func (e Edge) limits() (all, writes float64) {
	return orDefault(e.RateLimit, EdgeRateLimit), orDefault(e.WriteRateLimit, EdgeWriteRateLimit)
}

// NeedsWAFStack: the stage's web ACL cannot be made in its own stack (not in
// us-east-1) and none was given by ARN.
func (e Edge) NeedsWAFStack(region string) bool {
	return e.On && e.WebACLArn == "" && region != edgeRegion
}

// checkEdge refuses an edge whose web ACL the stack cannot make (a stack
// outside us-east-1, or of no known region, without edgeWebAclArn).
func checkEdge(props *TixStackProps) error {
	e := props.Edge
	if !e.On || e.WebACLArn != "" {
		return nil
	}
	region := ""
	if props.Env != nil && props.Env.Region != nil {
		region = *props.Env.Region
	}
	if e.NeedsWAFStack(region) {
		return fmt.Errorf("edge: a CloudFront web ACL must be in %s: deploy the stack tix-%s-edge-waf (cdk synthesizes it with -c edge=true) and pass its WebAclArn output as -c edgeWebAclArn=..., or deploy this stack in %s (CDK_DEPLOY_REGION)", edgeRegion, props.Stage, edgeRegion)
	}
	return nil
}

// edge puts the distribution in front of the stage's API and returns it.
func (b *build) edge(e Edge, stage awsapigatewayv2.HttpStage, fns map[string]awslambda.Function, key awskms.IKey) awscloudfront.Distribution {
	webACL := jsii.String(e.WebACLArn)
	if e.WebACLArn == "" {
		webACL = newWebACL(b.stack, b.prefix, e).AttrArn()
	}
	secret := awssecretsmanager.NewCfnSecret(b.stack, jsii.String("EdgeSecret"), &awssecretsmanager.CfnSecretProps{
		Name:        jsii.String(b.prefix + "/edge-secret"),
		Description: jsii.String("tix " + b.stage + ": TIX_EDGE_SECRET, the origin header CloudFront adds to prove a request came through the edge"),
		KmsKeyId:    key.KeyArn(),
		GenerateSecretString: &awssecretsmanager.CfnSecret_GenerateSecretStringProperty{
			PasswordLength: jsii.Number(48), ExcludePunctuation: jsii.Bool(true), IncludeSpace: jsii.Bool(false),
		},
	})
	secret.ApplyRemovalPolicy(b.removal, nil)
	// CloudFormation resolves the dynamic reference at deploy time: the value
	// is in CloudFront's origin configuration, never in the template.
	value := awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("{{resolve:secretsmanager:"), secret.Ref(), jsii.String(":SecretString:::}}")})
	origin := awscloudfrontorigins.NewHttpOrigin(
		awscdk.Fn_Join(jsii.String(""), &[]*string{stage.Api().ApiId(), jsii.String(".execute-api."), b.stack.Region(), jsii.String("."), b.stack.UrlSuffix()}),
		&awscloudfrontorigins.HttpOriginProps{
			ProtocolPolicy:     awscloudfront.OriginProtocolPolicy_HTTPS_ONLY,
			OriginSslProtocols: &[]awscloudfront.OriginSslPolicy{awscloudfront.OriginSslPolicy_TLS_V1_2},
			CustomHeaders:      &map[string]*string{api.EdgeSecretHeader: value},
		})
	dist := awscloudfront.NewDistribution(b.stack, jsii.String("Edge"), &awscloudfront.DistributionProps{
		// Standard access logs: every viewer request with its address,
		// including those the web ACL refused.
		EnableLogging: jsii.Bool(true),
		LogBucket:     b.edgeLogs(),
		LogFilePrefix: jsii.String("cloudfront/"),
		Comment:       jsii.String("tix " + b.stage + ": the API behind AWS WAF"),
		DefaultBehavior: &awscloudfront.BehaviorOptions{
			Origin:               origin,
			AllowedMethods:       awscloudfront.AllowedMethods_ALLOW_ALL(),
			ViewerProtocolPolicy: awscloudfront.ViewerProtocolPolicy_HTTPS_ONLY,
			// API responses are never cached; every viewer header but Host
			// (API Gateway routes by its own host), with CloudFront's own
			// headers such as CloudFront-Viewer-Address, reaches the API.
			CachePolicy:         awscloudfront.CachePolicy_CACHING_DISABLED(),
			OriginRequestPolicy: awscloudfront.OriginRequestPolicy_ALL_VIEWER_EXCEPT_HOST_HEADER(),
		},
		WebAclId:    webACL,
		HttpVersion: awscloudfront.HttpVersion_HTTP2_AND_3,
		EnableIpv6:  jsii.Bool(true),
		// North America, Europe and Israel: the cheapest edges; viewers
		// elsewhere are served from the nearest of them.
		PriceClass: awscloudfront.PriceClass_PRICE_CLASS_100,
	})
	nagSuppress(dist, map[string]string{
		"AwsSolutions-CFR1": "No geo restriction: a public ticketing API sells to buyers wherever they are; an organizer who needs one adds a geo match rule to the web ACL.",
		"AwsSolutions-CFR4": "The distribution serves its own *.cloudfront.net name, whose CloudFront default certificate cannot have a minimum protocol version set; a custom domain with an ACM certificate (TLSv1.2_2021) is the operator's step. The origin connection is TLS 1.2 only.",
	})
	// The HTTP functions read the secret at start; TIX_EDGE_ONLY refuses
	// keyed requests that skipped the edge.
	for fn := range httpFunctions() {
		fns[fn].AddEnvironment(jsii.String("TIX_EDGE_SECRET_ARN"), secret.Ref(), nil)
		fns[fn].AddEnvironment(jsii.String("TIX_EDGE_ONLY"), jsii.String(strconv.FormatBool(!e.Direct)), nil)
		fns[fn].AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: jsii.String("EdgeSecret"), Actions: jsii.Strings("secretsmanager:GetSecretValue"), Resources: &[]*string{secret.Ref()},
		}))
	}
	return dist
}

// edgeLogs is the bucket of the distribution's access logs. CloudFront's
// standard logs are written with an ACL, so the bucket owner takes the
// objects (BUCKET_OWNER_PREFERRED) instead of ACLs being off. Kept for
// logRetention, then expired; the bucket is retained when the stack goes (a
// bucket with objects cannot be deleted by CloudFormation) and empties itself.
func (b *build) edgeLogs() awss3.Bucket {
	days := 14.0
	if b.prod {
		days = 90
	}
	bucket := awss3.NewBucket(b.stack, jsii.String("EdgeLogs"), &awss3.BucketProps{
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_PREFERRED,
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		LifecycleRules:    &[]*awss3.LifecycleRule{{Enabled: jsii.Bool(true), Expiration: awscdk.Duration_Days(jsii.Number(days))}},
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
	})
	nagSuppress(bucket, map[string]string{
		"AwsSolutions-S1": "This bucket holds the distribution's access logs; logging its own accesses to another bucket would need a third, and so on. Access to it is through IAM only (public access blocked, TLS required).",
	})
	return bucket
}

// httpFunctions are the functions that serve routes of the API.
func httpFunctions() map[string]bool {
	out := map[string]bool{}
	for _, fn := range Routes {
		out[fn] = true
	}
	return out
}

// nagSuppress acknowledges cdk-nag rules on one resource, each with its reason
// (cdk-nag reads the cdk_nag metadata of the template's resource).
func nagSuppress(c constructs.IConstruct, reasons map[string]string) {
	var rules []any
	for _, id := range slices.Sorted(maps.Keys(reasons)) {
		rules = append(rules, map[string]any{"id": id, "reason": reasons[id]})
	}
	cfn := c.Node().DefaultChild().(awscdk.CfnResource)
	cfn.AddMetadata(jsii.String("cdk_nag"), map[string]any{"rules_to_suppress": rules})
}
