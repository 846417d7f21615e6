package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/catalogimport"
	"tix/internal/ticketing"
)

// ImportCatalog writes an organizer's imported events (built by
// catalogimport.ParseCatalog) after checking, for both environments, that nothing
// sold would be broken (catalogimport.CheckReimport) and that no slug is taken by
// another of the organizer's events. Any problem refuses the whole import with an
// invalid_request *ticketing.Error listing them (catalogimport.ImportProblems), and
// nothing is written. An existing event keeps its created_at (events[i].CreatedAt
// is set from it). Events absent from the import are left as they are.
//
// The check and the writes are not one transaction: a sale between them is not
// seen. Import in a quiet moment; writing the same file again is always safe.
func (s *Catalog) ImportCatalog(ctx context.Context, organizerID string, events []*ticketing.Event) error {
	now := s.clock.Now()
	inImport := make(map[string]*ticketing.Event, len(events))
	for i, e := range events {
		if e.OrganizerID != organizerID {
			return fmt.Errorf("import events[%d] (%s): built for organizer %q, not %q", i, e.ID, e.OrganizerID, organizerID)
		}
		inImport[e.ID] = e
	}
	var problems catalogimport.ImportErrors
	existing := make([]*ticketing.Event, len(events))
	for i, e := range events {
		path := fmt.Sprintf("events[%d]", i)
		old, err := s.loadEvent(ctx, e.ID, true)
		found := err == nil
		switch {
		case ticketing.IsCode(err, ticketing.CodeNotFound):
			old = nil
		case err != nil:
			return err
		}
		if found && old.OrganizerID != organizerID {
			problems = append(problems, catalogimport.ImportError{Path: path + ".ref", Message: "event id " + e.ID + " belongs to another organizer"})
			continue
		}
		existing[i] = old
		if e.Slug != nil {
			other, err := s.slugOwner(ctx, organizerID, *e.Slug)
			switch {
			case ticketing.IsCode(err, ticketing.CodeNotFound):
			case err != nil:
				return fmt.Errorf("check slug of %s: %w", e.ID, err)
			case other.ID != e.ID && slugStaysWith(other.ID, *e.Slug, inImport):
				problems = append(problems, catalogimport.ImportError{
					Path:    path + ".slug",
					Message: fmt.Sprintf("%q is already used by event %s (ref %q)", *e.Slug, other.ID, other.Ref),
				})
			}
		}
		if !found {
			continue
		}
		for _, env := range []ticketing.Environment{ticketing.EnvTest, ticketing.EnvLive} {
			stock, err := s.GetStock(ctx, e.ID, env, "")
			if err != nil {
				return fmt.Errorf("check stock of %s: %w", e.ID, err)
			}
			problems = append(problems, catalogimport.CheckReimport(path, old, e, env, stock, now)...)
		}
	}
	if err := problems.Err(); err != nil {
		return err
	}
	for i, e := range events {
		e.SeatBlocks = ticketing.SeatBlocks // a new event spreads its seats over blocks
		if old := existing[i]; old != nil {
			e.SeatBlocks = old.SeatBlocks // where its seats' items are: never moved
			if !old.CreatedAt.IsZero() {
				e.CreatedAt = old.CreatedAt
			}
		}
		if err := s.PutEvent(ctx, e); err != nil {
			return fmt.Errorf("import events[%d] (ref %q): %w", i, e.Ref, err)
		}
	}
	return nil
}

// slugStaysWith reports whether the event holding slug keeps it after the import:
// it does unless the import gives that event another slug.
func slugStaysWith(eventID, slug string, inImport map[string]*ticketing.Event) bool {
	e, ok := inImport[eventID]
	return !ok || (e.Slug != nil && *e.Slug == slug)
}

// GetCatalogEvent reads an organizer's event in any status, drafts included, with
// its seating map: the operator's view of the catalog, never the API's.
func (s *Catalog) GetCatalogEvent(ctx context.Context, organizerID, eventID string) (*ticketing.Event, error) {
	if !validID(eventID) {
		return nil, ticketing.NotFound("event")
	}
	e, err := s.loadEvent(ctx, eventID, true)
	if err != nil {
		return nil, err
	}
	if e.OrganizerID != organizerID {
		return nil, ticketing.NotFound("event")
	}
	return e, nil
}

// loadEvent reads an event and its map whatever its owner and status, in one
// Query of its partition; a missing event is a not_found *ticketing.Error. The
// import reads consistently (it decides on what it sees); the seating endpoint
// does not.
func (s *Catalog) loadEvent(ctx context.Context, eventID string, consistent bool) (*ticketing.Event, error) {
	var meta map[string]types.AttributeValue
	var parts [][]byte
	var start map[string]types.AttributeValue
	for {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(eventPK(eventID))},
			ConsistentRead:            aws.Bool(consistent),
			ExclusiveStartKey:         start,
			ReturnConsumedCapacity:    s.rcc(),
		})
		if err != nil {
			return nil, fmt.Errorf("read event %s: %w", eventID, err)
		}
		s.record("GetEventWithSeating", out.ConsumedCapacity)
		for _, it := range out.Items {
			sk, _ := it["SK"].(*types.AttributeValueMemberS)
			switch {
			case sk == nil:
			case sk.Value == skEventMeta:
				meta = it
			case strings.HasPrefix(sk.Value, "MAP#"):
				if b, ok := it["z"].(*types.AttributeValueMemberB); ok {
					parts = append(parts, b.Value)
				}
			}
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}
	if meta == nil {
		return nil, ticketing.NotFound("event")
	}
	var it eventItem
	if err := unmarshal(meta, &it); err != nil {
		return nil, fmt.Errorf("decode event %s: %w", eventID, err)
	}
	e, err := it.event()
	if err != nil {
		return nil, err
	}
	e.OrganizerID = it.Org
	if it.MapParts > 0 && len(parts) > it.MapParts {
		parts = parts[:it.MapParts]
	}
	if len(parts) > 0 {
		if e.Seating, err = decodeSeating(parts); err != nil {
			return nil, fmt.Errorf("event %s: %w", eventID, err)
		}
	}
	return e, nil
}

// slugOwner finds the organizer's event holding slug, drafts included (the API's
// GetEventBySlug hides drafts, but a draft's slug is taken all the same).
func (s *Catalog) slugOwner(ctx context.Context, organizerID, slug string) (*ticketing.Event, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("GSI3"),
		KeyConditionExpression:    aws.String("GSI3PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(slugPK(organizerID, slug))},
		Limit:                     aws.Int32(1),
	})
	if err != nil {
		return nil, fmt.Errorf("find event by slug %q: %w", slug, err)
	}
	if len(out.Items) == 0 {
		return nil, ticketing.NotFound("event")
	}
	var it eventItem
	if err := unmarshal(out.Items[0], &it); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	return it.event()
}
