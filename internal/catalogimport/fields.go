package catalogimport

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
)

var (
	refPattern       = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	slugPattern      = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$`)
	colorPattern     = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
	timezonePattern  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,2}$`)
	performerPattern = regexp.MustCompile(`^[a-z][a-z_-]{0,31}$`)
	rowPattern       = regexp.MustCompile(`^[A-Za-z0-9._]{1,16}$`)
	promoCodePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{3,32}$`)
)

// Palette gives tiers and zones without a color one by position.
var Palette = []string{"#E53935", "#1E88E5", "#43A047", "#FB8C00", "#8E24AA", "#00ACC1", "#F4511E", "#3949AB", "#7CB342", "#6D4C41"}

// DefaultTimezone is the timezone of an event that names none.
const DefaultTimezone = "Europe/Moscow"

func (b *catalogBuilder) ref(path, ref string) bool {
	switch {
	case ref == "":
		b.add(path, "required")
	case !refPattern.MatchString(ref):
		b.add(path, "must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-'")
	default:
		return true
	}
	return false
}

// uniqueRef checks item i's ref as ref does, and that no earlier item of list
// (seen: ref -> index) has the same one.
func (b *catalogBuilder) uniqueRef(path, ref string, seen map[string]int, list string, i int) {
	if !b.ref(path, ref) {
		return
	}
	if j, dup := seen[ref]; dup {
		b.add(path, "duplicate ref %q (also %s[%d])", ref, list, j)
	}
	seen[ref] = i
}

// text checks a free-text field and returns it as a nullable value.
func (b *catalogBuilder) text(path, s string, required bool, max int) *string {
	if strings.TrimSpace(s) == "" {
		if required {
			b.add(path, "required")
		} else if s != "" {
			b.add(path, "must not be blank (omit it instead)")
		}
		return nil
	}
	if n := len([]rune(s)); n > max {
		b.add(path, "must be at most %d characters (is %d)", max, n)
	}
	return &s
}

// line checks a one-line text field (a title, a name) as text does, and
// refuses control characters (line breaks, tabs, NUL, ESC...) and the
// bidirectional overrides that would reorder what a buyer reads.
func (b *catalogBuilder) line(path, s string, required bool, max int) *string {
	if i := strings.IndexFunc(s, forbiddenInLine); i >= 0 {
		b.add(path, "must be one line without control characters (found %U at byte %d): remove it", []rune(s[i:])[0], i)
		return nil
	}
	return b.text(path, s, required, max)
}

// forbiddenInLine: control characters (Cc) and the Unicode bidirectional
// embedding, override and isolate characters.
func forbiddenInLine(r rune) bool {
	return unicode.IsControl(r) || r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

func (b *catalogBuilder) url(path, s string) *string {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s) > 2048 {
		b.add(path, "must be an http(s) URL")
		return nil
	}
	return &s
}

func (b *catalogBuilder) time(path, s string, required bool) *time.Time {
	if s == "" {
		if required {
			b.add(path, "required")
		}
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		b.add(path, "must be an RFC 3339 date-time such as 2026-07-01T19:00:00+03:00")
		return nil
	}
	t = t.UTC().Truncate(time.Second)
	return &t
}

func (b *catalogBuilder) window(path string, start, end *time.Time, startName, endName string) {
	if start != nil && end != nil && !end.After(*start) {
		b.add(path+"."+endName, "must be after %s", startName)
	}
}

func (b *catalogBuilder) color(path, s string, i int) string {
	if s == "" {
		return Palette[i%len(Palette)]
	}
	if !colorPattern.MatchString(s) {
		b.add(path, "must be a color like #1E88E5")
	}
	return strings.ToUpper(s)
}

func (b *catalogBuilder) timezone(path, s string) string {
	if s == "" {
		return DefaultTimezone
	}
	if ok, seen := b.locations[s]; seen {
		if !ok {
			b.add(path, "unknown IANA time zone %q", s)
		}
		return s
	}
	ok := len(s) <= 64 && timezonePattern.MatchString(s) && s != "Local"
	if ok {
		_, err := time.LoadLocation(s)
		ok = err == nil
	}
	b.locations[s] = ok
	if !ok {
		b.add(path, "unknown IANA time zone %q", s)
	}
	return s
}

func (b *catalogBuilder) optionalSlug(path, s string) *string {
	if s == "" {
		return nil
	}
	if !slugPattern.MatchString(s) {
		b.add(path, "must be 1-100 characters of a-z, 0-9 and '-', not starting or ending with '-'")
	}
	return &s
}

// jsonObject accepts any JSON object (opaque to tix) or nothing.
func (b *catalogBuilder) jsonObject(path string, raw json.RawMessage) json.RawMessage {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		b.add(path, "must be a JSON object")
		return nil
	}
	return raw
}
