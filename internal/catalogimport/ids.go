package catalogimport

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// Catalog ids: a prefix and lowercase base32 of SHA-256 over the organizer id and
// the refs, joined by NUL. They never change for the same refs. Below the event,
// the kind of the thing is hashed too, so that a tier and a zone sharing a ref do
// not share an id suffix.
func catalogID(prefix string, n int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return prefix + strings.ToLower(base32.StdEncoding.EncodeToString(sum[:]))[:n]
}

// CatalogEventID is the id of the event eventRef of organizer org.
func CatalogEventID(org, eventRef string) string { return catalogID("evt_", 16, org, eventRef) }

// CatalogTierID is the id of a tier.
func CatalogTierID(org, eventRef, tierRef string) string {
	return catalogID("tier_", 16, org, eventRef, "tier", tierRef)
}

// CatalogOccurrenceID is the id of an occurrence.
func CatalogOccurrenceID(org, eventRef, occRef string) string {
	return catalogID("occ_", 16, org, eventRef, "occurrence", occRef)
}

// CatalogZoneID is the id of a seating zone.
func CatalogZoneID(org, eventRef, zoneRef string) string {
	return catalogID("zone_", 16, org, eventRef, "zone", zoneRef)
}

// CatalogSeatID is the id of a seat (shorter: a map has thousands).
func CatalogSeatID(org, eventRef, zoneRef, seatRef string) string {
	return catalogID("seat_", 10, org, eventRef, "seat", zoneRef, seatRef)
}

// CatalogLayoutID is the id of an event's seating layout.
func CatalogLayoutID(org, eventRef string) string {
	return catalogID("lay_", 16, org, eventRef, "layout")
}
