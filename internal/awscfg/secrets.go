package awscfg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// On AWS the secrets are not in the functions' environment: the stack passes
// the ARN of a Secrets Manager secret in <NAME>_ARN, and the function reads the
// value once at start. The local runner and tixctl set the values themselves.
const (
	CursorSecretARN = "TIX_CURSOR_SECRET_ARN"   // plain secret string: TIX_CURSOR_SECRET
	KeyringARN      = "TIX_WEBHOOK_KEYRING_ARN" // JSON object {"k1": "<base64 of 32 bytes>", ...}
	EdgeSecretARN   = "TIX_EDGE_SECRET_ARN"     // plain secret string: TIX_EDGE_SECRET (with -c edge=true)
	// KeyringIDs orders the keyring secret's ids, the sealing one first
	// ("k2,k1"); it may be empty when the secret holds one key.
	KeyringIDs = "TIX_WEBHOOK_KEYRING_IDS"
)

// SecretGetter is the one Secrets Manager call the functions make.
type SecretGetter interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// secretTimeout bounds reading the secrets at start (SDK retries included).
const secretTimeout = 5 * time.Second

// SecretsFromEnv is ResolveSecrets with a Secrets Manager client built from the
// environment's credentials, and only when a secret ARN is set: the local
// stack and the tests never call AWS.
func SecretsFromEnv(ctx context.Context, getenv func(string) string) (func(string) string, error) {
	arn := getenv(CursorSecretARN)
	for _, name := range []string{KeyringARN, EdgeSecretARN} {
		if arn == "" {
			arn = getenv(name)
		}
	}
	if arn == "" {
		return ResolveSecrets(ctx, getenv, nil)
	}
	region := getenv("AWS_REGION")
	if parts := strings.Split(arn, ":"); len(parts) > 3 && parts[3] != "" {
		region = parts[3] // arn:aws:secretsmanager:<region>:<account>:secret:<name>
	}
	cfg, err := Load(ctx, region, "")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, secretTimeout)
	defer cancel()
	return ResolveSecrets(ctx, getenv, secretsmanager.NewFromConfig(cfg))
}

// ResolveSecrets returns getenv with TIX_CURSOR_SECRET, TIX_WEBHOOK_KEYRING
// and TIX_EDGE_SECRET read from Secrets Manager through sm when their _ARN variable is set. A
// variable set both ways is an error, so that a stale value cannot shadow the
// secret.
func ResolveSecrets(ctx context.Context, getenv func(string) string, sm SecretGetter) (func(string) string, error) {
	values := map[string]string{}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	// fetch reads one secret; all are read at once (one round trip at start).
	fetch := func(name, arnVar string, use func(string) (string, error)) {
		arn := strings.TrimSpace(getenv(arnVar))
		switch {
		case arn == "":
			return
		case getenv(name) != "":
			fail(fmt.Errorf("%s and %s are both set: set one", name, arnVar))
			return
		case sm == nil:
			fail(fmt.Errorf("%s: no Secrets Manager client", arnVar))
			return
		}
		wg.Go(func() {
			out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
			if err != nil {
				fail(fmt.Errorf("%s=%s: read the secret: %w", arnVar, arn, err))
				return
			}
			if out.SecretString == nil || *out.SecretString == "" {
				fail(fmt.Errorf("%s=%s: the secret has no string value", arnVar, arn))
				return
			}
			v, err := use(*out.SecretString)
			if err != nil {
				fail(fmt.Errorf("%s: %w", arnVar, err))
				return
			}
			mu.Lock()
			values[name] = v
			mu.Unlock()
		})
	}
	fetch("TIX_CURSOR_SECRET", CursorSecretARN, func(v string) (string, error) { return v, nil })
	fetch("TIX_EDGE_SECRET", EdgeSecretARN, func(v string) (string, error) { return v, nil })
	fetch("TIX_WEBHOOK_KEYRING", KeyringARN, func(v string) (string, error) { return Keyring(v, getenv(KeyringIDs)) })
	wg.Wait()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return func(name string) string {
		if v, ok := values[name]; ok {
			return v
		}
		return getenv(name)
	}, nil
}

// Keyring turns the keyring secret, a JSON object of id -> base64 key, into
// TIX_WEBHOOK_KEYRING's "id:key,id:key" in the order of ids (comma-separated,
// the sealing id first). ids may be empty when the object holds one key.
func Keyring(secret, ids string) (string, error) {
	var keys map[string]string
	if err := json.Unmarshal([]byte(secret), &keys); err != nil {
		return "", errors.New(`the keyring secret must be a JSON object of strings such as {"k1": "<base64 of 32 bytes>"}`)
	}
	var order []string
	for _, id := range strings.Split(ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			order = append(order, id)
		}
	}
	if len(order) == 0 {
		if len(keys) != 1 {
			return "", fmt.Errorf("the keyring secret holds %d keys: %s must name them, the sealing one first", len(keys), KeyringIDs)
		}
		for id := range keys {
			order = append(order, id)
		}
	}
	ring := make([]string, 0, len(order))
	for _, id := range order {
		k, ok := keys[id]
		if !ok || k == "" {
			return "", fmt.Errorf("%s names %q, which the keyring secret does not hold", KeyringIDs, id)
		}
		ring = append(ring, id+":"+k)
	}
	return strings.Join(ring, ","), nil
}
