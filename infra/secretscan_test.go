package main

import (
	"strings"
	"testing"

	"tix/internal/store"
)

// TestSecretScanningRoute: POST /v1/secret-scanning/github reaches the
// webhooks function without an authorizer (GitHub's signature authenticates
// the report), with its own throttle; only that function may revoke keys,
// and it reads GitHub's key list, or the context's (prod here).
func TestSecretScanningRoute(t *testing.T) {
	for _, stage := range stages {
		checkOwnRoute(t, stage, "POST /secret-scanning/github", "webhooks", SecretScanningRateLimit, SecretScanningBurstLimit)
		_, st := only(t, stage, "AWS::ApiGatewayV2::Stage")
		if n := len(props(st)["RouteSettings"].(map[string]any)); n != 2 {
			t.Errorf("%s: %d routes with a throttle of their own, want 2 (the bank's and GitHub's)", stage, n)
		}
		want := "https://api.github.com/meta/public_keys/secret_scanning"
		if stage == ProdStage {
			want = prodSecretScanningKeysURL
		}
		all := templates[stage]["Resources"].(map[string]any)
		for name, id := range functionIDs(t, stage) {
			vars := props(all[id].(map[string]any))["Environment"].(map[string]any)["Variables"].(map[string]any)
			got, has := vars["TIX_SECRET_SCANNING_KEYS_URL"]
			if name == "webhooks" && got != want {
				t.Errorf("%s: webhooks TIX_SECRET_SCANNING_KEYS_URL = %v, want %s", stage, got, want)
			}
			if name != "webhooks" && has {
				t.Errorf("%s: %s gets TIX_SECRET_SCANNING_KEYS_URL it never uses", stage, name)
			}
		}
	}
	for _, f := range Functions {
		if store.Permissions[f.Name].RevokeKeys != (f.Name == Routes["POST "+SecretScanningRoutePath]) {
			t.Errorf("%s: RevokeKeys %v; only the function serving the secret scanning route revokes keys", f.Name, store.Permissions[f.Name].RevokeKeys)
		}
	}
	for _, bad := range []string{"http://keys.example/list", "keys.example", "https://user:pw@keys.example/list"} {
		if _, err := checkSecretScanning(&TixStackProps{SecretScanningKeysURL: bad}); err == nil || !strings.Contains(err.Error(), "secretScanningKeysUrl") {
			t.Errorf("secretScanningKeysUrl %q: %v, want refused", bad, err)
		}
	}
	if err := CheckSettings(map[string]string{"TIX_SECRET_SCANNING_KEYS_URL": "https://x.example/k"}); err == nil ||
		!strings.Contains(err.Error(), "secretScanningKeysUrl") {
		t.Errorf("the key list URL as a setting: %v, want refused (it is the context's)", err)
	}
}
