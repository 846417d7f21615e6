package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ConflictProxy stands in front of DynamoDB Local and does what DynamoDB on
// AWS does and Local does not: a TransactWriteItems holds each of its items
// for Hold from the moment it arrives (AWS holds them from prepare to
// commit; how long Local then takes to answer, queueing included, does not
// count), and a transaction that touches an item another one holds is
// cancelled with the reason TransactionConflict for that item
// (TransactionCanceledException, as AWS answers); a PutItem, UpdateItem or
// DeleteItem of a held item fails with TransactionConflictException. Every
// other request passes through unchanged.
//
// Hold stretches the time an item is busy, so that a test on one machine
// can put the items under the load they would carry at a higher rate on
// AWS: an item's occupancy is its transactions per second times the time
// each holds it.
type ConflictProxy struct {
	URL  string
	Hold time.Duration

	mu   sync.Mutex
	free map[string]time.Time // item -> when its last transaction's hold ends
	hits map[string]int       // item -> requests it made conflict

	transactions, conflicts atomic.Int64
}

// NewConflictProxy starts a proxy in front of target (DynamoDB Local) whose
// items stay held for hold after each transaction; it stops with the test.
func NewConflictProxy(tb testing.TB, target string, hold time.Duration) *ConflictProxy {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	p := &ConflictProxy{Hold: hold, free: map[string]time.Time{}, hits: map[string]int{}}
	fwd := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.serve(w, r, fwd)
	}))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Transactions and Conflicts count the TransactWriteItems requests seen and
// those cancelled for a conflict.
func (p *ConflictProxy) Transactions() int64 { return p.transactions.Load() }

// Conflicts is the count of requests refused for an item another transaction held.
func (p *ConflictProxy) Conflicts() int64 { return p.conflicts.Load() }

func (p *ConflictProxy) serve(w http.ResponseWriter, r *http.Request, fwd http.Handler) {
	target := r.Header.Get("X-Amz-Target")
	op := target[strings.LastIndex(target, ".")+1:]
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	switch op {
	case "TransactWriteItems":
		p.transactions.Add(1)
		keys := transactKeys(body)
		if reasons, conflict := p.take(keys); conflict {
			p.conflicts.Add(1)
			writeCanceled(w, reasons)
			return
		}
	case "PutItem", "UpdateItem", "DeleteItem":
		if p.held(singleKey(body)) {
			p.conflicts.Add(1)
			writeError(w, "TransactionConflictException", "Transaction is ongoing for the item")
			return
		}
	}
	fwd.ServeHTTP(w, r)
}

// take holds keys for Hold from now, unless one of them is held already:
// then it returns each key's cancellation reason.
func (p *ConflictProxy) take(keys []string) ([]string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now, conflict := time.Now(), false
	reasons := make([]string, len(keys))
	for i, k := range keys {
		reasons[i] = "None"
		if now.Before(p.free[k]) {
			reasons[i], conflict = "TransactionConflict", true
			p.hits[k]++
		}
	}
	if conflict {
		return reasons, true
	}
	for _, k := range keys {
		p.free[k] = now.Add(p.Hold)
	}
	if len(p.free) > 100000 {
		for k, t := range p.free {
			if t.Before(now) {
				delete(p.free, k)
			}
		}
	}
	return nil, false
}

// Hottest are the n items that made the most requests conflict, as
// "PK SK: count".
func (p *ConflictProxy) Hottest(n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.hits))
	for k := range p.hits {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return p.hits[keys[i]] > p.hits[keys[j]] })
	var out []string
	for _, k := range keys[:min(n, len(keys))] {
		parts := strings.Split(k, "\x00")
		out = append(out, fmt.Sprintf("%s: %d", strings.Join(parts[1:], " "), p.hits[k]))
	}
	return out
}

func (p *ConflictProxy) held(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return key != "" && time.Now().Before(p.free[key])
}

// keyed is the part of a request (or of a transaction's item) that names an item.
type keyed struct {
	TableName string
	Key       map[string]json.RawMessage
	Item      map[string]json.RawMessage
}

// itemKey names an item by its table and its PK and SK attributes.
func itemKey(k keyed) string {
	attrs := k.Key
	if attrs == nil {
		attrs = k.Item
	}
	return k.TableName + "\x00" + string(attrs["PK"]) + "\x00" + string(attrs["SK"])
}

func transactKeys(body []byte) []string {
	var r struct{ TransactItems []map[string]keyed }
	_ = json.Unmarshal(body, &r)
	keys := make([]string, 0, len(r.TransactItems))
	for _, ti := range r.TransactItems {
		for _, k := range ti { // Put, Update, Delete or ConditionCheck
			keys = append(keys, itemKey(k))
		}
	}
	return keys
}

func singleKey(body []byte) string {
	var k keyed
	if json.Unmarshal(body, &k) != nil {
		return ""
	}
	return itemKey(k)
}

// writeCanceled answers as DynamoDB cancels a transaction: one reason per item.
func writeCanceled(w http.ResponseWriter, reasons []string) {
	type reason struct {
		Code    string
		Message string `json:",omitempty"`
	}
	rs := make([]reason, len(reasons))
	for i, c := range reasons {
		rs[i] = reason{Code: c}
		if c == "TransactionConflict" {
			rs[i].Message = "Transaction is ongoing for the item"
		}
	}
	writeJSON(w, map[string]any{
		"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"Message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(reasons, ", ") + "]",
		"CancellationReasons": rs,
	})
}

func writeError(w http.ResponseWriter, code, msg string) {
	writeJSON(w, map[string]any{"__type": "com.amazonaws.dynamodb.v20120810#" + code, "message": msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	raw, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(raw)
}
