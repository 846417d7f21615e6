package dashboard

import (
	"strings"
	"testing"
)

// The relying party follows the public URL's host, except that a loopback
// address becomes localhost (browsers refuse an IP address as a relying
// party) and another IP address needs TIX_WEBAUTHN_RP_ID; configured
// origins must sit on the relying party or below it.
func TestPasskeyParty(t *testing.T) {
	for _, c := range []struct {
		public, rpID, origins string
		wantID, wantOrigins   string
		wantErr               string
	}{
		{public: "http://127.0.0.1:8080", wantID: "localhost", wantOrigins: "http://localhost:8080"},
		{public: "http://[::1]:8080", wantID: "localhost", wantOrigins: "http://localhost:8080"},
		{public: "https://abc123.execute-api.eu-central-1.amazonaws.com", wantID: "abc123.execute-api.eu-central-1.amazonaws.com",
			wantOrigins: "https://abc123.execute-api.eu-central-1.amazonaws.com"},
		{public: "https://api.tix.example", rpID: "tix.example", origins: "https://dash.tix.example,https://tix.example",
			wantID: "tix.example", wantOrigins: "https://dash.tix.example https://tix.example"},
		{public: "https://api.tix.example", rpID: "tix.example", wantID: "tix.example", wantOrigins: "https://api.tix.example"},
		{public: "http://192.0.2.10:8080", wantErr: "IP address"},
		{public: "https://api.tix.example", rpID: "other.example", wantErr: "not other.example"},
		{public: "http://tix.example", wantErr: "https"},
		{public: "", wantErr: "TIX_PUBLIC_URL"},
		{public: "", rpID: "tix.example", origins: "https://tix.example", wantID: "tix.example", wantOrigins: "https://tix.example"},
	} {
		var origins []string
		if c.origins != "" {
			origins = strings.Split(c.origins, ",")
		}
		id, os, err := passkeyParty(c.public, c.rpID, origins)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q %q %q: %v, want an error saying %q", c.public, c.rpID, c.origins, err, c.wantErr)
			}
			continue
		}
		if err != nil || id != c.wantID || strings.Join(os, " ") != c.wantOrigins {
			t.Errorf("%q %q %q: %q %q %v, want %q %q", c.public, c.rpID, c.origins, id, os, err, c.wantID, c.wantOrigins)
		}
	}
}
