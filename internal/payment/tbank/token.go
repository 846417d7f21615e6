package tbank

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Token signs a request or notification body the way T-Bank does: the root
// object's scalar fields (nested objects and arrays such as Receipt and DATA
// are left out, and so are Token itself and nulls), plus Password, sorted by
// key; their values concatenated; SHA-256; lowercase hex. Strings count by
// their value, numbers by their JSON text, booleans as "true"/"false".
func Token(body []byte, password string) (string, error) {
	var root map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return "", fmt.Errorf("token: body is not a JSON object: %w", err)
	}
	return tokenOf(root, password)
}

func tokenOf(root map[string]json.RawMessage, password string) (string, error) {
	values := map[string]string{"Password": password}
	for k, raw := range root {
		if k == "Token" {
			continue
		}
		v, ok, err := scalar(raw)
		if err != nil {
			return "", fmt.Errorf("token: field %s: %w", k, err)
		}
		if ok {
			values[k] = v
		}
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(values[k])
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:]), nil
}

// scalar renders one root value for the token; ok is false for values the
// token leaves out (objects, arrays, null).
func scalar(raw json.RawMessage) (string, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false, fmt.Errorf("empty value")
	}
	switch raw[0] {
	case '{', '[':
		return "", false, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, err
		}
		return s, true, nil
	case 'n':
		return "", false, nil
	default: // numbers keep their JSON text; true and false are their text
		return string(raw), true, nil
	}
}

// sign adds Token to a marshalled request body.
func sign(body []byte, password string) ([]byte, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(body, &root); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	tok, err := tokenOf(root, password)
	if err != nil {
		return nil, err
	}
	root["Token"], _ = json.Marshal(tok)
	return json.Marshal(root)
}

// CheckToken reports whether body carries a Token that matches password over
// every root scalar field it holds, whatever those fields are.
func CheckToken(body []byte, password string) error {
	var root map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return fmt.Errorf("%w: body is not a JSON object", ErrBadToken)
	}
	var got string
	if raw, ok := root["Token"]; !ok || json.Unmarshal(raw, &got) != nil || got == "" {
		return fmt.Errorf("%w: no Token", ErrBadToken)
	}
	want, err := tokenOf(root, password)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadToken, err)
	}
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(got)), []byte(want)) != 1 {
		return fmt.Errorf("%w: Token does not match", ErrBadToken)
	}
	return nil
}
