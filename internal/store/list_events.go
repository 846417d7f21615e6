package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// ListEvents pages through the organizer's published events on GSI1 (by start) or
// GSI2 (by creation). Time bounds on the sort attribute are key conditions; the
// other filters are filter expressions, so a page may take more than one Query
// when filters drop items (the default listing takes one), up to the list
// budget: then the page is short (maybe empty) with has_more and a cursor. The
// cursor is signed and bound to the query's filters.
func (s *Catalog) ListEvents(ctx context.Context, q ticketing.EventQuery) (*ticketing.EventPage, error) {
	lq := newEventListQuery(q)
	lq.startBounds(q)
	lq.filter(q)
	fingerprint := queryFingerprint(q)
	var start map[string]types.AttributeValue
	if q.Cursor != "" {
		k, err := s.cursor.decode(q.Cursor, fingerprint)
		if err != nil {
			return nil, err
		}
		start = k
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(lq.index),
		KeyConditionExpression:    aws.String(lq.keyCond),
		ExpressionAttributeNames:  lq.names,
		ExpressionAttributeValues: lq.vals,
		ScanIndexForward:          aws.Bool(!q.Desc),
	}
	readAhead := exact
	if len(lq.filters) > 0 {
		in.FilterExpression = aws.String(strings.Join(lq.filters, " AND "))
		readAhead = ahead
	}
	// Read one more than the page to know whether another page exists.
	res, err := s.queryBounded(ctx, "ListEvents", in, start, q.Limit+1, readAhead)
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", q.OrganizerID, err)
	}
	return s.eventPage(q, lq, res, fingerprint)
}

// eventListQuery is the Query of one event listing being built: the index, its
// key condition and the filter expressions with their names and values.
type eventListQuery struct {
	index, pkName, skName string
	names                 map[string]string
	vals                  map[string]types.AttributeValue
	keyCond               string
	filters               []string
}

func newEventListQuery(q ticketing.EventQuery) *eventListQuery {
	index := "GSI1"
	if q.Sort == ticketing.SortCreatedAt {
		index = "GSI2"
	}
	return &eventListQuery{
		index: index, pkName: index + "PK", skName: index + "SK",
		names:   map[string]string{"#pk": index + "PK"},
		vals:    map[string]types.AttributeValue{":pk": str(eventListPK(q.OrganizerID))},
		keyCond: "#pk = :pk",
	}
}

// startBounds bounds the start time: a key condition on GSI1 (by start), a
// filter on the start time inside GSI1SK on GSI2 (by creation).
func (lq *eventListQuery) startBounds(q ticketing.EventQuery) {
	if lq.index != "GSI1" {
		if q.StartsAfter != nil {
			lq.filters = append(lq.filters, "GSI1SK >= :lo")
			lq.vals[":lo"] = str(sortTime(*q.StartsAfter))
		}
		if q.StartsBefore != nil {
			lq.filters = append(lq.filters, "GSI1SK <= :hi")
			lq.vals[":hi"] = str(sortTime(*q.StartsBefore) + "#~")
		}
		return
	}
	if q.StartsAfter != nil || q.StartsBefore != nil {
		lq.names["#sk"] = lq.skName
	}
	switch {
	case q.StartsAfter != nil && q.StartsBefore != nil:
		lq.keyCond += " AND #sk BETWEEN :lo AND :hi"
	case q.StartsAfter != nil:
		lq.keyCond += " AND #sk >= :lo"
	case q.StartsBefore != nil:
		lq.keyCond += " AND #sk <= :hi"
	}
	if q.StartsAfter != nil {
		lq.vals[":lo"] = str(sortTime(*q.StartsAfter))
	}
	if q.StartsBefore != nil {
		lq.vals[":hi"] = str(sortTime(*q.StartsBefore) + "#~") // inclusive of every id at that second
	}
}

// filter adds the scope (upcoming or past at q.Now), text, city and scene filters.
func (lq *eventListQuery) filter(q ticketing.EventQuery) {
	switch q.Scope {
	case ticketing.ScopeUpcoming, "":
		lq.filters = append(lq.filters, "ends_at > :now")
		lq.vals[":now"] = str(sortTime(q.Now))
	case ticketing.ScopePast:
		lq.filters = append(lq.filters, "ends_at <= :now")
		lq.vals[":now"] = str(sortTime(q.Now))
	}
	if q.Q != "" {
		lq.filters = append(lq.filters, "(contains(title_lc, :q) OR contains(venue_lc, :q))")
		lq.vals[":q"] = str(strings.ToLower(q.Q))
	}
	if q.City != "" {
		lq.filters = append(lq.filters, "city_lc = :city")
		lq.vals[":city"] = str(strings.ToLower(q.City))
	}
	if q.SceneID != "" {
		lq.filters = append(lq.filters, "scene_id = :scene")
		lq.vals[":scene"] = str(q.SceneID)
	}
}

// eventPage turns the items read (one more than the page when there is another)
// into the page, its cursor and each event's units sold in q's environment.
func (s *Catalog) eventPage(q ticketing.EventQuery, lq *eventListQuery, res listed, fingerprint string) (*ticketing.EventPage, error) {
	items, next := s.cut(res, q.Limit, lq.pkName, lq.skName, fingerprint)
	page := &ticketing.EventPage{HasMore: next != "", NextCursor: next}
	for _, item := range items {
		var it eventItem
		if err := unmarshal(item, &it); err != nil {
			return nil, fmt.Errorf("decode listed event: %w", err)
		}
		e, err := it.event()
		if err != nil {
			return nil, err
		}
		sold := it.SoldTest
		if q.Environment == ticketing.EnvLive {
			sold = it.SoldLive
		}
		page.Events = append(page.Events, ticketing.ListedEvent{Event: e, QtySold: sold})
	}
	return page, nil
}

// queryFingerprint binds a cursor to its listing: organizer, sort, order, filters.
// The time of the request is left out, so a cursor survives between pages.
func queryFingerprint(q ticketing.EventQuery) string {
	parts := []string{"events", q.OrganizerID, q.Sort, fmt.Sprint(q.Desc), q.Scope, strings.ToLower(q.Q), strings.ToLower(q.City), q.SceneID}
	if q.StartsAfter != nil {
		parts = append(parts, sortTime(*q.StartsAfter))
	} else {
		parts = append(parts, "")
	}
	if q.StartsBefore != nil {
		parts = append(parts, sortTime(*q.StartsBefore))
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:12])
}
