package ticketing

import "encoding/json"

// TicketQRFor is the QR payload of one ticket of the order, the code its
// email shows beside it and prints on its PDF page: the order-level payload's
// shape (TicketQR) naming that ticket's number and admitting one person, so a
// door scanner that reads the order's code reads this one too. A test-mode
// order's code also says "test": true (beside livemode false), so a scanner
// or a person reading it cannot take it for a live ticket.
func (o *Order) TicketQRFor(ticketNumber string) string {
	b, _ := json.Marshal(struct {
		V            int    `json:"v"`
		OrderID      string `json:"order_id"`
		TicketNumber string `json:"ticket_number"`
		EventID      string `json:"event_id"`
		OccurrenceID string `json:"occurrence_id,omitempty"`
		Quantity     int    `json:"quantity"`
		Livemode     bool   `json:"livemode"`
		Test         bool   `json:"test,omitempty"`
	}{1, o.ID, ticketNumber, o.EventID, o.OccurrenceID, 1, o.Environment == EnvLive, o.Environment != EnvLive})
	return string(b)
}

// UnsignedCodes are the v1 payloads of the order and of each ticket: what a
// process without ticket keys (a test of one part alone) shows instead of the
// signed codes of TicketKeys.TicketCodes.
func (o *Order) UnsignedCodes() (string, map[string]string) {
	codes := make(map[string]string, len(o.Tickets))
	for _, t := range o.Tickets {
		codes[t.Number] = o.TicketQRFor(t.Number)
	}
	return o.TicketQR(), codes
}
