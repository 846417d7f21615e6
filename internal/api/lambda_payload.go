package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// LambdaResponseMax is the most bytes a function may return to a synchronous
// invocation: above it Lambda's runtime API refuses the response ("Exceeded
// maximum allowed payload size (6291556 bytes)") and API Gateway answers a
// bare 502. The bytes counted are the JSON the function hands to the
// runtime (lambdaPayloadBytes), not the HTTP body.
const LambdaResponseMax = 6_291_556

// lambdaPayloadBytes is the size of the JSON a response becomes on AWS: the
// functions hand it to aws-lambda-go-api-proxy's httpadapter (v2), which puts
// a body that is valid UTF-8 in the event's body string as is (escaped as a
// JSON string) and any other body (gzip) base64-encoded (4/3 the size), with
// the headers joined by commas and Set-Cookie as cookies; aws-lambda-go then
// encodes that event as JSON without HTML escaping.
func lambdaPayloadBytes(h http.Header, status int, body []byte) int {
	res := lambdaResponse{StatusCode: status, Headers: map[string]string{}, Cookies: []string{}}
	for k, v := range h {
		if strings.EqualFold(k, "Set-Cookie") {
			res.Cookies = append(res.Cookies, v...)
			continue
		}
		res.Headers[k] = strings.Join(v, ",")
	}
	var n int
	if utf8.Valid(body) {
		n = jsonStringBytes(body)
	} else {
		res.IsBase64Encoded = true
		n = base64.StdEncoding.EncodedLen(len(body))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return len(body) * 6 // cannot happen: counts as too large
	}
	return buf.Len() + n // the envelope holds "body":"", n is its content
}

// lambdaResponse is the JSON shape of aws-lambda-go's
// events.APIGatewayV2HTTPResponse, which the functions return (the package
// is not imported here: internal/api stays free of Lambda's modules).
// functions/catalog's tests check that the sizes agree to the byte.
type lambdaResponse struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Body              string              `json:"body"`
	IsBase64Encoded   bool                `json:"isBase64Encoded,omitempty"`
	Cookies           []string            `json:"cookies"`
}

// jsonStringBytes is how many bytes encoding/json (no HTML escaping) writes
// for valid UTF-8 s inside a string's quotes.
func jsonStringBytes(s []byte) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6 // \u00XX
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}
