package emailjobs

import (
	"net/url"
	"slices"
	"strings"

	"tix/internal/ticketing"
)

// The checks of an organizer's identity fields and contacts, shared by
// tixctl (organizers set-identity, set-contacts, test-recipients) and the
// dashboard's Settings page. Each failure is invalid_request naming the
// field (sender_name, reply_to, support, logo_url, language, contacts, email).

// MaxContacts bounds an organizer's owner contact addresses.
const MaxContacts = 5

// CheckIdentityField refuses a value of an identity field ("" removes
// a field and is always accepted but for language).
func CheckIdentityField(field, v string) error {
	switch field {
	case "sender_name":
		if err := ValidSenderName(v); err != nil {
			return ticketing.Invalid(field, "%s", err.Error())
		}
	case "reply_to":
		if v != "" && !ValidAddress(v) {
			return ticketing.Invalid(field, "give one plain address, like help@example.com")
		}
	case "support":
		if len(v) > 200 || strings.ContainsAny(v, "\r\n") {
			return ticketing.Invalid(field, "give at most 200 characters on one line")
		}
	case "logo_url":
		if u, err := url.Parse(v); v != "" && (err != nil || u.Scheme != "https" || u.Host == "" || len(v) > 500) {
			return ticketing.Invalid(field, "give an https URL of at most 500 characters")
		}
	case "language":
		if !slices.Contains(Languages, v) {
			return ticketing.Invalid(field, "give ru or en")
		}
	default:
		return ticketing.Invalid(field, "unknown identity field %q", field)
	}
	return nil
}

// CheckContacts refuses a contact list that is not 1 to MaxContacts plain
// addresses.
func CheckContacts(contacts []string) error {
	if len(contacts) == 0 || len(contacts) > MaxContacts {
		return ticketing.Invalid("contacts", "give 1 to %d contact addresses", MaxContacts)
	}
	for _, c := range contacts {
		if !ValidAddress(c) {
			return ticketing.Invalid("contacts", "%q is not one plain address, like owner@example.com", c)
		}
	}
	return nil
}
