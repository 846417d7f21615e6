package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Partition is one DynamoDB partition key: of the table (Index "") or of a
// global secondary index.
type Partition struct {
	Index string // "" for the table, else the index name
	Key   string // the partition key value ("?" when the request did not show it)
}

func (p Partition) String() string {
	if p.Index == "" {
		return p.Key
	}
	return p.Index + ":" + p.Key
}

// Units are read and write capacity units.
type Units struct{ R, W float64 }

// av is a DynamoDB JSON attribute value; only strings matter for keys.
type av struct {
	S string `json:"S"`
}

// item is a DynamoDB JSON item or key.
type item map[string]av

// request is what the meter reads of any DynamoDB request body.
type request struct {
	TableName                 string
	IndexName                 string
	Key                       item
	Item                      item
	KeyConditionExpression    string
	UpdateExpression          string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]av
	TransactItems             []map[string]request
	RequestItems              map[string]json.RawMessage
}

// consumed is one entry of a response's ConsumedCapacity (INDEXES).
type consumed struct {
	TableName              string
	CapacityUnits          float64
	Table                  *struct{ CapacityUnits float64 }
	GlobalSecondaryIndexes map[string]struct{ CapacityUnits float64 }
}

// Schema names the key attributes: the table's partition and sort keys and
// each index's partition key (index name -> attribute).
type Schema struct {
	PK, SK  string
	Indexes map[string]string
}

// touch is one item a request works on: its table partition and, for the
// indexes whose partition key the request shows, the index partitions.
type touch struct {
	table   Partition
	sk      string            // the item's sort key, when the request shows it
	indexes map[string]string // index -> partition key value
	check   bool              // a transaction's ConditionCheck: it writes no index entry
	size    int               // the item's size in bytes, when known (a put shows it; else an earlier put of the item)
}

// readOps are the operations billed in read units.
var readOps = map[string]bool{"GetItem": true, "Query": true, "Scan": true, "BatchGetItem": true, "TransactGetItems": true}

// touches are the items a request of op works on, in order.
func (s Schema) touches(op string, r request) []touch {
	switch op {
	case "TransactWriteItems", "TransactGetItems":
		var out []touch
		for _, ti := range r.TransactItems {
			for kind, sub := range ti { // Put, Update, Delete, ConditionCheck or Get
				t := s.one(sub)
				t.check = kind == "ConditionCheck"
				out = append(out, t)
			}
		}
		return out
	case "BatchGetItem", "BatchWriteItem":
		return s.batch(op, r)
	case "Query":
		return []touch{{table: s.queried(r)}}
	case "Scan":
		return []touch{{table: Partition{Index: r.IndexName, Key: "*scan*"}}}
	}
	return []touch{s.one(r)}
}

// one is the item of a single-item request (or of a transaction's part):
// its partition key from Key or Item, and the index keys an Item or an
// update's SET shows.
func (s Schema) one(r request) touch {
	t := touch{indexes: map[string]string{}}
	pk := r.Key[s.PK].S
	if pk == "" {
		pk = r.Item[s.PK].S
	}
	if pk == "" {
		pk = "?"
	}
	t.table = Partition{Key: pk}
	t.sk = r.Key[s.SK].S
	if t.sk == "" {
		t.sk = r.Item[s.SK].S
	}
	set := setValues(r)
	for ix, attr := range s.Indexes {
		if v := r.Item[attr].S; v != "" {
			t.indexes[ix] = v
		} else if v := set[attr]; v != "" {
			t.indexes[ix] = v
		}
	}
	return t
}

var setRe = regexp.MustCompile(`([#A-Za-z_][A-Za-z0-9_]*)\s*=\s*(:[A-Za-z0-9_]+)`)

// setValues are the string values an update's expression assigns, by attribute.
func setValues(r request) map[string]string {
	out := map[string]string{}
	for _, m := range setRe.FindAllStringSubmatch(r.UpdateExpression, -1) {
		name := m[1]
		if strings.HasPrefix(name, "#") {
			name = r.ExpressionAttributeNames[name]
		}
		if v := r.ExpressionAttributeValues[m[2]].S; v != "" {
			out[name] = v
		}
	}
	return out
}

// queried is the partition a Query reads: the value its key condition gives
// the table's or the index's partition key.
func (s Schema) queried(r request) Partition {
	attr := s.PK
	if r.IndexName != "" {
		attr = s.Indexes[r.IndexName]
	}
	for _, m := range setRe.FindAllStringSubmatch(r.KeyConditionExpression, -1) {
		name := m[1]
		if strings.HasPrefix(name, "#") {
			name = r.ExpressionAttributeNames[name]
		}
		if name == attr {
			return Partition{Index: r.IndexName, Key: r.ExpressionAttributeValues[m[2]].S}
		}
	}
	return Partition{Index: r.IndexName, Key: "?"}
}

// batch are the items of a BatchGetItem or BatchWriteItem.
func (s Schema) batch(op string, r request) []touch {
	var out []touch
	tables := make([]string, 0, len(r.RequestItems))
	for t := range r.RequestItems {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		raw := r.RequestItems[t]
		if op == "BatchGetItem" {
			var g struct{ Keys []item }
			_ = json.Unmarshal(raw, &g)
			for _, k := range g.Keys {
				out = append(out, s.one(request{Key: k}))
			}
			continue
		}
		var ws []struct {
			PutRequest    *struct{ Item item }
			DeleteRequest *struct{ Key item }
		}
		_ = json.Unmarshal(raw, &ws)
		for _, w := range ws {
			switch {
			case w.PutRequest != nil:
				out = append(out, s.one(request{Item: w.PutRequest.Item}))
			case w.DeleteRequest != nil:
				out = append(out, s.one(request{Key: w.DeleteRequest.Key}))
			}
		}
	}
	return out
}

// attribute splits the consumed capacity of one request of op over the
// partitions it touched: the table's units evenly over its items, each
// index's units evenly over the items whose index key the request showed
// (else to the index's "?" partition). failed: the request was refused (a
// failed condition); AWS still bills each item (2 units in a transaction),
// which DynamoDB Local does not report.
//
// perItem bills a transaction's writes as AWS does: 2 units per KB of each
// item, each rounded up on its own (a 100-byte item: 2; a 1.5 KB item: 4),
// instead of DynamoDB Local's figure, 2 units per KB of the items' total,
// rounded once (4 small puts: Local 2, AWS 8). An item's size is its put's,
// or an earlier put's of the same item; unknown, it is taken as under 1 KB.
func attribute(op string, ts []touch, cc []consumed, failed, perItem bool) map[Partition]Units {
	out := map[Partition]Units{}
	if len(ts) == 0 {
		return out
	}
	read := readOps[op]
	add := func(p Partition, u float64) {
		x := out[p]
		if read {
			x.R += u
		} else {
			x.W += u
		}
		out[p] = x
	}
	if failed {
		per := 1.0
		if strings.HasPrefix(op, "Transact") {
			per = 2
		}
		for _, t := range ts {
			add(t.table, per)
		}
		return out
	}
	for _, c := range cc {
		table := c.CapacityUnits
		if c.Table != nil {
			table = c.Table.CapacityUnits
		}
		for _, t := range ts {
			if perItem && op == "TransactWriteItems" {
				add(t.table, float64(2*max(1, (t.size+1023)/1024)))
				continue
			}
			add(t.table, table/float64(len(ts)))
		}
		for ix, u := range c.GlobalSecondaryIndexes {
			var keys []string
			for _, t := range ts {
				if v := t.indexes[ix]; v != "" && !t.check {
					keys = append(keys, v)
				}
			}
			if op == "Query" || op == "Scan" { // a read of the index itself
				add(ts[0].table, u.CapacityUnits)
				continue
			}
			if len(keys) == 0 {
				add(Partition{Index: ix, Key: "?"}, u.CapacityUnits)
				continue
			}
			for _, k := range keys {
				add(Partition{Index: ix, Key: k}, u.CapacityUnits/float64(len(keys)))
			}
		}
	}
	return out
}

// Meter is a reverse proxy in front of DynamoDB that asks every request for
// its consumed capacity (ReturnConsumedCapacity INDEXES) and adds it up by
// partition, for the phase set with Phase.
type Meter struct {
	schema Schema
	mu     sync.Mutex
	phase  string
	usage  map[string]map[Partition]Units // phase -> partition -> units
	local  map[string]map[Partition]Units // the same, transactions billed as DynamoDB Local reports them
	// txItems counts, per phase, the transactions each item ("PK SK") was in.
	txItems map[string]map[string]int
	calls   map[string]map[string]int     // phase -> operation -> requests
	spans   map[string]map[Partition]Span // phase -> partition -> when it was used
	last    int                           // requests so far (Quiet)
	// index keys of the items written so far (PK, SK -> index -> key): an
	// update that does not set them still writes the item's index entries.
	known map[[2]string]map[string]string
	sizes map[[2]string]int // the size of each item put so far (PK, SK -> bytes)
	// PerItem bills transactions per item as AWS does (attribute); false:
	// as DynamoDB Local reports them.
	PerItem bool
	now     func() time.Time
}

// Span is the first and last time a partition was used in a phase.
type Span struct{ First, Last time.Time }

// NewMeter starts the proxy in front of target and returns it with its URL.
func NewMeter(target string, schema Schema) (*Meter, string, func(), error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, "", nil, err
	}
	m := newMeter(schema)
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		target := req.Header.Get("X-Amz-Target")
		op := target[strings.LastIndex(target, ".")+1:]
		body, _ := io.ReadAll(req.Body)
		body = askCapacity(body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.Header.Del("Content-Length")
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, req)
		res := rec.Result()
		resBody := rec.Body.Bytes()
		m.note(op, body, res.StatusCode, res.Header.Get("Content-Encoding"), resBody)
		for k, vs := range res.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(resBody)
	}))
	return m, srv.URL, srv.Close, nil
}

func newMeter(schema Schema) *Meter {
	return &Meter{schema: schema, usage: map[string]map[Partition]Units{}, calls: map[string]map[string]int{},
		local: map[string]map[Partition]Units{}, txItems: map[string]map[string]int{},
		spans: map[string]map[Partition]Span{}, known: map[[2]string]map[string]string{}, sizes: map[[2]string]int{},
		PerItem: true, now: time.Now}
}

// resolve fills the index keys and size an item's request did not show from
// what earlier writes of the item showed, and remembers those it did show.
func (m *Meter) resolve(ts []touch) {
	for i := range ts {
		t := &ts[i]
		if t.sk == "" {
			continue
		}
		id := [2]string{t.table.Key, t.sk}
		if t.size > 0 {
			m.sizes[id] = t.size
		} else {
			t.size = m.sizes[id]
		}
		if t.check {
			continue
		}
		k := m.known[id]
		if k == nil {
			k = map[string]string{}
			m.known[id] = k
		}
		for ix, v := range t.indexes {
			k[ix] = v
		}
		for ix, v := range k {
			if t.indexes[ix] == "" {
				t.indexes[ix] = v
			}
		}
	}
}

// askCapacity sets ReturnConsumedCapacity INDEXES on a request body.
func askCapacity(body []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return body
	}
	m["ReturnConsumedCapacity"] = json.RawMessage(`"INDEXES"`)
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// note adds up one request.
func (m *Meter) note(op string, body []byte, status int, encoding string, resBody []byte) {
	if encoding == "gzip" {
		if zr, err := gzip.NewReader(bytes.NewReader(resBody)); err == nil {
			resBody, _ = io.ReadAll(zr)
		}
	}
	var r request
	_ = json.Unmarshal(body, &r)
	ts := m.schema.touches(op, r)
	putSizes(op, body, ts)
	var cc []consumed
	failed := false
	if status == http.StatusOK {
		var out struct{ ConsumedCapacity json.RawMessage }
		_ = json.Unmarshal(resBody, &out)
		cc = parseConsumed(out.ConsumedCapacity)
	} else {
		var e struct {
			Type string `json:"__type"`
		}
		_ = json.Unmarshal(resBody, &e)
		failed = !readOps[op] && (strings.Contains(e.Type, "ConditionalCheckFailed") || strings.Contains(e.Type, "TransactionCanceled"))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !readOps[op] {
		m.resolve(ts)
	}
	units := attribute(op, ts, cc, failed, m.PerItem)
	m.last++
	if m.phase == "" {
		return
	}
	if m.usage[m.phase] == nil {
		m.usage[m.phase], m.calls[m.phase], m.spans[m.phase] = map[Partition]Units{}, map[string]int{}, map[Partition]Span{}
		m.local[m.phase], m.txItems[m.phase] = map[Partition]Units{}, map[string]int{}
	}
	m.calls[m.phase][op]++
	for p, u := range attribute(op, ts, cc, failed, false) {
		x := m.local[m.phase][p]
		m.local[m.phase][p] = Units{R: x.R + u.R, W: x.W + u.W}
	}
	if op == "TransactWriteItems" {
		for _, t := range ts {
			m.txItems[m.phase][t.table.Key+" "+t.sk]++
		}
	}
	now := m.now()
	for p, u := range units {
		x := m.usage[m.phase][p]
		x.R, x.W = x.R+u.R, x.W+u.W
		m.usage[m.phase][p] = x
		sp, ok := m.spans[m.phase][p]
		if !ok {
			sp.First = now
		}
		sp.Last = now
		m.spans[m.phase][p] = sp
	}
}

// parseConsumed reads ConsumedCapacity: one object, or a list (batches and transactions).
func parseConsumed(raw json.RawMessage) []consumed {
	if len(raw) == 0 {
		return nil
	}
	var list []consumed
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one consumed
	if json.Unmarshal(raw, &one) == nil {
		return []consumed{one}
	}
	return nil
}

// Phase makes the requests from now on count for phase ("" counts none).
func (m *Meter) Phase(phase string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.phase = phase
}

// Requests are the requests the proxy passed so far.
func (m *Meter) Requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// Usage is what phase consumed by partition, when each was used, and the
// phase's requests by operation.
func (m *Meter) Usage(phase string) (map[Partition]Units, map[Partition]Span, map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, sp, c := map[Partition]Units{}, map[Partition]Span{}, map[string]int{}
	for k, v := range m.usage[phase] {
		u[k] = v
	}
	for k, v := range m.spans[phase] {
		sp[k] = v
	}
	for k, v := range m.calls[phase] {
		c[k] = v
	}
	return u, sp, c
}

// LocalUsage is Usage's units with transactions billed as DynamoDB Local
// reports them (the model's former rule).
func (m *Meter) LocalUsage(phase string) map[Partition]Units {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.local[phase])
}

// TxItems are the transactions of phase each item ("PK SK") was in.
func (m *Meter) TxItems(phase string) map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.txItems[phase])
}
