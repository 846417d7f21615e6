package scanner

import (
	"io/fs"
	"os"
	"regexp"
	"testing"
)

// Every text the templates, the Go code and the page script use exists in
// Russian and English; the script's answers cover every check-in result.
func TestMessages_EveryKeyUsedExists(t *testing.T) {
	used := map[string]bool{}
	tmpl := regexp.MustCompile(`\.T "([^"]+)"`)
	names, _ := fs.Glob(templateFS, "templates/*.html")
	for _, n := range names {
		b, _ := fs.ReadFile(templateFS, n)
		for _, m := range tmpl.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
	}
	for _, f := range []string{"scanner.go", "pages.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(err\.[a-z_]+)"`).FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
	}
	js, err := staticFS.ReadFile("static/scanner.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\bT\.([a-z_]+)`).FindAllStringSubmatch(string(js), -1) {
		used["js."+m[1]] = true
	}
	for _, m := range regexp.MustCompile(`: '([a-z_]+)'`).FindAllStringSubmatch(regexp.MustCompile(`(?s)const VERDICT = \{.*?\};`).FindString(string(js)), -1) {
		used["js."+m[1]] = true
	}
	if len(used) < 40 {
		t.Fatalf("found only %d keys: is the scan broken?", len(used))
	}
	for k := range used {
		m, ok := messages[k]
		if !ok || m.ru == "" || m.en == "" {
			t.Errorf("message %q is missing or untranslated", k)
		}
	}
	for _, r := range []string{"admitted", "already", "refunded", "cancelled", "wrong_event", "invalid", "transferred"} {
		if !used["js."+r] {
			t.Errorf("the script shows no answer for %s", r)
		}
	}
}
