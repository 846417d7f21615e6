// Package awscfg builds the AWS SDK configuration that the DynamoDB and SQS
// adapters share: dummy static credentials against a local emulator; in a
// Lambda build (the lambda.norpc tag of `make build`), the credentials and
// region the Lambda runtime puts in the environment; elsewhere (tixctl, local
// tools against AWS) the SDK's default chain (profiles, SSO, instance roles).
//
// The Lambda build leaves the default chain out on purpose: it links STS, SSO
// and the shared-config parser, about a megabyte a function that Lambda never
// uses, and the bootstraps must stay under 11 MB.
package awscfg

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Load returns the configuration for region; endpoint non-empty means a local
// emulator.
func Load(ctx context.Context, region, endpoint string) (aws.Config, error) {
	if endpoint != "" {
		return aws.Config{
			Region:      orDefault(region),
			Credentials: credentials.NewStaticCredentialsProvider(EmulatorKeyID(), "local", ""),
		}, nil
	}
	return load(ctx, region)
}

// EmulatorKeyID is the access key id sent to a local emulator:
// TIX_EMULATOR_KEY_ID, or "local". DynamoDB Local started without -sharedDb
// (make test's) keeps one database per key id and region, each behind its own
// lock, so test processes with their own key id do not wait on each other's
// writes; the stack of make run shares one database whatever the key id.
func EmulatorKeyID() string {
	if id := os.Getenv("TIX_EMULATOR_KEY_ID"); id != "" {
		return id
	}
	return "local"
}

func orDefault(region string) string {
	if region == "" {
		return "us-east-1"
	}
	return region
}
