package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tix/internal/api"
)

// Limits of the local HTTP server. A client that sends headers or a body more
// slowly than this, or a body shorter than its Content-Length, is answered
// (the handler's read fails: 400 invalid_request) or cut off within seconds
// instead of holding a connection for ever.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second // headers and body
	idleTimeout       = 60 * time.Second // between keep-alive requests
	maxHeaderBytes    = 32 << 10         // net/http allows 4 KiB of slack on top
)

// newHTTPServer is the local runner's server for h.
func newHTTPServer(h http.Handler, read time.Duration) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: min(readHeaderTimeout, read), ReadTimeout: read,
		IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes}
}

// envelopeListener makes the errors net/http answers by itself speak the
// contract's error envelope.
//
// Why hand-written: http.Server writes a few responses straight to the
// connection while it parses a request, before any handler (or middleware)
// runs, and has no hook to change them: a request it cannot parse (a
// malformed request line or URL escape, a bad Host header: 400), an
// unsupported Transfer-Encoding (501), headers over MaxHeaderBytes (431) - each
// as text/plain with the fixed headers below and no Date header - and an
// Expect other than 100-continue (417, no body). The wrapped connection
// recognises exactly those writes (a handler's response always carries a Date
// header, and net/http sorts its headers, so Connection never follows
// Content-Type) and replaces them, status kept, with the JSON envelope.
// On AWS, API Gateway answers such requests before they reach a Lambda.
type envelopeListener struct{ net.Listener }

func (l envelopeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &envelopeConn{Conn: c}, nil
}

type envelopeConn struct{ net.Conn }

// CloseWrite keeps net/http's graceful close (half-close, then a pause) after
// an error, which lets a client still sending read the answer.
func (c *envelopeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// plainErrorHeaders are the headers net/http gives the errors it writes itself.
const plainErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *envelopeConn) Write(p []byte) (int, error) {
	status, detail, ok := serverError(p)
	if !ok {
		return c.Conn.Write(p)
	}
	code, param, msg := describe(status, detail)
	body, err := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg, "param": param}})
	if err != nil {
		return 0, err
	}
	if param == "" {
		body = bytes.Replace(body, []byte(`,"param":""`), nil, 1)
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Length: %d\r\nContent-Type: application/json\r\n"+
		"Date: %s\r\nTix-Request-Id: req_%s\r\nTix-Version: %s\r\n\r\n",
		status, http.StatusText(status), len(body)+1, time.Now().UTC().Format(http.TimeFormat), hex.EncodeToString(id), api.APIVersion)
	if _, err := c.Conn.Write(append(append([]byte(head), body...), '\n')); err != nil {
		return 0, err
	}
	return len(p), nil
}

// serverError recognises a response net/http wrote by itself: its status and
// the text it carried after the status code.
func serverError(p []byte) (int, string, bool) {
	if len(p) < 13 || !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(p[9:12]))
	if err != nil {
		return 0, "", false
	}
	if status == http.StatusExpectationFailed {
		return status, "", true // our handlers never answer 417
	}
	i := bytes.Index(p, []byte(plainErrorHeaders))
	if i < 0 || bytes.Contains(p[:i], []byte("\r\nDate: ")) {
		return 0, "", false
	}
	return status, string(p[i+len(plainErrorHeaders):]), true
}

// describe turns net/http's status and text into the envelope's fields.
func describe(status int, detail string) (code, param, msg string) {
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return "invalid_request", "", fmt.Sprintf("the request headers are larger than the limit of %d KiB", maxHeaderBytes>>10)
	case http.StatusNotImplemented:
		return "invalid_request", "Transfer-Encoding", "unsupported Transfer-Encoding: send a Content-Length or Transfer-Encoding: chunked"
	case http.StatusExpectationFailed:
		return "invalid_request", "Expect", "unsupported Expect header: only 100-continue is understood"
	}
	// "400 Bad Request" alone, or "400 Bad Request: <reason>" for a few reasons.
	if _, reason, ok := strings.Cut(detail, ": "); ok {
		param := ""
		if strings.Contains(reason, "Host header") {
			param = "Host"
		}
		return "invalid_request", param, "malformed request: " + reason
	}
	return "invalid_request", "", "malformed request: the request line, URL (a bad %-escape?) or a header could not be parsed as HTTP/1.1"
}
