// Package jsonkeys refuses JSON whose objects name a member twice.
//
// encoding/json keeps the last of two equal names and matches struct fields
// case-insensitively, so {"PaymentId":"1","paymentid":"2"} decodes as "2".
// A signature computed over the body as received (T-Bank's Token) or a
// request validated field by field can then disagree with what the code
// reads. Check refuses such a body before it is decoded: two names of one
// object that are equal under Unicode case folding (the folding encoding/json
// matches with) are a duplicate, at any depth.
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// DuplicateError names a member that appears twice in one object; Path is
// the dotted path of the object holding it ("" for the root).
type DuplicateError struct {
	Path, Name, First string
}

func (e *DuplicateError) Error() string {
	where := "the JSON body"
	if e.Path != "" {
		where = e.Path
	}
	if e.Name == e.First {
		return fmt.Sprintf("%s names %q twice", where, e.Name)
	}
	return fmt.Sprintf("%s names %q and %q, which differ only in case", where, e.First, e.Name)
}

// Param is the member's full dotted path, for an error's param.
func (e *DuplicateError) Param() string {
	if e.Path == "" {
		return e.Name
	}
	return e.Path + "." + e.Name
}

// Check walks body and returns a *DuplicateError for the first object that
// names a member twice (case-insensitively). A malformed body returns the
// decoder's error; callers decoding it afterwards may report that their own way.
func Check(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if !dec.More() {
		return nil // empty body: the decoder that follows says so
	}
	err := walk(dec, "")
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF // the body ends inside a value
	}
	return err
}

// walk reads one value; within an object it remembers each name's fold.
func walk(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]string{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			name, _ := tok.(string)
			key := fold(name)
			if first, dup := seen[key]; dup {
				return &DuplicateError{Path: path, Name: name, First: first}
			}
			seen[key] = name
			if err := walk(dec, join(path, name)); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := walk(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// fold maps each rune to the smallest member of its Unicode case-folding
// orbit, so two names fold alike exactly when strings.EqualFold says equal.
func fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
}
