package catalogimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// strictDecoder reads a catalog file into the import types the way
// json.Decoder.DisallowUnknownFields would, but it does not stop at the first
// problem: every unknown field, duplicate field and wrong type is reported with
// its path and its line and column. Only a syntax error stops it, because after
// one nothing that follows can be trusted.
type strictDecoder struct {
	data  []byte
	dec   *json.Decoder
	errs  ImportErrors
	bad   map[string]bool // paths that failed to decode; validation skips them
	fatal bool
}

// decodeCatalogFile decodes data into f. It returns the problems found, the set
// of paths that failed to decode (so that validation does not report a missing
// value where a wrong one was given) and whether the JSON itself was broken.
func decodeCatalogFile(data []byte, f *CatalogFile) (ImportErrors, map[string]bool, bool) {
	d := &strictDecoder{data: data, dec: json.NewDecoder(bytes.NewReader(data)), bad: map[string]bool{}}
	d.dec.UseNumber()
	if len(bytes.TrimSpace(data)) == 0 {
		d.errs = append(d.errs, ImportError{Message: `file is empty: expected a JSON object {"events": [...]}`})
		return d.errs, d.bad, true
	}
	d.value("", reflect.ValueOf(f).Elem())
	if !d.fatal {
		off := d.start()
		if _, err := d.dec.Token(); err != io.EOF {
			d.failAt("", off, "unexpected data after the top-level object")
		}
	}
	return d.errs, d.bad, d.fatal
}

// start is the offset where the next token begins.
func (d *strictDecoder) start() int64 {
	off := d.dec.InputOffset()
	for off < int64(len(d.data)) {
		switch d.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

// lineCol turns a byte offset into a 1-based line and column (in characters).
func (d *strictDecoder) lineCol(off int64) (int, int) {
	if off > int64(len(d.data)) {
		off = int64(len(d.data))
	}
	before := d.data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[lineStart:]) + 1
}

func (d *strictDecoder) errorAt(path string, off int64, msg string) {
	line, col := d.lineCol(off)
	d.errs = append(d.errs, ImportError{Path: path, Message: msg, Line: line, Column: col})
	d.bad[path] = true
}

// failAt records a syntax error; decoding stops.
func (d *strictDecoder) failAt(path string, off int64, msg string) {
	d.errorAt(path, off, msg)
	d.fatal = true
}

func (d *strictDecoder) syntax(path string, off int64, err error) {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		d.failAt(path, se.Offset, "invalid JSON: "+strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		d.failAt(path, int64(len(d.data)), "invalid JSON: unexpected end of file")
	default:
		d.failAt(path, off, "invalid JSON: "+strings.TrimPrefix(err.Error(), "json: "))
	}
}

// next reads one token, recording a syntax error.
func (d *strictDecoder) next(path string) (json.Token, int64, bool) {
	off := d.start()
	tok, err := d.dec.Token()
	if err != nil {
		d.syntax(path, off, err)
		return nil, off, false
	}
	return tok, off, true
}

// skipRest consumes the rest of an object or array whose opening token was read.
func (d *strictDecoder) skipRest(path string, tok json.Token) {
	if delim, ok := tok.(json.Delim); !ok || (delim != '{' && delim != '[') {
		return
	}
	for depth := 1; depth > 0; {
		t, _, ok := d.next(path)
		if !ok {
			return
		}
		if delim, ok := t.(json.Delim); ok {
			if delim == '{' || delim == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// value decodes the next JSON value into v.
func (d *strictDecoder) value(path string, v reflect.Value) {
	if d.fatal {
		return
	}
	tok, off, ok := d.next(path)
	if !ok {
		return
	}
	d.token(path, tok, off, v)
}

// token decodes the value that starts with tok (at offset off) into v.
func (d *strictDecoder) token(path string, tok json.Token, off int64, v reflect.Value) {
	if tok == nil {
		v.SetZero() // null is the same as leaving the field out
		return
	}
	if v.Type() == rawMessageType {
		d.rawObject(path, tok, off, v)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.token(path, tok, off, p.Elem())
		v.Set(p)
	case reflect.Struct:
		if tok != json.Delim('{') {
			d.wrong(path, tok, off, "an object")
			return
		}
		d.object(path, v)
	case reflect.Slice:
		if tok != json.Delim('[') {
			d.wrong(path, tok, off, "an array")
			return
		}
		d.array(path, v)
	case reflect.String:
		s, ok := tok.(string)
		if !ok {
			d.wrong(path, tok, off, "a string")
			return
		}
		v.SetString(s)
	case reflect.Int, reflect.Int64, reflect.Int32:
		d.integer(path, tok, off, v)
	case reflect.Float64:
		d.float(path, tok, off, v)
	case reflect.Bool:
		b, ok := tok.(bool)
		if !ok {
			d.wrong(path, tok, off, "true or false")
			return
		}
		v.SetBool(b)
	default:
		panic(fmt.Sprintf("catalog import: no decoding for %s", v.Type()))
	}
}

// wrong reports a value of the wrong type and skips the rest of it.
func (d *strictDecoder) wrong(path string, tok json.Token, off int64, want string) {
	d.errorAt(path, off, "must be "+want+", not "+describeToken(tok))
	d.skipRest(path, tok)
}

// rawObject keeps an object opaque to tix as its bytes.
func (d *strictDecoder) rawObject(path string, tok json.Token, off int64, v reflect.Value) {
	if tok != json.Delim('{') {
		d.wrong(path, tok, off, "an object")
		return
	}
	d.skipRest(path, tok)
	if d.fatal {
		return
	}
	raw := bytes.Clone(d.data[off:d.dec.InputOffset()])
	v.SetBytes(raw)
}

func (d *strictDecoder) integer(path string, tok json.Token, off int64, v reflect.Value) {
	n, ok := tok.(json.Number)
	if !ok {
		d.wrong(path, tok, off, "an integer")
		return
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) || (err == nil && v.OverflowInt(i)):
		d.errorAt(path, off, "integer "+shorten(string(n))+" is out of range")
	case err != nil:
		d.errorAt(path, off, "must be an integer, not "+shorten(string(n)))
	default:
		v.SetInt(i)
	}
}

func (d *strictDecoder) float(path string, tok json.Token, off int64, v reflect.Value) {
	n, ok := tok.(json.Number)
	if !ok {
		d.wrong(path, tok, off, "a number")
		return
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		d.errorAt(path, off, "number "+shorten(string(n))+" is out of range")
		return
	}
	v.SetFloat(f)
}

// object decodes the members of an object whose '{' was read into struct v.
func (d *strictDecoder) object(path string, v reflect.Value) {
	fields := fieldsOf(v.Type())
	seen := map[string]bool{}
	for !d.fatal && d.dec.More() {
		tok, off, ok := d.next(path)
		if !ok {
			return
		}
		key, _ := tok.(string)
		fp := joinPath(path, key)
		idx, known := fields[key]
		switch {
		case !known:
			d.errorAt(fp, off, "unknown field"+suggestField(key, fields))
			d.skipValue(fp)
		case seen[key]:
			d.errorAt(fp, off, "duplicate field")
			d.skipValue(fp)
		default:
			seen[key] = true
			d.value(fp, v.Field(idx))
		}
	}
	if !d.fatal {
		d.next(path) // '}'
	}
}

// array decodes the elements of an array whose '[' was read into slice v.
func (d *strictDecoder) array(path string, v reflect.Value) {
	elems := reflect.MakeSlice(v.Type(), 0, 0)
	for i := 0; !d.fatal && d.dec.More(); i++ {
		elem := reflect.New(v.Type().Elem()).Elem()
		d.value(path+"["+strconv.Itoa(i)+"]", elem)
		elems = reflect.Append(elems, elem)
	}
	if !d.fatal {
		d.next(path) // ']'
	}
	v.Set(elems)
}

func (d *strictDecoder) skipValue(path string) {
	tok, _, ok := d.next(path)
	if ok {
		d.skipRest(path, tok)
	}
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		if t == '{' {
			return "an object"
		}
		if t == '[' {
			return "an array"
		}
		return string(t)
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return strconv.FormatBool(t)
	}
	return fmt.Sprintf("%v", tok)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var fieldCache sync.Map // reflect.Type -> map[string]int

// fieldsOf maps the JSON names of a struct's fields to their indexes. Names are
// matched exactly (unlike encoding/json, which ignores case).
func fieldsOf(t reflect.Type) map[string]int {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]int)
	}
	m := map[string]int{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	fieldCache.Store(t, m)
	return m
}

// suggestField names a known field close to an unknown one (a typo).
func suggestField(key string, fields map[string]int) string {
	best, bestDist := "", 3
	lk := strings.ToLower(key)
	for name := range fields {
		if dist := editDistance(lk, name); dist < bestDist || (dist == bestDist && best != "" && name < best) {
			best, bestDist = name, dist
		}
	}
	if best == "" || len(key) > 64 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// shorten keeps a quoted value readable in a message.
func shorten(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
