package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"tix/internal/ticketing"
)

// The transfer's accept page: server-rendered, no script, served to the
// recipient from the link of their email. GET shows the offer (a link
// scanner opening it accepts nothing); the form's POST accepts it.

// transferPageCSP keeps the page to itself: no script at all, its inline
// style, forms posted only to tix.
const transferPageCSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

type transferTexts struct {
	Offer, OfferMsg, Done, DoneMsg, Invalid, InvalidMsg, Refused, Cancelled, Event, Ticket, Seat, Accept, Note string
}

// pageTexts are the page's words in lang (a function, not a table: the
// functions that do not serve the page, such as catalog, link none of it).
func pageTexts(lang string) transferTexts {
	if lang == "ru" {
		return transferTexts{Offer: "Вам передают билет", OfferMsg: "Этот билет передают вам. Примите его, и свой билет придёт вам письмом; билет отправителя перестанет действовать.",
			Done: "Билет ваш", DoneMsg: "Ваш новый билет %s отправлен вам письмом. Покажите его на входе; прежний билет больше не действует.",
			Invalid: "Ссылка недействительна", InvalidMsg: "Откройте ссылку из письма в точности как есть или попросите отправителя передать билет ещё раз.",
			Refused: "Билет нельзя принять", Cancelled: "Передача отменена", Event: "Событие", Ticket: "Билет", Seat: "Место",
			Accept: "Принять билет", Note: "Ссылка работает один раз."}
	}
	return transferTexts{Offer: "A ticket for you", OfferMsg: "This ticket is being transferred to you. Accept it to get a ticket of your own by email; the sender's ticket stops working.",
		Done: "The ticket is yours", DoneMsg: "Your new ticket %s is on its way to your email. Show it at the door; the old ticket no longer admits.",
		Invalid: "This link is not valid", InvalidMsg: "Open the link from your email exactly as it is, or ask the sender to transfer the ticket again.",
		Refused: "The ticket cannot be accepted", Cancelled: "The transfer was cancelled", Event: "Event", Ticket: "Ticket", Seat: "Seat",
		Accept: "Accept the ticket", Note: "The link works once."}
}

type transferPageData struct {
	Lang, Title, Message string
	Bad, Form, Test      bool
	Event, Ticket, Seat  string
	Action, Token        string
	T                    transferTexts
}

func pageLang(r *http.Request) string {
	if strings.HasPrefix(strings.ToLower(r.Header.Get("Accept-Language")), "ru") {
		return "ru"
	}
	return "en"
}

func (s *Server) transferPage(w http.ResponseWriter, r *http.Request) error {
	token := r.URL.Query().Get("token")
	tr, o, tk, err := s.Transfers.Offer(r.Context(), r.PathValue("id"), token)
	d := s.pageData(r)
	switch {
	case err != nil:
		return s.writeTransferPage(w, r, d, err)
	case tr.Status == ticketing.TransferCancelled:
		d.Title, d.Message, d.Bad = d.T.Cancelled, d.T.InvalidMsg, true
	case tr.Status == ticketing.TransferAccepted:
		d.Title, d.Message = d.T.Done, strings.Replace(d.T.DoneMsg, "%s", tr.NewTicketNumber, 1)
	default:
		d.Title, d.Message, d.Form, d.Token, d.Action = d.T.Offer, d.T.OfferMsg, true, token, r.URL.Path
	}
	d.Event, d.Ticket, d.Test = o.EventTitle, tk.Number, o.Environment != ticketing.EnvLive
	if tk.Seat != nil {
		d.Seat = tk.Seat.Label
	}
	return s.writeTransferPage(w, r, d, nil)
}

func (s *Server) acceptTransfer(w http.ResponseWriter, r *http.Request) error {
	d := s.pageData(r)
	if err := r.ParseForm(); err != nil {
		return s.writeTransferPage(w, r, d, ticketing.Invalid("token", "the form could not be read"))
	}
	tr, n, err := s.Transfers.Accept(r.Context(), r.PathValue("id"), r.PostForm.Get("token"))
	if err != nil {
		return s.writeTransferPage(w, r, d, err)
	}
	d.Title, d.Message = d.T.Done, strings.Replace(d.T.DoneMsg, "%s", tr.NewTicketNumber, 1)
	d.Event, d.Ticket, d.Test = n.EventTitle, tr.NewTicketNumber, n.Environment != ticketing.EnvLive
	if s := n.Tickets[0].Seat; s != nil {
		d.Seat = s.Label
	}
	return s.writeTransferPage(w, r, d, nil)
}

func (s *Server) pageData(r *http.Request) transferPageData {
	l := pageLang(r)
	return transferPageData{Lang: l, T: pageTexts(l)}
}

// writeTransferPage answers the page, or err as a page with its status.
func (s *Server) writeTransferPage(w http.ResponseWriter, r *http.Request, d transferPageData, err error) error {
	status := http.StatusOK
	if err != nil {
		code := ticketing.ErrorCode(err)
		status = statusOf[code]
		if status == 0 || status >= 500 {
			slog.ErrorContext(r.Context(), "transfer page", "error", err)
			return err // the API's error envelope, with the request id to quote
		}
		d = transferPageData{Lang: d.Lang, T: d.T, Bad: true, Title: d.T.Refused}
		if code == ticketing.CodeNotFound || code == ticketing.CodeInvalidRequest {
			d.Title, d.Message = d.T.Invalid, d.T.InvalidMsg
		} else {
			var e *ticketing.Error
			if errors.As(err, &e) {
				d.Message = e.Message
			}
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", transferPageCSP)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(d.render()))
	return nil
}

// transferPageStyle is the page's one inline style sheet.
const transferPageStyle = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f4f5;color:#18181b}
main{max-width:32rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin-top:0}dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{color:#52525b}
button{font:inherit;padding:.75rem 1.5rem;border:0;border-radius:8px;background:#15803d;color:#fff;cursor:pointer}
.note{color:#52525b;font-size:.9rem}.bad{color:#b91c1c}.test{background:#fef08a;padding:.25rem .5rem;border-radius:4px;font-weight:600}`

// render writes the page, every value escaped (escapeHTML).
func (d transferPageData) render() string {
	e := escapeHTML
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="` + e(d.Lang) + `"><head><meta charset="utf-8">` +
		`<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">` +
		`<title>` + e(d.Title) + `</title><style>` + transferPageStyle + `</style></head><body><main>`)
	if d.Test {
		b.WriteString(`<p class="test">TEST · ТЕСТ</p>`)
	}
	h1 := `<h1>`
	if d.Bad {
		h1 = `<h1 class="bad">`
	}
	b.WriteString(h1 + e(d.Title) + `</h1><p>` + e(d.Message) + `</p>`)
	if d.Event != "" {
		b.WriteString(`<dl><dt>` + e(d.T.Event) + `</dt><dd>` + e(d.Event) + `</dd><dt>` + e(d.T.Ticket) + `</dt><dd>` + e(d.Ticket) + `</dd>`)
		if d.Seat != "" {
			b.WriteString(`<dt>` + e(d.T.Seat) + `</dt><dd>` + e(d.Seat) + `</dd>`)
		}
		b.WriteString(`</dl>`)
	}
	if d.Form {
		b.WriteString(`<form method="post" action="` + e(d.Action) + `"><input type="hidden" name="token" value="` + e(d.Token) + `">` +
			`<button type="submit">` + e(d.T.Accept) + `</button></form><p class="note">` + e(d.T.Note) + `</p>`)
	}
	b.WriteString(`</main></body></html>`)
	return b.String()
}
