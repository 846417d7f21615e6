package store

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Key shapes of the single table; README.md lists every access pattern.
const (
	skOrganizer = "ORG"
	skKey       = "KEY"
	skEventMeta = "META"
	orgListPK   = "ORGS"
	skTier      = "TIER"
	skIdem      = "IDEM"
	skHold      = "HOLD"
	skHoldIP    = "HIP"
	skClientCap = "PCAP"
	skClientRL  = "CRL"
	skOrder     = "ORDER"
	skTicket    = "TKT"
	skEvent     = "EVENT"
	skEndpoint  = "WHE"
	skCount     = "COUNT"
	skOutbound  = "WRL"
	// skRateCounter is the sort key of the API's rate-limit counters (RL#...).
	skRateCounter = "RL"
)

func orgPK(id string) string              { return "ORG#" + id }
func keyPK(hash string) string            { return "KEY#" + hash }
func keyListPK(org string) string         { return "ORG#" + org + "#KEYS" }
func keyIDPK(id string) string            { return "KEYID#" + id }
func eventPK(id string) string            { return "EVT#" + id }
func eventListPK(org string) string       { return "ORG#" + org + "#EVENTS" }
func slugPK(org, slug string) string      { return "SLUG#" + org + "#" + slug }
func stockPK(event, env string) string    { return "STK#" + event + "#" + env }
func stockTierSK(occ, tier string) string { return occ + "#T#" + tier }
func stockSeatSK(occ, seat string) string { return occ + "#S#" + seat }
func tierPK(id string) string             { return "TIER#" + id }
func holdPK(id string) string             { return "HOLD#" + id }
func holdIPPK(key string) string          { return "HIP#" + key }
func orderPK(id string) string            { return "ORD#" + id }
func orderListPK(org, env string) string  { return "ORDERS#" + org + "#" + env }
func ticketPK(env, number string) string  { return "TKT#" + env + "#" + number }
func outboxPK(id string) string           { return "OEVT#" + id }
func promoSK(code string) string          { return "PROMO#" + code }
func mapChunkSK(i int) string             { return "MAP#" + pad3(i) }
func sortTime(t time.Time) string         { return t.UTC().Format(time.RFC3339) }

// Webhook key shapes (webhooks.go).
func endpointPK(id string) string                 { return "WHE#" + id }
func endpointListPK(org, env string) string       { return "WHES#" + org + "#" + env }
func deliverySK(endpointID string) string         { return "WHD#" + endpointID }
func deliveryListPK(org, env string) string       { return "WHDS#" + org + "#" + env }
func deliveryEndpointPK(endpointID string) string { return "WHDE#" + endpointID }

// listShards write-shards the delivery listing indexes: every delivery writes
// its entry in each (put pending, replaced when delivered: about 3 WCU per
// delivery on one shard of each), so at 5,000 deliveries/s of one organizer
// and endpoint a shard takes about 15,000/64 = 235 WCU/s of the 1,000.
const listShards = 64

// outboundPK is a shard of key's one-second outbound window (webhook_limits.go).
func outboundPK(key string, sec int64, shard int) string {
	return "WRL#" + key + "#" + strconv.FormatInt(sec, 10) + "#" + strconv.Itoa(shard)
}

func deliveryListShard(org, env string, shard uint32) string {
	return deliveryListPK(org, env) + "#" + strconv.FormatUint(uint64(shard), 10)
}

func deliveryEndpointShard(endpointID string, shard uint32) string {
	return deliveryEndpointPK(endpointID) + "#" + strconv.FormatUint(uint64(shard), 10)
}

// deliveryListPKs are the partitions a listing merges: the unsharded one of
// deliveries written before the sharding, then every shard.
func deliveryListPKs(org, env string) []string {
	pks := []string{deliveryListPK(org, env)}
	for i := range uint32(listShards) {
		pks = append(pks, deliveryListShard(org, env, i))
	}
	return pks
}

func deliveryEndpointPKs(endpointID string) []string {
	pks := []string{deliveryEndpointPK(endpointID)}
	for i := range uint32(listShards) {
		pks = append(pks, deliveryEndpointShard(endpointID, i))
	}
	return pks
}
func deliveryDuePK(shard uint32) string { return "WHDUE#" + strconv.FormatUint(uint64(shard), 10) }

func keyOf(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": str(pk), "SK": str(sk)}
}

func pad3(i int) string {
	b := []byte{'0', '0', '0'}
	for j := 2; j >= 0 && i > 0; j-- {
		b[j] = byte('0' + i%10)
		i /= 10
	}
	return string(b)
}

func str(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }

func num(v string) *types.AttributeValueMemberN { return &types.AttributeValueMemberN{Value: v} }

// marshal and unmarshal use the domain types' json tags as attribute names, so
// items read like the contract and there is one set of tags to maintain.
func marshal(v any) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMapWithOptions(v, func(o *attributevalue.EncoderOptions) { o.TagKey = "json" })
}

func unmarshal(m map[string]types.AttributeValue, v any) error {
	return attributevalue.UnmarshalMapWithOptions(m, v, func(o *attributevalue.DecoderOptions) { o.TagKey = "json" })
}

// docVersion decodes an item's JSON document (doc) into v and returns its
// version (ver, 0 when absent).
func docVersion(item map[string]types.AttributeValue, v any) (int64, error) {
	if err := json.Unmarshal([]byte(sAttr(item, "doc")), v); err != nil {
		return 0, err
	}
	var ver int64
	if n, ok := item["ver"].(*types.AttributeValueMemberN); ok {
		ver, _ = strconv.ParseInt(n.Value, 10, 64)
	}
	return ver, nil
}
