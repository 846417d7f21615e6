package api

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// unknownFieldPath is the full path in body (buyer.nmae, items[1].nmae) of a
// member named name that v's type has no field for: encoding/json names the
// member alone. It is name itself when no such path is found.
func unknownFieldPath(body []byte, v any, name string) string {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return name
	}
	if p, ok := pathIn(doc, reflect.TypeOf(v), "", name); ok {
		return p
	}
	return name
}

func pathIn(doc any, t reflect.Type, at, name string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return "", false // decodes itself
	}
	switch d := doc.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct && t.Kind() != reflect.Map {
			return "", false
		}
		for _, k := range slices.Sorted(maps.Keys(d)) {
			elem, known := memberType(t, k)
			switch {
			case !known && k == name:
				return join(at, k), true
			case known:
				if p, ok := pathIn(d[k], elem, join(at, k), name); ok {
					return p, true
				}
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return "", false
		}
		for i, v := range d {
			if p, ok := pathIn(v, t.Elem(), at+"["+strconv.Itoa(i)+"]", name); ok {
				return p, true
			}
		}
	}
	return "", false
}

// memberType is the type a JSON member k decodes into in t (case-insensitive,
// as encoding/json matches), and whether t has it.
func memberType(t reflect.Type, k string) (reflect.Type, bool) {
	switch t.Kind() {
	case reflect.Map:
		return t.Elem(), true
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || f.Anonymous || tag == "-" {
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			if strings.EqualFold(tag, k) {
				return f.Type, true
			}
		}
		return nil, false
	}
	return nil, false
}

func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}
