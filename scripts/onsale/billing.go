package main

import "encoding/json"

// putSizes sets the size of each item a PutItem or a transaction's Put
// writes (the transaction's touches are in the order of its items).
func putSizes(op string, body []byte, ts []touch) {
	switch op {
	case "PutItem":
		var r struct{ Item map[string]json.RawMessage }
		if json.Unmarshal(body, &r) == nil && len(ts) == 1 {
			ts[0].size = itemSize(r.Item)
		}
	case "TransactWriteItems":
		var r struct {
			TransactItems []struct {
				Put *struct{ Item map[string]json.RawMessage }
			}
		}
		if json.Unmarshal(body, &r) != nil || len(r.TransactItems) != len(ts) {
			return
		}
		for i, ti := range r.TransactItems {
			if ti.Put != nil {
				ts[i].size = itemSize(ti.Put.Item)
			}
		}
	}
}

// itemSize is an item's size as DynamoDB counts it: each attribute's name
// and value (strings and binaries by their bytes, numbers by about one
// byte per two digits plus one, 3 bytes of overhead per list or map, 1 per
// element of it, 1 for a boolean or null).
func itemSize(item map[string]json.RawMessage) int {
	n := 0
	for name, raw := range item {
		n += len(name) + valueSize(raw)
	}
	return n
}

func valueSize(raw json.RawMessage) int {
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	n := 0
	for kind, x := range v {
		switch kind {
		case "S":
			var s string
			_ = json.Unmarshal(x, &s)
			n += len(s)
		case "B":
			var b []byte
			_ = json.Unmarshal(x, &b)
			n += len(b)
		case "N":
			var s string
			_ = json.Unmarshal(x, &s)
			n += (len(s)+1)/2 + 1
		case "BOOL", "NULL":
			n++
		case "SS", "NS", "BS":
			var l []string
			_ = json.Unmarshal(x, &l)
			for _, s := range l {
				n += len(s)
			}
		case "L":
			var l []json.RawMessage
			_ = json.Unmarshal(x, &l)
			n += 3
			for _, e := range l {
				n += 1 + valueSize(e)
			}
		case "M":
			var m map[string]json.RawMessage
			_ = json.Unmarshal(x, &m)
			n += 3 + itemSize(m) + len(m)
		}
	}
	return n
}
