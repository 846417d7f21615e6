package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// eventItem is an event's META item. The event itself is one JSON document
// (compact: no repeated attribute names); the top-level attributes beside it
// exist for keys, listing filters and tenancy.
type eventItem struct {
	PK, SK   string
	GSI1PK   string `json:"GSI1PK,omitempty"` // published events by start (listing)
	GSI1SK   string `json:"GSI1SK,omitempty"`
	GSI2PK   string `json:"GSI2PK,omitempty"` // published events by creation (listing)
	GSI2SK   string `json:"GSI2SK,omitempty"`
	GSI3PK   string `json:"GSI3PK,omitempty"` // slug lookup (reads hide drafts)
	GSI3SK   string `json:"GSI3SK,omitempty"`
	Org      string `json:"org"`
	Status   string `json:"status"`
	TitleLC  string `json:"title_lc"`
	VenueLC  string `json:"venue_lc"`
	CityLC   string `json:"city_lc"`
	SceneID  string `json:"scene_id,omitempty"`
	EndsAt   string `json:"ends_at"`
	Doc      string `json:"doc"`
	MapParts int    `json:"map_parts"`
	// SoldTest and SoldLive are listing aggregates of units sold, kept by the sales
	// path asynchronously; detail endpoints count exactly from stock items.
	SoldTest int `json:"sold_test"`
	SoldLive int `json:"sold_live"`
}

// mapChunkBytes keeps each seating-map item well under DynamoDB's 400 KB item limit.
const mapChunkBytes = 300 * 1024

func newEventItem(e *ticketing.Event) (eventItem, error) {
	doc, err := json.Marshal(e)
	if err != nil {
		return eventItem{}, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	it := eventItem{
		PK: eventPK(e.ID), SK: skEventMeta, Org: e.OrganizerID, Status: string(e.Status),
		TitleLC: strings.ToLower(e.Title), VenueLC: strings.ToLower(e.Venue), CityLC: strings.ToLower(e.City),
		EndsAt: sortTime(e.EndsAt), Doc: string(doc),
	}
	if e.Scene != nil {
		it.SceneID = e.Scene.ID
	}
	if e.Status == ticketing.EventPublished {
		it.GSI1PK, it.GSI1SK = eventListPK(e.OrganizerID), sortTime(e.StartsAt)+"#"+e.ID
		it.GSI2PK, it.GSI2SK = eventListPK(e.OrganizerID), sortTime(e.CreatedAt)+"#"+e.ID
	}
	if e.Slug != nil { // drafts too, so that an import finds slug clashes; reads hide drafts
		it.GSI3PK, it.GSI3SK = slugPK(e.OrganizerID, *e.Slug), skEventMeta
	}
	return it, nil
}

func (it *eventItem) event() (*ticketing.Event, error) {
	var e ticketing.Event
	if err := json.Unmarshal([]byte(it.Doc), &e); err != nil {
		return nil, fmt.Errorf("decode event %s: %w", it.PK, err)
	}
	return &e, nil
}

// encodeSeating compresses a seating map and cuts it into item-sized parts.
func encodeSeating(st *ticketing.Seating) ([][]byte, error) {
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode seating: %w", err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("compress seating: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress seating: %w", err)
	}
	var parts [][]byte
	for b := buf.Bytes(); len(b) > 0; {
		k := min(len(b), mapChunkBytes)
		parts = append(parts, b[:k])
		b = b[k:]
	}
	return parts, nil
}

func decodeSeating(parts [][]byte) (*ticketing.Seating, error) {
	zr, err := gzip.NewReader(bytes.NewReader(bytes.Join(parts, nil)))
	if err != nil {
		return nil, fmt.Errorf("open seating map: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("read seating map: %w", err)
	}
	var st ticketing.Seating
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("decode seating map: %w", err)
	}
	return &st, nil
}

// PutEvent writes an event and its seating map as given (the caller keeps
// created_at: ImportCatalog reads the existing event first), keeping the sold
// aggregates of an existing event. Stock items are never touched: a re-import
// changes the catalog in place without touching what has been sold.
func (s *Catalog) PutEvent(ctx context.Context, e *ticketing.Event) error {
	it, err := newEventItem(e)
	if err != nil {
		return err
	}
	var parts [][]byte // no seating map: no parts
	if e.Seating != nil {
		if parts, err = encodeSeating(e.Seating); err != nil {
			return err
		}
	}
	oldParts, err := s.eventMapParts(ctx, e)
	if err != nil {
		return err
	}
	it.MapParts = len(parts)
	if err := s.writeSeatingMap(ctx, e.ID, parts, oldParts); err != nil {
		return err
	}
	if err := s.updateEventMeta(ctx, e, it); err != nil {
		return err
	}
	return s.putTierReferences(ctx, e)
}

// eventMapParts reads how many seating-map parts the stored event has (0 when
// there is none), refusing an event id that belongs to another organizer.
func (s *Catalog) eventMapParts(ctx context.Context, e *ticketing.Event) (int, error) {
	old, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(eventPK(e.ID), skEventMeta), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("org, map_parts"),
	})
	if err != nil {
		return 0, fmt.Errorf("read event %s: %w", e.ID, err)
	}
	if old.Item == nil {
		return 0, nil
	}
	var prev eventItem
	if err := unmarshal(old.Item, &prev); err != nil {
		return 0, fmt.Errorf("decode event %s: %w", e.ID, err)
	}
	if prev.Org != e.OrganizerID {
		return 0, ticketing.Errorf(ticketing.CodeConflict, "event id %s belongs to another organizer", e.ID)
	}
	return prev.MapParts, nil
}

// writeSeatingMap writes the map's parts and deletes the parts beyond them that
// a larger previous map left.
func (s *Catalog) writeSeatingMap(ctx context.Context, eventID string, parts [][]byte, oldParts int) error {
	for i, p := range parts {
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(s.table),
			Item: map[string]types.AttributeValue{
				"PK": str(eventPK(eventID)), "SK": str(mapChunkSK(i)), "z": &types.AttributeValueMemberB{Value: p},
			},
		})
		if err != nil {
			return fmt.Errorf("write seating map %s part %d: %w", eventID, i, err)
		}
	}
	for i := len(parts); i < oldParts; i++ {
		if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table), Key: keyOf(eventPK(eventID), mapChunkSK(i)),
		}); err != nil {
			return fmt.Errorf("delete stale seating map %s part %d: %w", eventID, i, err)
		}
	}
	return nil
}

// eventMetaAttributes are the META item's attributes PutEvent sets, or removes
// when the event has none; the sold aggregates are not among them, so an
// existing event keeps its counts.
var eventMetaAttributes = []string{"GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK", "org", "status", "title_lc", "venue_lc", "city_lc", "scene_id", "ends_at", "doc", "map_parts"}

// updateEventMeta writes the META item: everything but the sold aggregates of
// an existing event, on condition that the event is new or the organizer's.
func (s *Catalog) updateEventMeta(ctx context.Context, e *ticketing.Event, it eventItem) error {
	av, err := marshal(it)
	if err != nil {
		return fmt.Errorf("marshal event %s: %w", e.ID, err)
	}
	sets := []string{}
	removes := []string{}
	names := map[string]string{}
	vals := map[string]types.AttributeValue{}
	for i, k := range eventMetaAttributes {
		nk := "#a" + strconv.Itoa(i+1)
		names[nk] = k
		if v, ok := av[k]; ok {
			vk := ":a" + strconv.Itoa(i+1)
			vals[vk] = v
			sets = append(sets, nk+" = "+vk)
		} else {
			removes = append(removes, nk)
		}
	}
	expr := "SET " + strings.Join(sets, ", ")
	if len(removes) > 0 {
		expr += " REMOVE " + strings.Join(removes, ", ")
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(eventPK(e.ID), skEventMeta),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("attribute_not_exists(org) OR org = :org"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: withVal(vals, ":org", str(e.OrganizerID)),
	})
	if _, ok := isConditionFailed(err); ok {
		return ticketing.Errorf(ticketing.CodeConflict, "event id %s belongs to another organizer", e.ID)
	}
	if err != nil {
		return fmt.Errorf("write event %s: %w", e.ID, err)
	}
	return nil
}

// putTierReferences writes one item per tier, so that an order can name only
// tier_id (no event_id).
func (s *Catalog) putTierReferences(ctx context.Context, e *ticketing.Event) error {
	for _, t := range e.Tiers {
		if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(s.table),
			Item: map[string]types.AttributeValue{
				"PK": str(tierPK(t.ID)), "SK": str(skTier), "org": str(e.OrganizerID), "event": str(e.ID),
			},
		}); err != nil {
			return fmt.Errorf("write tier reference %s: %w", t.ID, err)
		}
	}
	return nil
}

// TierEvent finds the organizer and event of a tier (one GetItem); an unknown
// tier is a not_found error.
func (s *Catalog) TierEvent(ctx context.Context, tierID string) (string, string, error) {
	if !validID(tierID) {
		return "", "", ticketing.NotFound("tier " + tierID)
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(tierPK(tierID), skTier), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return "", "", fmt.Errorf("find tier %s: %w", tierID, err)
	}
	s.record("TierEvent", out.ConsumedCapacity)
	if out.Item == nil {
		return "", "", ticketing.NotFound("tier " + tierID)
	}
	var it struct {
		Org   string `json:"org"`
		Event string `json:"event"`
	}
	if err := unmarshal(out.Item, &it); err != nil {
		return "", "", fmt.Errorf("decode tier %s: %w", tierID, err)
	}
	return it.Org, it.Event, nil
}

func withVal(m map[string]types.AttributeValue, k string, v types.AttributeValue) map[string]types.AttributeValue {
	m[k] = v
	return m
}

// visibleEvent decodes a META item and applies tenancy: another organizer's event
// and a draft answer exactly like a missing one.
func visibleEvent(item map[string]types.AttributeValue, organizerID string, env ticketing.Environment) (*ticketing.Event, error) {
	if item == nil {
		return nil, ticketing.NotFound("event")
	}
	var it eventItem
	if err := unmarshal(item, &it); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	if it.Org != organizerID || it.Status == string(ticketing.EventDraft) {
		return nil, ticketing.NotFound("event")
	}
	return it.event()
}

// GetEvent reads one visible event of the organizer (one GetItem).
func (s *Catalog) GetEvent(ctx context.Context, organizerID, eventID string, env ticketing.Environment) (*ticketing.Event, error) {
	if !validID(eventID) {
		return nil, ticketing.NotFound("event")
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(eventPK(eventID), skEventMeta),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("get event %s: %w", eventID, err)
	}
	s.record("GetEvent", out.ConsumedCapacity)
	return visibleEvent(out.Item, organizerID, env)
}

// GetEventBySlug finds a visible event by its slug (one Query on GSI3).
func (s *Catalog) GetEventBySlug(ctx context.Context, organizerID, slug string, env ticketing.Environment) (*ticketing.Event, error) {
	if slug == "" || len(slug) > 200 {
		return nil, ticketing.NotFound("event")
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("GSI3"),
		KeyConditionExpression:    aws.String("GSI3PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(slugPK(organizerID, slug))},
		Limit:                     aws.Int32(1),
		ReturnConsumedCapacity:    s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("find event by slug %q: %w", slug, err)
	}
	s.record("GetEventBySlug", out.ConsumedCapacity)
	if len(out.Items) == 0 {
		return nil, ticketing.NotFound("event")
	}
	return visibleEvent(out.Items[0], organizerID, env)
}

// GetEventWithSeating reads the event and its seating map in one Query of the
// event's partition (META plus the compressed map parts).
func (s *Catalog) GetEventWithSeating(ctx context.Context, organizerID, eventID string, env ticketing.Environment) (*ticketing.Event, error) {
	if !validID(eventID) {
		return nil, ticketing.NotFound("event")
	}
	e, err := s.loadEvent(ctx, eventID, false)
	if err != nil {
		return nil, err
	}
	if e.OrganizerID != organizerID || !e.Visible() {
		return nil, ticketing.NotFound("event")
	}
	return e, nil
}

// validID rejects ids that cannot be ours before any request is made.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// GetStock reads the sales state of an event in one environment: one Query
// of each of the event's stock partitions, at once (only taken seats and tier
// counter shards exist as items); tier counters are summed over their shards.
// An occurrenceID narrows it to that occurrence. StockOf is cheaper when the
// event is at hand.
func (s *Catalog) GetStock(ctx context.Context, eventID string, env ticketing.Environment, occurrenceID string) (*ticketing.Stock, error) {
	st := newStock()
	if err := s.queryStock(ctx, eventID, env, occurrenceID, ticketing.MaxStockShards, stockAdder(st, eventID)); err != nil {
		return nil, err
	}
	return st, nil
}

func newStock() *ticketing.Stock {
	return &ticketing.Stock{Sold: map[ticketing.StockKey]int{}, Shards: map[ticketing.StockKey]map[int]int{},
		Seats: map[ticketing.StockKey]ticketing.SeatState{}, Promos: map[string]map[int]int{}}
}

// stockAdder decodes stock items of a shard's partition into st.
func stockAdder(st *ticketing.Stock, eventID string) func(shard int, items []map[string]types.AttributeValue) error {
	return func(shard int, items []map[string]types.AttributeValue) error {
		for _, item := range items {
			var it stockItem
			if err := unmarshal(item, &it); err != nil {
				return fmt.Errorf("decode stock of %s: %w", eventID, err)
			}
			if code, ok := strings.CutPrefix(it.SK, promoSK("")); ok {
				if st.Promos[code] == nil {
					st.Promos[code] = map[int]int{}
				}
				st.Promos[code][shard] = it.Used
				continue
			}
			occ, rest, _ := strings.Cut(it.SK, "#")
			kind, id, _ := strings.Cut(rest, "#")
			k := ticketing.StockKey{Occurrence: occ, ID: id}
			switch kind {
			case "T":
				st.Sold[k] += it.Sold
				if st.Shards[k] == nil {
					st.Shards[k] = map[int]int{}
				}
				st.Shards[k][shard] = it.Sold
			case "S":
				st.Seats[k] = ticketing.SeatState{
					TierID: it.Tier, Status: it.State, Until: time.UnixMilli(it.Until).UTC(), HoldID: it.Hold,
				}
			}
		}
		return nil
	}
}

// stockItem is a tier counter (<occ>#T#<tier>: sold) or a taken seat
// (<occ>#S#<seat>: tier, state, until in Unix ms). Short names keep seat items
// small, because the seating map reads them all.
type stockItem struct {
	PK, SK string
	Sold   int    `json:"sold,omitempty"`
	Tier   string `json:"t,omitempty"`
	State  string `json:"st,omitempty"`
	Until  int64  `json:"u,omitempty"`
	Hold   string `json:"h,omitempty"`
	Used   int    `json:"used,omitempty"` // a promo code's shard: its uses
}
