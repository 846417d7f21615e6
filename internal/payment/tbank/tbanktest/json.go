package tbanktest

import (
	"bytes"
	"encoding/json"
)

func jsonUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// replaceField returns body with one root field set to value, Token untouched.
func replaceField(body []byte, field, value string) ([]byte, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(body, &root); err != nil {
		return nil, err
	}
	root[field], _ = json.Marshal(value)
	return json.Marshal(root)
}
