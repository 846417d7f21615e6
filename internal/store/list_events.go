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
func (s *Store) ListEvents(ctx context.Context, q ticketing.EventQuery) (*ticketing.EventPage, error) {
	index := "GSI1"
	if q.Sort == ticketing.SortCreatedAt {
		index = "GSI2"
	}
	pkName, skName := index+"PK", index+"SK"
	names := map[string]string{"#pk": pkName}
	vals := map[string]types.AttributeValue{":pk": str(eventListPK(q.OrganizerID))}
	keyCond := "#pk = :pk"
	var filters []string

	if index == "GSI1" {
		if q.StartsAfter != nil || q.StartsBefore != nil {
			names["#sk"] = skName
		}
		switch {
		case q.StartsAfter != nil && q.StartsBefore != nil:
			keyCond += " AND #sk BETWEEN :lo AND :hi"
		case q.StartsAfter != nil:
			keyCond += " AND #sk >= :lo"
		case q.StartsBefore != nil:
			keyCond += " AND #sk <= :hi"
		}
		if q.StartsAfter != nil {
			vals[":lo"] = str(sortTime(*q.StartsAfter))
		}
		if q.StartsBefore != nil {
			vals[":hi"] = str(sortTime(*q.StartsBefore) + "#~") // inclusive of every id at that second
		}
	} else {
		// By creation: the start bounds filter on the start time inside GSI1SK.
		if q.StartsAfter != nil {
			filters = append(filters, "GSI1SK >= :lo")
			vals[":lo"] = str(sortTime(*q.StartsAfter))
		}
		if q.StartsBefore != nil {
			filters = append(filters, "GSI1SK <= :hi")
			vals[":hi"] = str(sortTime(*q.StartsBefore) + "#~")
		}
	}
	switch q.Scope {
	case ticketing.ScopeUpcoming, "":
		filters = append(filters, "ends_at > :now")
		vals[":now"] = str(sortTime(q.Now))
	case ticketing.ScopePast:
		filters = append(filters, "ends_at <= :now")
		vals[":now"] = str(sortTime(q.Now))
	}
	if q.Q != "" {
		filters = append(filters, "(contains(title_lc, :q) OR contains(venue_lc, :q))")
		vals[":q"] = str(strings.ToLower(q.Q))
	}
	if q.City != "" {
		filters = append(filters, "city_lc = :city")
		vals[":city"] = str(strings.ToLower(q.City))
	}
	if q.SceneID != "" {
		filters = append(filters, "scene_id = :scene")
		vals[":scene"] = str(q.SceneID)
	}

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
		TableName: aws.String(s.table), IndexName: aws.String(index),
		KeyConditionExpression:    aws.String(keyCond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: vals,
		ScanIndexForward:          aws.Bool(!q.Desc),
	}
	readAhead := exact
	if len(filters) > 0 {
		in.FilterExpression = aws.String(strings.Join(filters, " AND "))
		readAhead = ahead
	}
	// Read one more than the page to know whether another page exists.
	res, err := s.queryBounded(ctx, "ListEvents", in, start, q.Limit+1, readAhead)
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", q.OrganizerID, err)
	}
	items := res.items
	page := &ticketing.EventPage{}
	switch {
	case len(items) > q.Limit:
		items = items[:q.Limit]
		page.HasMore = true
		last := items[len(items)-1]
		key := map[string]types.AttributeValue{"PK": last["PK"], "SK": last["SK"], pkName: last[pkName], skName: last[skName]}
		page.NextCursor = s.cursor.encode(key, fingerprint)
	case res.resume != nil:
		page.HasMore = true
		page.NextCursor = s.cursor.encode(res.resume, fingerprint)
	}
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
