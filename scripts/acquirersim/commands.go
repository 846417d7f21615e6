package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// usage lists the commands besides serving.
const usage = `usage:
  acquirersim [-addr host:port]            serve the simulator
  acquirersim pay|reject|expire <order id>  settle the order's newest unpaid payment
  acquirersim refund <payment id> [kopecks]  refund in the bank's portal, outside tix (all that is left by default)
  acquirersim faults [json]                 show the fault switches, or set them
  acquirersim payments <order id>           the order's payments at the simulated bank
  acquirersim notifications                 every notification and its fate
The commands talk to TIX_ACQUIRER_SIM_URL (http://127.0.0.1:8089).`

// command runs one operator command against the simulator at base and
// prints its answer to out.
func command(ctx context.Context, base string, args []string, out io.Writer) error {
	var method, path, body string
	switch {
	case len(args) == 2 && (args[0] == "pay" || args[0] == "reject" || args[0] == "expire"):
		b, _ := json.Marshal(map[string]string{"order_id": args[1]})
		method, path, body = http.MethodPost, "/sim/"+args[0], string(b)
	case (len(args) == 2 || len(args) == 3) && args[0] == "refund":
		var amount int64
		if len(args) == 3 {
			if _, err := fmt.Sscan(args[2], &amount); err != nil || amount <= 0 {
				return fmt.Errorf("refund amount %q: want kopecks > 0", args[2])
			}
		}
		b, _ := json.Marshal(map[string]any{"payment_id": args[1], "amount": amount})
		method, path, body = http.MethodPost, "/sim/refund", string(b)
	case len(args) == 1 && args[0] == "faults":
		method, path = http.MethodGet, "/sim/faults"
	case len(args) == 2 && args[0] == "faults":
		method, path, body = http.MethodPost, "/sim/faults", args[1]
	case len(args) == 2 && args[0] == "payments":
		method, path = http.MethodGet, "/sim/payments?order_id="+url.QueryEscape(args[1])
	case len(args) == 1 && args[0] == "notifications":
		method, path = http.MethodGet, "/sim/notifications"
	default:
		return fmt.Errorf("unknown command %q\n%s", strings.Join(args, " "), usage)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("is the simulator running at %s? %w", base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, raw, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(raw)
	}
	fmt.Fprint(out, pretty.String())
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	return nil
}
