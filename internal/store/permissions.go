package store

import "strings"

// Access is what one Lambda function does to the table through this adapter:
// the DynamoDB actions of its code paths (a TransactWriteItems is authorised
// item by item as PutItem, UpdateItem, DeleteItem or ConditionCheckItem). The
// CDK stack builds each function's role from it, and the functions' tests
// record every call they make to DynamoDB Local and fail on one outside it.
type Access struct {
	// Reads are read actions on the table; Query also on its indexes.
	Reads []string
	// Writes are write actions on every item but the API keys (KeyPrefixes).
	Writes []string
	// RateLimit: the function serves HTTP requests, whose admission counts the
	// request on rate-limit counter items (CountRequest): UpdateItem of
	// RateLimitAttributes of RateLimitKeyPrefix items only; and whose request
	// log (PutRequest) puts RequestLogKeyPrefix items: PutItem of those only.
	RateLimit bool
	// KeyIPs: the function serves secret keys and, with email on, records
	// their client networks (one KEYIP# item per key, day and network, put if
	// absent) and raises the owner's alert of a key used from too many (an
	// EMAIL# job put): PutItem of KeyIPPrefixes items only.
	KeyIPs bool
	// RevokeKeys: the function revokes the API keys a secret scanning
	// partner reports leaked (RevokeKeyByHash): UpdateItem of
	// RevocationAttributes of KeyPrefixes items only, nothing else of a key.
	RevokeKeys bool
	// Keys: the function creates and revokes API keys (the dashboard, with
	// the store calls tixctl makes): its Writes also on KeyPrefixes items.
	Keys bool
}

// RevocationAttributes are the top-level attributes a revocation names on a
// key's items: its keys, when, why and where the key was found.
var RevocationAttributes = []string{"PK", "SK", "revoked_at", "revoke_reason", "leak_source"}

// KeyIPPrefixes are the partition key prefixes of what KeyIPs allows to put.
var KeyIPPrefixes = []string{"KEYIP#", "EMAIL#"}

// KeyPrefixes are the partition keys of the API key items. Only the operator
// (tixctl) and the organizers in the dashboard (its function, Keys) create,
// revoke and change keys; no API function writes them: a request reads its
// key (cached per process) and counts its budgets on counter items of their
// own (RateLimitKeyPrefix). The one API function write is a leaked key's
// revocation (RevokeKeys), limited to RevocationAttributes.
var KeyPrefixes = []string{"KEY#", "KEYID#"}

// RateLimitKeyPrefix is the partition key prefix of the rate-limit counters
// CountRequest updates: per key window and shard, per publishable key's
// client network and window.
const RateLimitKeyPrefix = "RL#"

// RateLimitAttributes are the top-level attributes CountRequest names on a
// counter item: its keys, the count n and its ttl.
var RateLimitAttributes = []string{"PK", "SK", "n", "ttl"}

// Permissions are the table actions of each function (functions/<name>).
// A new store call on a function's path must be added here, or it is denied
// on AWS; the functions' tests catch the calls they make.
var Permissions = map[string]Access{
	// Reads: events, stock (BatchGetItem of the stock shards of every tier
	// over ticketing.ShardUnit places: StockOf), seating, /health's probe.
	"catalog": {Reads: []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"}, RateLimit: true, KeyIPs: true},
	// Holds (transaction of hold, seats, counters, idempotency), per-IP hold
	// counters, releasing seats; the waiting room (docs/waiting-room.md):
	// answers (PutItem), join counters (UpdateItem, Query), protections and
	// spent admissions (GetItem).
	"holds": {Reads: []string{"dynamodb:GetItem", "dynamodb:Query"},
		Writes: []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}, RateLimit: true, KeyIPs: true},
	// Orders, idempotency records, payment, refunds, freeing seats; spending
	// and giving back waiting-room admissions (PutItem, DeleteItem); the
	// buyer's email jobs on GET /orders/{id} (Query); a tier's stock shards
	// (BatchGetItem) when a shard refuses an order or a late payment's
	// reinstatement (the 409 of a sell-out reads them), and the stock StockOf
	// reads.
	"orders": {Reads: []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"},
		Writes: []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}, RateLimit: true, KeyIPs: true},
	// Listing endpoints and deliveries; a redelivery saves the delivery; a
	// secret scanning report revokes the leaked keys (RevokeKeys) and writes
	// their owners' alert jobs (PutItem).
	"webhooks": {Reads: []string{"dynamodb:GetItem", "dynamodb:Query"},
		Writes: []string{"dynamodb:PutItem"}, RateLimit: true, KeyIPs: true, RevokeKeys: true},
	// Fan-out (transaction of deliveries, the event's email jobs and the
	// event's mark), attempts (BatchGetItem of delivery, event and endpoint),
	// endpoint health, the outbound rate counters; email jobs (GetItem of the
	// job, order, event, organizer identity and suppression entry, PutItem to
	// claim and record) and owner alerts (PutItem if absent).
	"deliver": {Reads: []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"},
		Writes: []string{"dynamodb:PutItem", "dynamodb:UpdateItem"}},
	// Order expiry and refund settlement (transactions that put outbox
	// events, update stock and delete seats), the sweep's re-sent deliveries
	// and email jobs (Query of the due index, PutItem to claim); a late payment
	// found by a payment check is reinstated as an order is created
	// (BatchGetItem of the tier's stock shards when one refuses).
	// The organizer dashboard: accounts, members, sessions, links and the
	// audit log (PutItem, UpdateItem, DeleteItem; a sign-up's transaction),
	// API keys (created and revoked in transactions: Keys), webhook endpoints
	// through the webhook service (create, verify, rotate, disable, enable,
	// redeliver), account email jobs (PutItem); Query for memberships,
	// members, the audit log, keys, endpoints and deliveries; sign-in
	// attempts on rate-limit counters; the Payments page's terminal
	// connection (a transaction: the organizer's verification, the payment
	// account, the terminal's pointer put and the old one deleted) and
	// receipt settings (UpdateItem); the Settings page's identity, contacts,
	// test recipients and time zone (UpdateItem); the door's scanner page
	// (docs/door.md): check-ins (UpdateItem, an order's in a transaction),
	// offline uploads (PutItem of each scan's record), the ticket keys
	// (GetItem; PutItem of the first set), the admission list (Query of GSI3).
	"dashboard": {Reads: []string{"dynamodb:GetItem", "dynamodb:Query"},
		Writes: []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}, RateLimit: true, Keys: true},
	// The door: check-ins and their undo (UpdateItem of a ticket's item),
	// the organizer's ticket keys (GetItem; PutItem of the first key set),
	// cancelled events (GetItem, cached), an event's counts (Query of GSI3).
	"checkins": {Reads: []string{"dynamodb:GetItem", "dynamodb:Query"}, Writes: []string{"dynamodb:PutItem", "dynamodb:UpdateItem"}, RateLimit: true, KeyIPs: true},
	"timers": {Reads: []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"},
		Writes: []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}},
}

// IsKeyItem reports whether a partition key is an API key item's.
func IsKeyItem(pk string) bool {
	for _, p := range KeyPrefixes {
		if strings.HasPrefix(pk, p) {
			return true
		}
	}
	return false
}
