package dashboard

import (
	"context"
	"net/http"
	"strings"

	"tix/internal/dashboard/account"
	"tix/internal/emailjobs"
	"tix/internal/ticketing"
)

// The Settings page (owners): how the organizer's emails present it
// (sender name, reply-to, support contact, logo), whom its alerts reach
// (contacts), its language and time zone, and the test-mode allow-list.
// Each change goes through the store methods tixctl's organizers
// set-identity, set-contacts and test-recipients use, checked by the same
// emailjobs checks.

// Identities are the organizers' email identities (store.Emails).
type Identities interface {
	GetIdentity(ctx context.Context, org string) (*emailjobs.Identity, error)
	SetIdentity(ctx context.Context, org string, fields map[string]string) (*emailjobs.Identity, error)
	SetContacts(ctx context.Context, org string, contacts []string) (*emailjobs.Identity, error)
	AddTestRecipient(ctx context.Context, org, addr string) (*emailjobs.Identity, error)
	RemoveTestRecipient(ctx context.Context, org, addr string) (*emailjobs.Identity, error)
}

func (s *Server) settingsRoutes(mux *http.ServeMux, o string) {
	mux.HandleFunc("GET "+o+"/settings", s.inOrg(account.ManageSettings, s.settingsPage))
	mux.HandleFunc("POST "+o+"/settings/email", s.inOrg(account.ManageSettings, s.saveEmailIdentity))
	mux.HandleFunc("POST "+o+"/settings/contacts", s.inOrg(account.ManageSettings, s.saveContacts))
	mux.HandleFunc("POST "+o+"/settings/general", s.inOrg(account.ManageSettings, s.saveGeneral))
	mux.HandleFunc("POST "+o+"/settings/test-recipients", s.inOrg(account.ManageSettings, s.addTestRecipient))
	mux.HandleFunc("POST "+o+"/settings/test-recipients/remove", s.inOrg(account.ManageSettings, s.removeTestRecipient))
}

// identityFields are the identity fields of the email form.
var identityFields = []string{"sender_name", "reply_to", "support", "logo_url"}

// settingsData is the Settings page: the identity as stored, the time
// zone, the choices, and the field errors of the form sent (field ->
// message key).
type settingsData struct {
	Identity  *emailjobs.Identity
	TimeZone  string
	TimeZones []string
	Languages []string
	Errors    map[string]string
	Max       int // test recipients
}

func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	s.showSettings(w, r, o, nil, http.StatusOK)
}

// showSettings renders the page; the fields of the form that was not sent
// (or all, on a GET) show what is stored.
func (s *Server) showSettings(w http.ResponseWriter, r *http.Request, o *orgReq, errs map[string]string, status int) {
	ctx := r.Context()
	id, err := s.Identities.GetIdentity(ctx, o.org())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	st, err := s.Accounts.GetSettings(ctx, o.org())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	stored := map[string]string{"sender_name": id.SenderName, "reply_to": id.ReplyTo, "support": id.Support, "logo_url": id.LogoURL,
		"contacts": strings.Join(id.Contacts, "\n"), "language": id.Lang(), "time_zone": st.TimeZone}
	for k, v := range stored {
		if _, sent := o.v.Form[k]; !sent {
			o.v.Form[k] = v
		}
	}
	o.v.Data = settingsData{Identity: id, TimeZone: st.TimeZone, TimeZones: TimeZones, Languages: emailjobs.Languages,
		Errors: errs, Max: emailjobs.MaxTestRecipients}
	s.render(w, r, status, "settings", o.v)
}

// settingsSaved shows the page after a change, with its audit entry.
func (s *Server) settingsSaved(w http.ResponseWriter, r *http.Request, o *orgReq, action, detail string) {
	s.did(r, o, action, o.org(), detail)
	o.v.Message, o.v.Form = "set.saved", map[string]string{}
	s.showSettings(w, r, o, nil, http.StatusOK)
}

// invalid shows the page with the error of a field (a check's or a
// service's invalid_request), or answers another error.
func (s *Server) settingsInvalid(w http.ResponseWriter, r *http.Request, o *orgReq, err error) {
	if field := fieldError(err); field != "" {
		s.showSettings(w, r, o, map[string]string{field: "set.bad_" + field}, http.StatusBadRequest)
		return
	}
	s.serviceError(w, r, err, func(msg string, status int) { o.v.Error = msg; s.showSettings(w, r, o, nil, status) })
}

// saveEmailIdentity sets the sender name, reply-to, support contact and
// logo (an empty field removes it).
func (s *Server) saveEmailIdentity(w http.ResponseWriter, r *http.Request, o *orgReq) {
	f := formValues(r, identityFields...)
	for k, v := range f {
		f[k] = strings.TrimSpace(v)
	}
	o.v.Form = f
	for _, k := range identityFields {
		if err := emailjobs.CheckIdentityField(k, f[k]); err != nil {
			s.settingsInvalid(w, r, o, err)
			return
		}
	}
	if _, err := s.Identities.SetIdentity(r.Context(), o.org(), f); err != nil {
		s.settingsInvalid(w, r, o, err)
		return
	}
	s.settingsSaved(w, r, o, "settings.email", f["sender_name"])
}

// saveContacts replaces the owner contacts that receive alerts (and whose
// addresses test-mode emails may reach).
func (s *Server) saveContacts(w http.ResponseWriter, r *http.Request, o *orgReq) {
	f := formValues(r, "contacts")
	o.v.Form = f
	contacts := lines(f["contacts"])
	for i, c := range contacts {
		contacts[i] = emailjobs.Normalize(c)
	}
	if err := emailjobs.CheckContacts(contacts); err != nil {
		s.settingsInvalid(w, r, o, err)
		return
	}
	if _, err := s.Identities.SetContacts(r.Context(), o.org(), contacts); err != nil {
		s.settingsInvalid(w, r, o, err)
		return
	}
	s.settingsSaved(w, r, o, "settings.contacts", strings.Join(contacts, " "))
}

// saveGeneral sets the organizer's language (its emails', and its
// dashboard pages' for members who have not picked one) and time zone.
func (s *Server) saveGeneral(w http.ResponseWriter, r *http.Request, o *orgReq) {
	f := formValues(r, "language", "time_zone")
	o.v.Form = f
	if err := emailjobs.CheckIdentityField("language", f["language"]); err != nil {
		s.settingsInvalid(w, r, o, err)
		return
	}
	if !validZone(f["time_zone"]) {
		s.showSettings(w, r, o, map[string]string{"time_zone": "signup.bad_zone"}, http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	if _, err := s.Identities.SetIdentity(ctx, o.org(), map[string]string{"language": f["language"]}); err != nil {
		s.settingsInvalid(w, r, o, err)
		return
	}
	if err := s.Accounts.SetTimeZone(ctx, o.org(), f["time_zone"]); err != nil {
		s.internal(w, r, err)
		return
	}
	o.v.Loc = (&account.Settings{TimeZone: f["time_zone"]}).Location()
	if _, err := r.Cookie("lang"); err != nil {
		o.v.Lang = f["language"] // the organizer's language is this member's
	}
	s.settingsSaved(w, r, o, "settings.general", f["language"]+" "+f["time_zone"])
}

// testRecipient reads the form's address; "" (and the page shown) when it
// is not one plain address.
func (s *Server) testRecipient(w http.ResponseWriter, r *http.Request, o *orgReq) string {
	addr := emailjobs.Normalize(formValues(r, "email")["email"])
	if !emailjobs.ValidAddress(addr) {
		o.v.Form = map[string]string{"test_email": addr}
		s.showSettings(w, r, o, map[string]string{"test_email": "set.bad_test_email"}, http.StatusBadRequest)
		return ""
	}
	return addr
}

// addTestRecipient puts an address on the test-mode allow-list (at most
// emailjobs.MaxTestRecipients).
func (s *Server) addTestRecipient(w http.ResponseWriter, r *http.Request, o *orgReq) {
	addr := s.testRecipient(w, r, o)
	if addr == "" {
		return
	}
	_, err := s.Identities.AddTestRecipient(r.Context(), o.org(), addr)
	if ticketing.IsCode(err, ticketing.CodeConflict) {
		o.v.Form = map[string]string{"test_email": addr}
		s.showSettings(w, r, o, map[string]string{"test_email": "set.test_full"}, http.StatusConflict)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.settingsSaved(w, r, o, "settings.test_recipient_add", addr)
}

// removeTestRecipient takes an address off the allow-list.
func (s *Server) removeTestRecipient(w http.ResponseWriter, r *http.Request, o *orgReq) {
	addr := s.testRecipient(w, r, o)
	if addr == "" {
		return
	}
	if _, err := s.Identities.RemoveTestRecipient(r.Context(), o.org(), addr); err != nil {
		s.internal(w, r, err)
		return
	}
	s.settingsSaved(w, r, o, "settings.test_recipient_remove", addr)
}

// fieldView is one text field of the email form.
type fieldView struct {
	V                             *view
	Name, Type, Max, Value, Error string
}

// Field is the text field name of the email form on the page v.
func (d settingsData) Field(v *view, name, typ, max string) fieldView {
	return fieldView{V: v, Name: name, Type: typ, Max: max, Value: v.Form[name], Error: d.Errors[name]}
}
