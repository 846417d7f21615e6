package emailrender

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// nbsp keeps an amount and its currency, and the groups of digits, on one line.
const nbsp = "\u00a0"

// FormatMoney writes an amount as the language does: "1 500,00 ₽" in Russian,
// "RUB 1,500.00" in English. Amounts are in minor units (two decimals).
func FormatMoney(m Money, l string) string {
	neg := m.Minor < 0
	minor := m.Minor
	if neg {
		minor = -minor
	}
	whole, frac := group(strconv.FormatInt(minor/100, 10), l), fmt.Sprintf("%02d", minor%100)
	sign := ""
	if neg {
		sign = "-"
	}
	cur := strings.ToUpper(m.Currency)
	if l == "en" {
		return sign + cur + nbsp + whole + "." + frac
	}
	if cur == "RUB" {
		cur = "₽"
	}
	return sign + whole + "," + frac + nbsp + cur
}

// group inserts the language's thousands separator.
func group(digits, l string) string {
	sep := nbsp
	if l == "en" {
		sep = ","
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}

var ruMonths = [...]string{"января", "февраля", "марта", "апреля", "мая", "июня", "июля",
	"августа", "сентября", "октября", "ноября", "декабря"}

var ruWeekdays = [...]string{"вс", "пн", "вт", "ср", "чт", "пт", "сб"}

// FormatStart is an event's start in the event's own time zone, e.g.
// "пт, 25 декабря 2026, 19:00 MSK" or "Fri, 25 Dec 2026, 19:00 MSK".
func FormatStart(t time.Time, zone, l string) (string, error) {
	loc := time.UTC
	if zone != "" {
		var err error
		if loc, err = time.LoadLocation(zone); err != nil {
			return "", fmt.Errorf("mail: event time zone %q: %w", zone, err)
		}
	}
	t = t.In(loc)
	if l == "en" {
		return t.Format("Mon, 2 Jan 2006, 15:04 MST"), nil
	}
	return fmt.Sprintf("%s, %d %s %d, %s", ruWeekdays[t.Weekday()], t.Day(), ruMonths[t.Month()-1], t.Year(), t.Format("15:04 MST")), nil
}
