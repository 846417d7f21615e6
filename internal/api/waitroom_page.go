package api

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strings"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// The hosted queue page, GET /v1/queue/{event_id}?pk=...: server-rendered
// by hand (the holds function links no html/template), its one script inline
// under a nonce, nothing from elsewhere. It answers the proof of work with
// Web Crypto, joins, shows the place and the wait, and hands the admission to
// the storefront: postMessage to ?origin= (the page in the storefront's
// frame) and/or a redirect to ?return= with #tix_admission=<token>. Only the
// publishable key's allowed origins may frame it, be posted to or be
// returned to.

type queueTexts struct {
	Title, Joining, Working, Waiting, Queued, Admitted, Expired, Position, Wait, Opens, Failed, Note string
}

func queuePageTexts(lang string) queueTexts {
	if lang == "ru" {
		return queueTexts{Title: "Очередь на продажу", Joining: "Встаём в очередь…", Working: "Проверяем браузер…",
			Waiting: "Продажа ещё не началась. Ваше место разыграют случайно в момент начала.", Queued: "Вы в очереди. Не закрывайте страницу.",
			Admitted: "Ваша очередь! Переходим к покупке…", Expired: "Время на покупку истекло; встаём в очередь снова.",
			Position: "Ваше место", Wait: "Ожидание", Opens: "Начало продажи", Failed: "Не получилось",
			Note: "Страница сама обновляет место в очереди."}
	}
	return queueTexts{Title: "Waiting room", Joining: "Joining the queue…", Working: "Checking your browser…",
		Waiting: "The sale has not started. Everyone here now gets a random place when it opens.", Queued: "You are in the queue. Keep this page open.",
		Admitted: "It is your turn! Taking you to the sale…", Expired: "Your time to buy ran out; joining the queue again.",
		Position: "Your place", Wait: "Wait", Opens: "Sale opens", Failed: "Something went wrong",
		Note: "This page updates your place by itself."}
}

// queuePageConfig is what the page's script reads (JSON in the page).
type queuePageConfig struct {
	Event  string     `json:"event"`
	PK     string     `json:"pk"`
	Origin string     `json:"origin"`
	Return string     `json:"ret"`
	T      queueTexts `json:"t"`
}

func (s *Server) queuePage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	lang := q.Get("lang")
	if lang != "ru" && lang != "en" {
		lang = pageLang(r)
	}
	cfg := queuePageConfig{Event: r.PathValue("event_id"), PK: q.Get("pk"), Origin: q.Get("origin"), Return: q.Get("return"), T: queuePageTexts(lang)}
	key, err := s.queuePageKey(r, cfg)
	if err != nil {
		writeQueueError(w, err, lang)
		return nil
	}
	nonce := pageNonce()
	ancestors := "'none'"
	if len(key.AllowedOrigins) > 0 {
		ancestors = strings.Join(key.AllowedOrigins, " ")
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+nonce+"'; style-src 'nonce-"+nonce+"'; connect-src 'self'; img-src 'self' data:; frame-ancestors "+ancestors+"; base-uri 'none'; form-action 'none'")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	data, _ := json.Marshal(cfg) // escapes <, > and &: safe inside the script element
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="` + lang + `"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">`)
	b.WriteString(`<title>` + html.EscapeString(cfg.T.Title) + `</title><style nonce="` + nonce + `">` + queuePageCSS + `</style></head><body data-state="joining"><main>`)
	b.WriteString(`<h1>` + html.EscapeString(cfg.T.Title) + `</h1><p id="msg" role="status" aria-live="polite">` + html.EscapeString(cfg.T.Joining) + `</p>`)
	b.WriteString(`<div class="bar" aria-hidden="true"><div id="bar"></div></div><dl><div><dt>` + html.EscapeString(cfg.T.Position) + `</dt><dd id="pos">–</dd></div>`)
	b.WriteString(`<div><dt>` + html.EscapeString(cfg.T.Wait) + `</dt><dd id="wait">–</dd></div><div><dt>` + html.EscapeString(cfg.T.Opens) + `</dt><dd id="opens">–</dd></div></dl>`)
	b.WriteString(`<p class="note">` + html.EscapeString(cfg.T.Note) + `</p></main>`)
	b.WriteString(`<script type="application/json" id="tix-cfg">` + string(data) + `</script><script nonce="` + nonce + `">` + queuePageJS + `</script></body></html>`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(b.String()))
	return nil
}

// queuePageKey checks the page's publishable key, its event's waiting room
// and that ?origin= and ?return= are among the key's allowed origins.
func (s *Server) queuePageKey(r *http.Request, cfg queuePageConfig) (*auth.Key, error) {
	typ, _, ok := auth.ParseSecret(cfg.PK)
	if !ok || typ != auth.Publishable {
		return nil, ticketing.Invalid("pk", "pk must be the storefront's publishable key (pk_test_... or pk_live_...)")
	}
	key, err := s.lookupKey(r.Context(), auth.Hash(cfg.PK), s.Clock.Now())
	if errors.Is(err, auth.ErrUnknownKey) || err == nil && (key.RevokedAt != nil || !key.Usable(s.Clock.Now()) || key.Type != auth.Publishable) {
		return nil, ticketing.Invalid("pk", "pk is not a usable publishable key")
	}
	if err != nil {
		return nil, err
	}
	if s.Waitroom == nil {
		return nil, ticketing.NotFound("waiting room")
	}
	if _, err := s.Waitroom.Protection(r.Context(), ticketing.Tenant{OrganizerID: key.OrganizerID, Environment: key.Environment}, r.PathValue("event_id")); err != nil {
		return nil, err
	}
	if cfg.Origin != "" && !key.OriginAllowed(cfg.Origin) {
		return nil, ticketing.Invalid("origin", "origin must be one of the publishable key's allowed origins")
	}
	if cfg.Return != "" {
		u, err := url.Parse(cfg.Return)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || !key.OriginAllowed(u.Scheme+"://"+u.Host) {
			return nil, ticketing.Invalid("return", "return must be a URL on one of the publishable key's allowed origins")
		}
	}
	return key, nil
}

func writeQueueError(w http.ResponseWriter, err error, lang string) {
	var e *ticketing.Error
	if !errors.As(err, &e) {
		e = &ticketing.Error{Code: ticketing.CodeInternal, Message: "the queue is not available; try again in a moment"}
	}
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	t := queuePageTexts(lang)
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`<!doctype html><html lang="` + lang + `"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>` +
		html.EscapeString(t.Failed) + `</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem"><h1>` +
		html.EscapeString(t.Failed) + `</h1><p>` + html.EscapeString(e.Message) + `</p></body></html>`))
}

func pageNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)
}

const queuePageCSS = `body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:0 1rem;background:#f6f7f9;color:#1b1f24}
main{max-width:32rem;margin:2.5rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 .75rem}#msg{font-size:1.05rem;min-height:2.6em}
.bar{height:10px;background:#e3e6ea;border-radius:5px;overflow:hidden;margin:1rem 0}#bar{height:100%;width:0;background:#1f6feb;transition:width .5s}
dl{display:flex;gap:1rem;flex-wrap:wrap;margin:0}dl div{flex:1 1 8rem}dt{font-size:.8rem;color:#57606a}dd{margin:0;font-size:1.5rem;font-weight:600;white-space:nowrap}
.note{font-size:.85rem;color:#57606a;margin-top:1.25rem}body[data-state=admitted] #bar{background:#1a7f37}body[data-state=failed] #msg{color:#b3261e}`

// queuePageJS: join (challenge, proof of work, join; the queue token kept
// in sessionStorage so that a reload keeps the place), poll the status at
// the pace it asks, hand the admission over.
const queuePageJS = `(() => {
const cfg = JSON.parse(document.getElementById('tix-cfg').textContent), T = cfg.t;
const base = '/v1/queue/' + encodeURIComponent(cfg.event), store = 'tix-queue-' + cfg.event;
const $ = (id) => document.getElementById(id);
const say = (state, msg) => { document.body.dataset.state = state; $('msg').textContent = msg; };
async function call(path, init) {
  init = init || {};
  init.headers = Object.assign({'Authorization': 'Bearer ' + cfg.pk}, init.headers || {});
  const r = await fetch(base + path, init);
  const b = await r.json();
  if (!r.ok) { const e = new Error((b.error && b.error.message) || ('HTTP ' + r.status)); e.status = r.status; throw e; }
  return b;
}
function zeros(d) { let n = 0; for (const c of d) { if (c === 0) { n += 8; continue; } return n + Math.clz32(c) - 24; } return n; }
async function solve(ch, bits) {
  const enc = new TextEncoder();
  for (let n = 0; ; n++) {
    const d = new Uint8Array(await crypto.subtle.digest('SHA-256', enc.encode(ch + n)));
    if (zeros(d) >= bits) return String(n);
  }
}
async function join() {
  say('working', T.Working);
  const c = await call('/challenge');
  const nonce = await solve(c.challenge, c.difficulty);
  const j = await call('/join', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({challenge: c.challenge, nonce: nonce})});
  sessionStorage.setItem(store, j.token);
  return j.token;
}
function mmss(s) { const m = Math.floor(s / 60); return m > 0 ? m + ' min ' + (s % 60) + ' s' : s + ' s'; }
function show(s) {
  $('pos').textContent = s.position.toLocaleString();
  $('wait').textContent = mmss(s.estimated_wait_seconds);
  $('opens').textContent = new Date(s.opens_at).toLocaleString(document.documentElement.lang, {month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit'});
  const done = s.position > 0 ? Math.min(100, Math.round(100 * s.admitted_through / s.position)) : 0;
  $('bar').style.width = (s.state === 'admitted' ? 100 : done) + '%';
  say(s.state, s.state === 'waiting' ? T.Waiting : s.state === 'admitted' ? T.Admitted : s.state === 'expired' ? T.Expired : T.Queued);
}
function hand(a) {
  if (cfg.origin && window.parent !== window) {
    window.parent.postMessage({type: 'tix.admission', event_id: cfg.event, admission: a.token, expires_at: a.expires_at}, cfg.origin);
  }
  if (cfg.ret) { location.assign(cfg.ret + (cfg.ret.indexOf('#') < 0 ? '#' : '&') + 'tix_admission=' + encodeURIComponent(a.token)); }
}
async function run() {
  let tok = sessionStorage.getItem(store) || await join();
  for (;;) {
    let s;
    try { s = await call('/status?token=' + encodeURIComponent(tok)); }
    catch (e) { if (e.status === 400 || e.status === 403) { sessionStorage.removeItem(store); tok = await join(); continue; } throw e; }
    show(s);
    if (s.state === 'admitted') { hand(s.admission); return; }
    if (s.state === 'expired') { sessionStorage.removeItem(store); tok = await join(); continue; }
    await new Promise((ok) => setTimeout(ok, Math.max(1, s.poll_after_seconds) * 1000));
  }
}
run().catch((e) => say('failed', T.Failed + ': ' + e.message));
})();`
