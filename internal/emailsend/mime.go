package emailsend

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"slices"
	"strings"
	"time"
)

// Envelope is what the raw message needs beyond the Message: the service's
// sending address and the time it is sent.
type Envelope struct {
	From string // the service's address, e.g. tickets@example.com
	Date time.Time
}

// Raw is a message as RFC 5322 bytes and its Message-ID (without brackets).
type Raw struct {
	MessageID string
	Bytes     []byte
}

// Encode builds the raw message: multipart/mixed holding multipart/related
// (multipart/alternative of the text and HTML parts, then the inline images by
// Content-ID) and the attachments. Levels without content are left out.
// Header values with non-ASCII text are RFC 2047 encoded. An address that
// does not parse is ErrRejected: no retry can make it valid.
func Encode(m Message, env Envelope) (Raw, error) {
	from, err := mail.ParseAddress(env.From)
	if err != nil {
		return Raw{}, fmt.Errorf("mail: sending address %q: %v", env.From, err)
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return Raw{}, fmt.Errorf("%w: recipient: %v", ErrRejected, err)
	}
	id := newMessageID(from.Address)
	var b bytes.Buffer
	h := []string{
		"From: " + (&mail.Address{Name: m.FromName, Address: from.Address}).String(),
		"To: " + (&mail.Address{Address: to.Address}).String(),
		"Subject: " + encodeHeader(m.Subject),
		"Date: " + env.Date.Format(time.RFC1123Z),
		"Message-ID: <" + id + ">",
		"MIME-Version: 1.0",
	}
	if m.ReplyTo != "" {
		rt, err := mail.ParseAddress(m.ReplyTo)
		if err != nil {
			return Raw{}, fmt.Errorf("mail: reply-to %q: %v", m.ReplyTo, err)
		}
		h = append(h, "Reply-To: "+rt.String())
	}
	extra, err := extraHeaders(m.Headers)
	if err != nil {
		return Raw{}, err
	}
	for _, line := range append(h, extra...) {
		b.WriteString(fold(line) + "\r\n")
	}
	if err := writeBody(&b, m); err != nil {
		return Raw{}, err
	}
	return Raw{MessageID: id, Bytes: b.Bytes()}, nil
}

func newMessageID(from string) string {
	domain := from[strings.LastIndexByte(from, '@')+1:]
	r := make([]byte, 16)
	_, _ = rand.Read(r)
	return hex.EncodeToString(r) + "@" + domain
}

// encodeHeader RFC 2047-encodes non-ASCII text (as encoded words of at most
// 75 characters each, which fold can put on lines of their own).
func encodeHeader(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	enc := mime.QEncoding.Encode("utf-8", s)
	if enc == s {
		return s
	}
	return enc
}

// fold breaks a header line at spaces so that its lines stay within the
// recommended 78 characters where a space allows (RFC 5322 folding).
func fold(line string) string {
	var b strings.Builder
	for len(line) > 78 {
		i := strings.LastIndexByte(line[:78], ' ')
		if i <= 0 {
			i = strings.IndexByte(line, ' ')
			if i <= 0 {
				break
			}
		}
		b.WriteString(line[:i] + "\r\n")
		line = line[i:]
	}
	b.WriteString(line)
	return b.String()
}

// extraHeaders checks and sorts the message's own headers: X- names only,
// ASCII values without line breaks (no header injection).
func extraHeaders(hs map[string]string) ([]string, error) {
	out := make([]string, 0, len(hs))
	for k, v := range hs {
		if !strings.HasPrefix(k, "X-") || strings.ContainsAny(k, " :\r\n") {
			return nil, fmt.Errorf("mail: header %q: only X- headers may be added", k)
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("mail: header %s: a value must be one line", k)
		}
		out = append(out, textproto.CanonicalMIMEHeaderKey(k)+": "+encodeHeader(v))
	}
	slices.Sort(out)
	return out, nil
}

// writeBody writes the Content-Type header and the body of the outermost part.
func writeBody(b *bytes.Buffer, m Message) error {
	if len(m.Attachments) == 0 {
		return writeRelated(b, m)
	}
	w := multipart.NewWriter(b)
	fmt.Fprintf(b, "%s\r\n\r\n", fold(fmt.Sprintf("Content-Type: multipart/mixed; boundary=%q", w.Boundary())))
	var inner bytes.Buffer
	if err := writeRelated(&inner, m); err != nil {
		return err
	}
	if err := nested(w, inner.Bytes()); err != nil {
		return err
	}
	for _, a := range m.Attachments {
		disp := mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename})
		if err := binaryPart(w, a, disp); err != nil {
			return err
		}
	}
	return w.Close()
}

// writeRelated writes multipart/related (alternative + inline images), or
// only the alternative when there are no images.
func writeRelated(b *bytes.Buffer, m Message) error {
	if len(m.Inline) == 0 {
		return writeAlternative(b, m)
	}
	w := multipart.NewWriter(b)
	fmt.Fprintf(b, "%s\r\n\r\n", fold(fmt.Sprintf("Content-Type: multipart/related; type=\"multipart/alternative\"; boundary=%q", w.Boundary())))
	var inner bytes.Buffer
	if err := writeAlternative(&inner, m); err != nil {
		return err
	}
	if err := nested(w, inner.Bytes()); err != nil {
		return err
	}
	for _, p := range m.Inline {
		if p.ContentID == "" {
			return fmt.Errorf("mail: inline part %q has no Content-ID", p.Filename)
		}
		disp := mime.FormatMediaType("inline", map[string]string{"filename": p.Filename})
		if err := binaryPart(w, p, disp); err != nil {
			return err
		}
	}
	return w.Close()
}

func writeAlternative(b *bytes.Buffer, m Message) error {
	w := multipart.NewWriter(b)
	fmt.Fprintf(b, "%s\r\n\r\n", fold(fmt.Sprintf("Content-Type: multipart/alternative; boundary=%q", w.Boundary())))
	for _, p := range []struct{ ct, body string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		if err := textPart(w, p.ct, p.body); err != nil {
			return err
		}
	}
	return w.Close()
}

// textPart adds a UTF-8 text part: quoted-printable when it is mostly ASCII
// (readable, small), base64 when it is mostly not (Cyrillic triples in
// quoted-printable, base64 grows by a third).
func textPart(w *multipart.Writer, ct, body string) error {
	high := 0
	for i := 0; i < len(body); i++ {
		if body[i] >= 0x80 {
			high++
		}
	}
	if high*4 > len(body) {
		crlf := strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n")
		return binaryPart(w, Part{ContentType: ct + "; charset=utf-8", Data: []byte(crlf)}, "")
	}
	pw, err := w.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {ct + "; charset=utf-8"},
		"Content-Transfer-Encoding": {"quoted-printable"},
	})
	if err != nil {
		return err
	}
	qp := quotedprintable.NewWriter(pw)
	if _, err := qp.Write([]byte(body)); err != nil {
		return err
	}
	return qp.Close()
}

// nested adds a part whose bytes start with their own Content-Type header.
func nested(w *multipart.Writer, part []byte) error {
	head, body, _ := bytes.Cut(part, []byte("\r\n\r\n"))
	ct := strings.TrimPrefix(string(head), "Content-Type: ")
	pw, err := w.CreatePart(textproto.MIMEHeader{"Content-Type": {ct}})
	if err != nil {
		return err
	}
	_, err = pw.Write(body)
	return err
}

// binaryPart adds a base64 part (76-character lines, as RFC 2045 asks).
func binaryPart(w *multipart.Writer, p Part, disposition string) error {
	h := textproto.MIMEHeader{
		"Content-Type":              {p.ContentType},
		"Content-Transfer-Encoding": {"base64"},
	}
	if disposition != "" {
		h.Set("Content-Disposition", disposition)
	}
	if p.ContentID != "" {
		h.Set("Content-ID", "<"+p.ContentID+">")
	}
	pw, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	enc := base64.StdEncoding.EncodeToString(p.Data)
	for len(enc) > 76 {
		if _, err := pw.Write([]byte(enc[:76] + "\r\n")); err != nil {
			return err
		}
		enc = enc[76:]
	}
	_, err = pw.Write([]byte(enc + "\r\n"))
	return err
}
