package dashboard

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// jsonPathLines maps each member and element of a JSON document to the
// line (1-based) where it starts, in catalogimport's path notation
// (events[2].tiers[0].price); a member is placed on its name's line. It
// reads as far as the document is valid JSON.
func jsonPathLines(data []byte) map[string]int {
	l := &lineWalker{data: data, dec: json.NewDecoder(bytes.NewReader(data)), lines: map[string]int{}}
	l.dec.UseNumber()
	l.value("")
	return l.lines
}

type lineWalker struct {
	data  []byte
	dec   *json.Decoder
	lines map[string]int
}

// start is the offset of the next token (after blanks, commas and colons).
func (l *lineWalker) start() int {
	off := int(l.dec.InputOffset())
	for off < len(l.data) && bytes.IndexByte([]byte(" \t\r\n,:"), l.data[off]) >= 0 {
		off++
	}
	return off
}

func (l *lineWalker) mark(path string, off int) {
	if _, ok := l.lines[path]; !ok {
		l.lines[path] = bytes.Count(l.data[:min(off, len(l.data))], []byte{'\n'}) + 1
	}
}

// value reads one value at path; false when the JSON broke.
func (l *lineWalker) value(path string) bool {
	l.mark(path, l.start())
	tok, err := l.dec.Token()
	if err != nil {
		return false
	}
	switch tok {
	case json.Delim('{'):
		for l.dec.More() {
			off := l.start()
			k, err := l.dec.Token()
			key, ok := k.(string)
			if err != nil || !ok {
				return false
			}
			p := key
			if path != "" {
				p = path + "." + key
			}
			l.mark(p, off)
			if !l.value(p) {
				return false
			}
		}
	case json.Delim('['):
		for i := 0; l.dec.More(); i++ {
			if !l.value(path + "[" + strconv.Itoa(i) + "]") {
				return false
			}
		}
	default:
		return true
	}
	_, err = l.dec.Token() // the closing } or ]
	return err == nil
}
