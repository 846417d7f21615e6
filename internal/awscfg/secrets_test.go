package awscfg_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"tix/internal/awscfg"
	"tix/internal/config"
)

const (
	cursorARN  = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tix-dev/cursor-secret-AbCdEf"
	keyringARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tix-dev/webhook-keyring-GhIjKl"
	// 43 characters of [A-Za-z0-9]: what the stack's generated keyring holds.
	key1 = "Qm9vdHN0cmFwS2V5T25lMzJieXRlc0xvbmdBQUFBQUF"
	key2 = "U2Vjb25kS2V5VHdvMzJieXRlc0xvbmdCQkJCQkJCQkJ"
)

// fakeSecretsManager speaks Secrets Manager's wire protocol (AWS JSON 1.1 over
// POST /, the operation in X-Amz-Target, SigV4-signed for service
// "secretsmanager") for GetSecretValue only, from a map of ARN -> value.
type fakeSecretsManager struct {
	secrets map[string]string
	mu      sync.Mutex
	calls   []string // SecretId of each call
}

func (f *fakeSecretsManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/":
		fail(404, "UnknownOperationException", r.Method+" "+r.URL.Path)
		return
	case r.Header.Get("Content-Type") != "application/x-amz-json-1.1":
		fail(400, "SerializationException", "content type "+r.Header.Get("Content-Type"))
		return
	case r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue":
		fail(400, "UnknownOperationException", r.Header.Get("X-Amz-Target"))
		return
	case !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=test/") ||
		!strings.Contains(r.Header.Get("Authorization"), "/eu-west-1/secretsmanager/aws4_request"):
		fail(403, "InvalidSignatureException", "unsigned or signed for another service: "+r.Header.Get("Authorization"))
		return
	}
	var in struct{ SecretId string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.SecretId == "" {
		fail(400, "ValidationException", "SecretId is required")
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, in.SecretId)
	f.mu.Unlock()
	v, ok := f.secrets[in.SecretId]
	if !ok {
		fail(400, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"ARN": in.SecretId, "Name": in.SecretId[strings.LastIndex(in.SecretId, ":")+1:],
		"SecretString": v, "VersionId": "00000000-0000-0000-0000-000000000001",
		"VersionStages": []string{"AWSCURRENT"}, "CreatedDate": 1.7e9,
	})
}

// client is a real Secrets Manager client pointed at the fake.
func client(t *testing.T, f *fakeSecretsManager) *secretsmanager.Client {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return secretsmanager.NewFromConfig(aws.Config{
		Region:      "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	}, func(o *secretsmanager.Options) { o.BaseEndpoint = aws.String(srv.URL) })
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveSecrets_ReadsBothSecretsByARN(t *testing.T) {
	f := &fakeSecretsManager{secrets: map[string]string{
		cursorARN:  "cursor-secret-from-secrets-manager",
		keyringARN: `{"k1":"` + key1 + `","k2":"` + key2 + `"}`,
	}}
	getenv, err := awscfg.ResolveSecrets(context.Background(), env(map[string]string{
		awscfg.CursorSecretARN: cursorARN, awscfg.KeyringARN: keyringARN, awscfg.KeyringIDs: "k2,k1",
		"TIX_TABLE": "tix-dev",
	}), client(t, f))
	if err != nil {
		t.Fatal(err)
	}
	if got := getenv("TIX_CURSOR_SECRET"); got != "cursor-secret-from-secrets-manager" {
		t.Errorf("TIX_CURSOR_SECRET = %q", got)
	}
	if got, want := getenv("TIX_WEBHOOK_KEYRING"), "k2:"+key2+",k1:"+key1; got != want {
		t.Errorf("TIX_WEBHOOK_KEYRING = %q, want %q (the sealing id first)", got, want)
	}
	if getenv("TIX_TABLE") != "tix-dev" {
		t.Error("other variables must pass through")
	}
	if len(f.calls) != 2 {
		t.Errorf("GetSecretValue calls %v, want one per secret", f.calls)
	}
	// What the functions do next: the configuration accepts the values.
	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatalf("config.Load over the secrets: %v", err)
	}
	if cfg.CursorSecret != "cursor-secret-from-secrets-manager" {
		t.Errorf("config cursor secret %q", cfg.CursorSecret)
	}
}

func TestResolveSecrets_PlainVariablesNeedNoSecretsManager(t *testing.T) {
	vars := map[string]string{"TIX_CURSOR_SECRET": "local-cursor-secret-0123", "TIX_WEBHOOK_KEYRING": config.LocalKeyring}
	getenv, err := awscfg.SecretsFromEnv(context.Background(), env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if getenv("TIX_CURSOR_SECRET") != vars["TIX_CURSOR_SECRET"] || getenv("TIX_WEBHOOK_KEYRING") != config.LocalKeyring {
		t.Error("plain variables must be used as they are")
	}
}

func TestResolveSecrets_Errors(t *testing.T) {
	f := &fakeSecretsManager{secrets: map[string]string{
		cursorARN:  "cursor-secret-from-secrets-manager",
		keyringARN: `{"k1":"` + key1 + `","k2":"` + key2 + `"}`,
	}}
	sm := client(t, f)
	for name, tc := range map[string]struct {
		vars map[string]string
		want []string
	}{
		"unknown secret": {map[string]string{awscfg.CursorSecretARN: cursorARN + "x"},
			[]string{awscfg.CursorSecretARN, "ResourceNotFoundException"}},
		"set both ways": {map[string]string{awscfg.CursorSecretARN: cursorARN, "TIX_CURSOR_SECRET": "also-set-in-the-environment"},
			[]string{"TIX_CURSOR_SECRET and " + awscfg.CursorSecretARN}},
		"two keys, no order": {map[string]string{awscfg.KeyringARN: keyringARN},
			[]string{awscfg.KeyringIDs + " must name them"}},
		"unknown key id": {map[string]string{awscfg.KeyringARN: keyringARN, awscfg.KeyringIDs: "k3,k1"},
			[]string{`"k3"`}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := awscfg.ResolveSecrets(context.Background(), env(tc.vars), sm)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestKeyring_OneKeyNeedsNoOrder(t *testing.T) {
	got, err := awscfg.Keyring(`{"k1":"`+key1+`"}`, "")
	if err != nil || got != "k1:"+key1 {
		t.Fatalf("Keyring = %q, %v", got, err)
	}
	if _, err := awscfg.Keyring("k1:"+key1, ""); err == nil {
		t.Error("a keyring secret that is not a JSON object was accepted")
	}
}

// TestResolveSecrets_EdgeSecret: with the edge on, the stack passes
// TIX_EDGE_SECRET_ARN; the value is read like the cursor secret and the
// configuration takes it.
func TestResolveSecrets_EdgeSecret(t *testing.T) {
	const edgeARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tix-dev/edge-secret-MnOpQr"
	edge := strings.Repeat("e", 48)
	f := &fakeSecretsManager{secrets: map[string]string{cursorARN: "cursor-secret-from-secrets-manager", edgeARN: edge}}
	getenv, err := awscfg.ResolveSecrets(context.Background(), env(map[string]string{
		awscfg.CursorSecretARN: cursorARN, awscfg.EdgeSecretARN: edgeARN, "TIX_EDGE_ONLY": "true",
		"TIX_WEBHOOK_KEYRING": config.LocalKeyring,
	}), client(t, f))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatalf("config.Load over the secrets: %v", err)
	}
	if cfg.Edge.Secret != edge || !cfg.Edge.Only {
		t.Errorf("edge %+v, want the secret's value and only", cfg.Edge)
	}
	if _, err := awscfg.ResolveSecrets(context.Background(), env(map[string]string{
		awscfg.EdgeSecretARN: edgeARN, "TIX_EDGE_SECRET": edge}), client(t, f)); err == nil || !strings.Contains(err.Error(), "TIX_EDGE_SECRET and "+awscfg.EdgeSecretARN) {
		t.Errorf("set both ways: %v, want an error naming both", err)
	}
}
