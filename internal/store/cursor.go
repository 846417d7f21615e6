package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// cursorCodec makes opaque, tamper-evident page cursors: the last key of a page
// plus a fingerprint of the query it belongs to, signed with HMAC-SHA256. A cursor
// from another query, or an edited one, is rejected as invalid_request/cursor.
type cursorCodec struct{ secret []byte }

type cursorBody struct {
	Key   map[string]string `json:"k"`
	Query string            `json:"q"`
}

const cursorMACLen = 16

func (c cursorCodec) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte("tix-cursor-v1\x00"))
	m.Write(payload)
	return m.Sum(nil)[:cursorMACLen]
}

// encode signs the last evaluated key (string attributes only) for the query fingerprint.
func (c cursorCodec) encode(key map[string]types.AttributeValue, query string) string {
	body := cursorBody{Key: map[string]string{}, Query: query}
	for k, v := range key {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			body.Key[k] = s.Value
		}
	}
	payload, _ := json.Marshal(body)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(c.mac(payload))
}

func invalidCursor() error {
	return ticketing.Invalid("cursor", "cursor is not valid for this query; pass next_cursor from the previous page verbatim, with the same filters")
}

// decode verifies a cursor and returns the key to start after.
func (c cursorCodec) decode(cursor, query string) (map[string]types.AttributeValue, error) {
	if len(cursor) > 2048 {
		return nil, invalidCursor()
	}
	p, sig, ok := strings.Cut(cursor, ".")
	if !ok {
		return nil, invalidCursor()
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, c.mac(payload)) {
		return nil, invalidCursor()
	}
	var body cursorBody
	if err := json.Unmarshal(payload, &body); err != nil || body.Query != query || len(body.Key) == 0 {
		return nil, invalidCursor()
	}
	key := make(map[string]types.AttributeValue, len(body.Key))
	for k, v := range body.Key {
		key[k] = &types.AttributeValueMemberS{Value: v}
	}
	return key, nil
}
