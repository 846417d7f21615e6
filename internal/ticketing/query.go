package ticketing

import "time"

// EventQuery is GET /events: the organizer's published events with filters.
type EventQuery struct {
	OrganizerID  string
	Environment  Environment
	Limit        int
	Cursor       string
	Q            string // case-insensitive, over title and venue
	City         string // exact, case-insensitive
	SceneID      string
	StartsAfter  *time.Time // inclusive
	StartsBefore *time.Time // inclusive
	Scope        string     // upcoming (not yet ended) | past (ended) | all
	Sort         string     // start_at | created_at
	Desc         bool
	Now          time.Time
}

// Query scopes and sorts.
const (
	ScopeUpcoming = "upcoming"
	ScopePast     = "past"
	ScopeAll      = "all"
	SortStartAt   = "start_at"
	SortCreatedAt = "created_at"
)

// ListedEvent is an event in a listing with its environment's sold aggregate.
type ListedEvent struct {
	Event   *Event
	QtySold int
}

// EventPage is one page of a listing.
type EventPage struct {
	Events     []ListedEvent
	NextCursor string
	HasMore    bool
}
