package dashboard

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tix/internal/dashboard/account"
)

// Every message key the templates and the code use exists in both
// languages, and so do the keys built from roles, key statuses and the
// endpoint's actions.
func TestMessages_EveryKeyUsedExists(t *testing.T) {
	used := map[string]bool{}
	tmpl := regexp.MustCompile(`\.T "([^"]+)"`)
	err := fs.WalkDir(templateFS, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(templateFS, p)
		for _, m := range tmpl.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile(`"((?:err|signin|signup|verify|link|reset|password|members|api|passkey)\.[a-z_]+)"`)
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "messages.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range code.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
	}
	for _, r := range account.Roles {
		used["role."+string(r)] = true
	}
	for _, s := range []string{"active", "revoked", "expired"} {
		used["status."+s] = true
	}
	for _, a := range []string{"verify", "test"} {
		used["wh."+a] = true
	}
	if len(used) < 50 {
		t.Fatalf("found only %d keys: is the scan broken?", len(used))
	}
	for k := range used {
		m, ok := messages[k]
		if !ok || m.ru == "" || m.en == "" {
			t.Errorf("message %q is missing or untranslated", k)
		}
	}
}
