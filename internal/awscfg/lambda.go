//go:build lambda.norpc

package awscfg

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// load reads what the Lambda runtime sets for the function's execution role:
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION.
// They stay valid for the life of the execution environment.
func load(_ context.Context, region string) (aws.Config, error) {
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return aws.Config{}, errors.New("no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): this build runs only on Lambda or against a local endpoint")
	}
	if region == "" {
		region = os.Getenv("AWS_REGION")
	}
	return aws.Config{
		Region:      orDefault(region),
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN"))),
	}, nil
}
