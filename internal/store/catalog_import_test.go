package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/catalogimport"
	"tix/internal/clock"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

const importOrg = "org_import"

var importT0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func importCatalog(t *testing.T, st *store.Store, now time.Time, file string) error {
	t.Helper()
	events, err := catalogimport.ParseCatalog(importOrg, []byte(file), now)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return st.Catalog.ImportCatalog(context.Background(), importOrg, events)
}

func gaCatalog(title string, capacity int) string {
	return `{"events": [{"ref": "rock", "status": "published", "title": "` + title + `", "slug": "rock",
		"city": "Moscow", "venue": "Club", "starts_at": "2026-09-12T19:00:00+03:00", "ends_at": "2026-09-12T23:00:00+03:00",
		"tiers": [{"ref": "floor", "name": "Floor", "price": 250000, "capacity": ` + strconv.Itoa(capacity) + `}]}]}`
}

// putStock writes a stock item as the sales path would.
func putStock(t *testing.T, st *store.Store, eventID string, env ticketing.Environment, sk string, attrs map[string]types.AttributeValue) {
	t.Helper()
	item := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "STK#" + eventID + "#" + string(env)},
		"SK": &types.AttributeValueMemberS{Value: sk},
	}
	for k, v := range attrs {
		item[k] = v
	}
	if _, err := st.Client().PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(st.TableName()), Item: item,
	}); err != nil {
		t.Fatalf("put stock: %v", err)
	}
}

func TestImportCatalog_ReimportUpdatesInPlaceAndKeepsCreatedAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t, nil)
	if err := importCatalog(t, st, importT0, gaCatalog("Rock Night", 500)); err != nil {
		t.Fatalf("first import: %v", err)
	}
	later := importT0.Add(48 * time.Hour)
	if err := importCatalog(t, st, later, gaCatalog("Rock Night (moved)", 600)); err != nil {
		t.Fatalf("re-import: %v", err)
	}
	id := catalogimport.CatalogEventID(importOrg, "rock")
	got, err := st.Catalog.GetEvent(ctx, importOrg, id, ticketing.EnvTest)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Rock Night (moved)" || got.Tiers[0].Capacity != 600 {
		t.Errorf("event not updated: %q capacity %d", got.Title, got.Tiers[0].Capacity)
	}
	if !got.CreatedAt.Equal(importT0) || !got.UpdatedAt.Equal(later) {
		t.Errorf("created_at %v updated_at %v, want %v and %v", got.CreatedAt, got.UpdatedAt, importT0, later)
	}
	bySlug, err := st.Catalog.GetEventBySlug(ctx, importOrg, "rock", ticketing.EnvTest)
	if err != nil || bySlug.ID != id {
		t.Errorf("by slug: %v %v", bySlug, err)
	}
}

func TestImportCatalog_CapacityBelowSoldIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t, nil)
	if err := importCatalog(t, st, importT0, gaCatalog("Rock Night", 500)); err != nil {
		t.Fatal(err)
	}
	id := catalogimport.CatalogEventID(importOrg, "rock")
	tier := catalogimport.CatalogTierID(importOrg, "rock", "floor")
	putStock(t, st, id, ticketing.EnvTest, "-#T#"+tier, map[string]types.AttributeValue{"sold": &types.AttributeValueMemberN{Value: "7"}})

	err := importCatalog(t, st, importT0.Add(time.Hour), gaCatalog("Rock Night (smaller)", 5))
	if !ticketing.IsCode(err, ticketing.CodeInvalidRequest) {
		t.Fatalf("re-import below sold: err = %v, want invalid_request", err)
	}
	problems := catalogimport.ImportProblems(err)
	if len(problems) != 1 || problems[0].String() != "events[0].tiers[0].capacity: must be >= 7: 7 units are sold in test" {
		t.Errorf("problems = %v", problems)
	}
	got, err := st.Catalog.GetEvent(ctx, importOrg, id, ticketing.EnvTest)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Rock Night" || got.Tiers[0].Capacity != 500 || !got.UpdatedAt.Equal(importT0) {
		t.Errorf("refused import changed the event: %q capacity %d updated %v", got.Title, got.Tiers[0].Capacity, got.UpdatedAt)
	}
	if err := importCatalog(t, st, importT0.Add(time.Hour), gaCatalog("Rock Night (smaller)", 7)); err != nil {
		t.Errorf("capacity equal to sold refused: %v", err)
	}
}

func TestImportCatalog_TakenSeatInLiveCannotBeRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := clock.NewFixed(importT0)
	st := testenv.Store(t, c)
	seated := func(seats int) string {
		return `{"events": [{"ref": "play", "status": "draft", "title": "Play", "city": "M", "venue": "V",
			"starts_at": "2026-09-12T19:00:00Z", "ends_at": "2026-09-12T21:00:00Z",
			"tiers": [{"ref": "stalls", "name": "Stalls", "price": 1000, "zone": "stalls"}],
			"seating": {"width": 100, "height": 100, "zones": [{"ref": "stalls", "name": "Stalls", "type": "seated",
				"primary_tier": "stalls", "rows": [{"row": "A", "seats": ` + strconv.Itoa(seats) + `, "x": 0, "y": 0, "dx": 5}]}]}}]}`
	}
	if err := importCatalog(t, st, importT0, seated(10)); err != nil {
		t.Fatal(err)
	}
	id := catalogimport.CatalogEventID(importOrg, "play")
	seat := catalogimport.CatalogSeatID(importOrg, "play", "stalls", "A-10")
	putStock(t, st, id, ticketing.EnvLive, "-#S#"+seat, map[string]types.AttributeValue{
		"t":  &types.AttributeValueMemberS{Value: catalogimport.CatalogTierID(importOrg, "play", "stalls")},
		"st": &types.AttributeValueMemberS{Value: ticketing.SeatHeld},
		"u":  &types.AttributeValueMemberN{Value: strconv.FormatInt(importT0.Add(10*time.Minute).UnixMilli(), 10)},
	})
	err := importCatalog(t, st, importT0, seated(9))
	if p := catalogimport.ImportProblems(err); len(p) != 1 || p[0].String() != "events[0].seating: 1 taken seats in live cannot be removed: A-10 (held)" {
		t.Fatalf("problems = %v (err %v)", p, err)
	}
	// A draft is invisible to keys, but the import reads it.
	e, err := st.Catalog.GetCatalogEvent(ctx, importOrg, id)
	if err != nil || len(e.Seating.Zones[0].Seats) != 10 || e.Status != ticketing.EventDraft {
		t.Fatalf("catalog event: %v, %v", e, err)
	}
	if _, err := st.Catalog.GetCatalogEvent(ctx, "org_someone_else", id); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Errorf("another organizer's event: err = %v, want not_found", err)
	}
	c.Advance(11 * time.Minute) // the hold has expired
	if err := importCatalog(t, st, importT0, seated(9)); err != nil {
		t.Errorf("after the hold expired: %v", err)
	}
}

func TestImportCatalog_SlugTakenByAnotherEvent(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t, nil)
	if err := importCatalog(t, st, importT0, gaCatalog("Rock Night", 500)); err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(gaCatalog("Other", 10), `"ref": "rock"`, `"ref": "other"`, 1)
	err := importCatalog(t, st, importT0, other)
	want := `events[0].slug: "rock" is already used by event ` + catalogimport.CatalogEventID(importOrg, "rock") + ` (ref "rock")`
	if p := catalogimport.ImportProblems(err); len(p) != 1 || p[0].String() != want {
		t.Fatalf("problems = %v, want %s", p, want)
	}
	// Handing the slug over in one import is fine.
	swap := `{"events": [` + strings.TrimSuffix(strings.TrimPrefix(strings.Replace(gaCatalog("Rock Night", 500), `"slug": "rock"`, `"slug": "rock-old"`, 1), `{"events": [`), `]}`) +
		`, ` + strings.TrimSuffix(strings.TrimPrefix(other, `{"events": [`), `]}`) + `]}`
	if err := importCatalog(t, st, importT0, swap); err != nil {
		t.Errorf("slug hand-over: %v", err)
	}
}

// A draft's slug is taken too, though the API cannot see the draft.
func TestImportCatalog_SlugTakenByADraft(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t, nil)
	draft := strings.Replace(gaCatalog("Rock Night", 500), `"status": "published"`, `"status": "draft"`, 1)
	if !strings.Contains(draft, `"status": "draft"`) {
		t.Fatal("fixture has no published status to turn into a draft")
	}
	if err := importCatalog(t, st, importT0, draft); err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(gaCatalog("Other", 10), `"ref": "rock"`, `"ref": "other"`, 1)
	if p := catalogimport.ImportProblems(importCatalog(t, st, importT0, other)); len(p) != 1 || !strings.Contains(p[0].String(), "events[0].slug") {
		t.Fatalf("problems = %v, want the slug taken by the draft", p)
	}
}

// Reading a missing event or organizer is a not_found error, never a nil value
// without an error.
func TestCatalogReads_MissingIsNotFound(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t, nil)
	ctx := context.Background()
	missing := catalogimport.CatalogEventID(importOrg, "missing")
	cases := []struct {
		name string
		read func() (any, error)
	}{
		{"GetCatalogEvent", func() (any, error) { return st.Catalog.GetCatalogEvent(ctx, importOrg, missing) }},
		{"GetEvent", func() (any, error) { return st.Catalog.GetEvent(ctx, importOrg, missing, ticketing.EnvTest) }},
		{"GetEventWithSeating", func() (any, error) { return st.Catalog.GetEventWithSeating(ctx, importOrg, missing, ticketing.EnvTest) }},
		{"GetEventBySlug", func() (any, error) { return st.Catalog.GetEventBySlug(ctx, importOrg, "missing", ticketing.EnvTest) }},
		{"GetOrganizer", func() (any, error) { return st.Organizers.GetOrganizer(ctx, "org_missing") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.read(); !ticketing.IsCode(err, ticketing.CodeNotFound) {
				t.Errorf("err = %v, want not_found", err)
			}
		})
	}
}
