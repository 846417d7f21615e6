package tbanksim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// SettleRemote runs the pay, reject or expire command on the simulator
// serving at baseURL (its /sim/ endpoints), for operator tools.
func SettleRemote(ctx context.Context, baseURL, orderID string, o Outcome) (Payment, error) {
	body, _ := json.Marshal(map[string]string{"order_id": orderID})
	url := strings.TrimRight(baseURL, "/") + "/sim/" + string(o)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Payment{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Payment{}, fmt.Errorf("is the acquirer simulator running at %s? %w", baseURL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Payment{}, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return Payment{}, fmt.Errorf("%s order %s: %s", o, orderID, e.Error)
		}
		return Payment{}, fmt.Errorf("%s order %s: HTTP %d", o, orderID, resp.StatusCode)
	}
	var p Payment
	if err := json.Unmarshal(raw, &p); err != nil {
		return Payment{}, fmt.Errorf("%s order %s: %w", o, orderID, err)
	}
	return p, nil
}
