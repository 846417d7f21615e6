package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/api"
	"tix/internal/catalogimport"
	"tix/internal/demo"
	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
)

// payloadBytes is the size of the JSON the Lambda runtime is handed for res
// (aws-lambda-go encodes the handler's result without HTML escaping).
func payloadBytes(t *testing.T, res events.APIGatewayV2HTTPResponse) int {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

// seatingCall reads a seating map through the function as deployed, with
// the function's response limit set to limit (0: LambdaResponseMax).
func seatingCall(t *testing.T, env *lambdaenv.Env, eventID, query, acceptEncoding string, limit int) (events.APIGatewayV2HTTPResponse, int) {
	t.Helper()
	vars := maps.Clone(env.Vars)
	vars["EVENT_ID"] = eventID
	ev := testenv.LoadAPIEvents(t, "catalog-seating", vars)[0].Event
	ev.RawQueryString = query
	if acceptEncoding != "" {
		ev.Headers["accept-encoding"] = acceptEncoding
	}
	env.App.Server.Limits.ResponseBytes = limit
	res, err := handler(env.App)(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return res, payloadBytes(t, res)
}

func wantUnsupported(t *testing.T, res events.APIGatewayV2HTTPResponse, param string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message, Param string } `json:"error"`
	}
	if res.StatusCode != 422 || json.Unmarshal([]byte(res.Body), &e) != nil || e.Error.Code != "unsupported" || e.Error.Param != param {
		t.Fatalf("status %d, body %.400s; want 422 unsupported with param %q", res.StatusCode, res.Body, param)
	}
	t.Logf("422: %s", e.Error.Message)
}

// A seating map answers 200 exactly while the JSON the function returns to
// Lambda (body escaped as a JSON string, or base64 for gzip, with the
// headers) fits the limit, and 422 unsupported one byte over it.
func TestHandler_SeatingLimitIsTheLambdaPayload(t *testing.T) {
	env := lambdaenv.New(t)
	res, n := seatingCall(t, env, "evt_lambda", "", "", 0)
	if res.StatusCode != 200 || res.IsBase64Encoded {
		t.Fatalf("status %d, base64 %v: %.300s", res.StatusCode, res.IsBase64Encoded, res.Body)
	}
	if res, m := seatingCall(t, env, "evt_lambda", "", "", n); res.StatusCode != 200 || m != n {
		t.Fatalf("limit %d (the payload's size): status %d, payload %d bytes", n, res.StatusCode, m)
	}
	res, _ = seatingCall(t, env, "evt_lambda", "", "", n-1)
	wantUnsupported(t, res, "") // one zone, not worth compressing: nothing to do but split the zone
}

// The demo stadium (50,000 seats) through the catalog function as deployed:
// its 8.5 MB map is refused with 422 to a client that does not accept gzip
// (Lambda would refuse it and API Gateway answer a bare 502), sent gzip
// (base64 in the payload, well under 6 MB) to one that does, and read
// one zone at a time without gzip; the gzip payload's limit is exact too.
func TestHandler_StadiumSeatingFitsOrSaysWhatToDo(t *testing.T) {
	env := lambdaenv.New(t)
	file := demo.Catalog(time.Now().UTC())
	for _, e := range file.Events {
		if e.Ref == demo.RefStadium {
			file.Events = []catalogimport.ImportEvent{e}
		}
	}
	evs, err := catalogimport.BuildCatalog("org_l", file, time.Now().UTC())
	if err != nil {
		t.Fatal(err)
	}
	if err := env.App.Store.Catalog.ImportCatalog(context.Background(), "org_l", evs); err != nil {
		t.Fatal(err)
	}
	id := evs[0].ID
	res, _ := seatingCall(t, env, id, "", "", 0)
	wantUnsupported(t, res, "Accept-Encoding")
	res, n := seatingCall(t, env, id, "", "gzip, deflate, br", 0)
	if res.StatusCode != 200 || !res.IsBase64Encoded || res.Headers["Content-Encoding"] != "gzip" || n > api.LambdaResponseMax {
		t.Fatalf("gzip: status %d, base64 %v, Content-Encoding %q, payload %d bytes", res.StatusCode, res.IsBase64Encoded, res.Headers["Content-Encoding"], n)
	}
	t.Logf("stadium, gzip: Lambda payload %d bytes (limit %d)", n, api.LambdaResponseMax)
	if res, m := seatingCall(t, env, id, "", "gzip", n); res.StatusCode != 200 || m != n {
		t.Fatalf("limit %d (the payload's size): status %d, payload %d bytes", n, res.StatusCode, m)
	}
	res, _ = seatingCall(t, env, id, "", "gzip", n-1)
	wantUnsupported(t, res, "zone_id")
	for _, z := range evs[0].Seating.Zones {
		res, n := seatingCall(t, env, id, "zone_id="+z.ID, "", 0)
		if res.StatusCode != 200 || res.IsBase64Encoded || n > api.LambdaResponseMax {
			t.Fatalf("zone %s without gzip: status %d, payload %d bytes: %.300s", z.ID, res.StatusCode, n, res.Body)
		}
		t.Logf("stadium zone %s (%d seats), no gzip: Lambda payload %d bytes", z.Name, len(z.Seats), n)
	}
}
