package api_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// bigSeatedEvent is a theatre of n seats in four seated zones (rows of 25) plus a standing zone.
func bigSeatedEvent(org, id string, n int) *ticketing.Event {
	e := baseEvent(org, id, fmt.Sprintf("Big Hall %d", n), day(12))
	e.HasSeating = true
	e.Tiers = nil
	st := &ticketing.Seating{LayoutID: "lay_" + id, Width: 2000, Height: 1500}
	perZone := n / 4
	for z := 0; z < 4; z++ {
		zoneID := fmt.Sprintf("zone_%s_%d", id, z)
		tierID := fmt.Sprintf("tier_%s_%d", id, z)
		e.Tiers = append(e.Tiers, ticketing.Tier{ID: tierID, Name: fmt.Sprintf("Zone %d", z+1), Price: int64(200000 + z*50000), Capacity: perZone,
			PersonsIncluded: 1, ZoneID: zoneID, Seated: true, Color: "#3F51B5"})
		zone := ticketing.Zone{ID: zoneID, Name: fmt.Sprintf("Zone %d", z+1), Type: ticketing.ZoneSeated, Color: "#3F51B5", SortOrder: float64(z), PrimaryTierID: tierID}
		for i := 0; i < perZone; i++ {
			row, num := fmt.Sprintf("%d", i/25+1), i%25+1
			zone.Seats = append(zone.Seats, ticketing.Seat{ID: fmt.Sprintf("s%d_%d", z, i), Label: fmt.Sprintf("%s-%d", row, num), Row: &row, Number: &num,
				X: float64(num * 20), Y: float64(z*400 + (i/25)*20)})
		}
		st.Zones = append(st.Zones, zone)
		e.Zones = append(e.Zones, ticketing.ZoneSummary{ID: zoneID, Name: zone.Name, Type: ticketing.ZoneSeated, PrimaryTierID: tierID, SeatCount: perZone})
	}
	e.Seating = st
	return e
}

// capacityLog counts catalog requests and their units; the key lookup
// (LookupKey, cached per process) and the rate-limit writes (CountRequest) are counted apart.
type capacityLog struct {
	mu         sync.Mutex
	requests   int
	units      float64
	admitUnits float64
	keyUnits   float64
}

func (c *capacityLog) record(op string, cc *types.ConsumedCapacity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if op == "CountRequest" || op == "LookupKey" {
		if cc != nil && cc.CapacityUnits != nil && op == "CountRequest" {
			c.admitUnits += *cc.CapacityUnits
		} else if cc != nil && cc.CapacityUnits != nil {
			c.keyUnits += *cc.CapacityUnits
		}
		return
	}
	c.requests++
	if cc != nil && cc.CapacityUnits != nil {
		c.units += *cc.CapacityUnits
	}
}

func (c *capacityLog) take() (int, float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, u := c.requests, c.units
	c.requests, c.units = 0, 0
	return r, u
}

// sellSeats marks every k-th seat of a big event sold, as the sales path will.
func (h *harness) sellSeats(e *ticketing.Event, every int) int {
	sold := 0
	for _, z := range e.Seating.Zones {
		for i, s := range z.Seats {
			if i%every == 0 {
				h.putStock(e.ID, "-#S#"+s.ID, map[string]types.AttributeValue{"t": sv(z.PrimaryTierID), "st": sv("sold")})
				sold++
			}
		}
	}
	return sold
}

// The read budgets, measured with ReturnConsumedCapacity on DynamoDB Local
// (which reports the units DynamoDB would charge). The rate limit adds one
// conditional write per budget (store.CountRequest) to every request; it is
// counted apart.
func TestCatalogReads_DynamoDBRequestsAndReadUnits(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	big := bigSeatedEvent(orgA, "evt_big", 2000)
	if err := h.st.Catalog.PutEvent(context.Background(), big); err != nil {
		t.Fatal(err)
	}
	sk, _ := h.key(orgA, auth.Secret)
	var log capacityLog
	h.st.OnCapacity(log.record)

	measure := func(target string) (int, float64) {
		t.Helper()
		log.take()
		wantStatus(t, h.get(target, sk), 200)
		return log.take()
	}
	wantStatus(t, h.get("/v1/ping", sk), 200)
	t.Logf("%-32s 1 conditional write on a counter (sk), %.1f write units", "rate limit", log.admitUnits)
	t.Logf("%-32s 1 GetItem per process per TIX_KEY_CACHE_TTL, %.1f read units", "key lookup", log.keyUnits)
	for _, c := range []struct {
		name, target string
		maxRequests  int
		maxUnits     float64
	}{
		// evt_concert has general-admission tiers of more than 64 places:
		// their stock shards beyond the first are one BatchGetItem more.
		{"event detail", "/v1/events/evt_concert", 3, 2},
		{"tiers", "/v1/events/evt_concert/tiers", 3, 2},
		{"availability", "/v1/events/evt_concert/availability", 3, 2},
		{"default listing", "/v1/events", 1, 10},
		{"seating 2,000 seats, none sold", "/v1/events/evt_big/seating", 2, 20},
	} {
		r, u := measure(c.target)
		t.Logf("%-32s %d requests, %.1f read units", c.name, r, u)
		if r > c.maxRequests || u > c.maxUnits {
			t.Errorf("%s: %d requests and %.1f read units; budget %d and %.0f", c.name, r, u, c.maxRequests, c.maxUnits)
		}
	}
	// The process keeps the decoded map: the next read reads the event item
	// (not its partition's map parts) and the stock.
	r, u := measure("/v1/events/evt_big/seating")
	t.Logf("%-32s %d requests, %.1f read units", "seating 2,000 seats, map kept", r, u)
	if r > 2 || u > 1 {
		t.Errorf("2,000-seat map kept: %d requests, %.1f read units; budget 2 and 1", r, u)
	}
	sold := h.sellSeats(big, 2)
	r, u = measure("/v1/events/evt_big/seating")
	t.Logf("%-32s %d requests, %.1f read units (%d seats sold)", "seating 2,000 seats, half sold", r, u, sold)
	if r > 2 || u > 20 {
		t.Errorf("half-sold 2,000-seat map: %d requests, %.1f read units; budget 2 and 20", r, u)
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(math.Ceil(p*float64(len(d))))-1]
}

// Latency of the catalog's hottest reads through the real handler on DynamoDB
// Local: go test -run '^$' -bench Catalog ./internal/api (make bench).
func BenchmarkCatalog(b *testing.B) {
	h := newBenchHarness(b)
	for _, c := range []struct {
		name, target string
		cache        time.Duration // TIX_CATALOG_CACHE_TTL (the clock stands still: warm after the first read)
		pk           bool          // read with the publishable key (the cache serves only those)
	}{
		{"ListEvents", "/v1/events", 0, false},
		{"Seating2000", "/v1/events/evt_big/seating", 0, false},
		{"Seating20000", "/v1/events/evt_huge/seating", 0, false},
		{"EventDetail", "/v1/events/evt_concert", 0, false},
		{"AvailabilityCold", "/v1/events/evt_concert/availability", 0, true},
		{"AvailabilityWarm", "/v1/events/evt_concert/availability", time.Second, true},
		{"AvailabilitySecretKey", "/v1/events/evt_concert/availability", time.Second, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			h.catalog.Cache = ticketing.NewReadCache(h.clock, c.cache)
			var log capacityLog
			h.st.OnCapacity(log.record)
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				req := httptest.NewRequest("GET", "http://127.0.0.1:8080"+c.target, nil)
				req.Header.Set("Authorization", "Bearer "+h.secret)
				if c.pk {
					req.Header.Set("Authorization", "Bearer "+h.pk)
					req.Header.Set("Origin", shopOrigin)
				}
				rec := httptest.NewRecorder()
				start := time.Now()
				h.handler.ServeHTTP(rec, req)
				lat = append(lat, time.Since(start))
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			reqs, units := log.take()
			h.st.OnCapacity(nil)
			b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(reqs)/float64(b.N), "ddb-reads/op")
			b.ReportMetric(units/float64(b.N), "capacity-units/op")
		})
	}
}
