package emailrender

import (
	"fmt"
	"slices"
	"strings"

	"tix/internal/emailsend"
)

// Owner alert kinds.
const (
	AlertEndpointDisabled = "endpoint_disabled" // fields: endpoint_id, url, failures (one a line)
	AlertKeyManyIPs       = "key_many_ips"      // fields: key_id, ips, limit, day
	AlertLiveKeyRevoked   = "live_key_revoked"  // fields: key_id, revoked_at
	AlertKeyCeiling       = "key_ceiling"       // fields: key_id, limit, bucket, day
	AlertKeyLeaked        = "key_leaked"        // fields: key_id, key (kind and last 4), url, revoked_at
	// AlertPartlyRefundedOutside: fields order_id, payment_id.
	AlertPartlyRefundedOutside = "partly_refunded_outside"
	// Dashboard account emails: fields email, url (the single-use link).
	AlertAccountVerify = "account_verify"
	AlertAccountReset  = "account_reset"
	AlertAccountExists = "account_exists"
	AlertMemberInvite  = "member_invite"
	// AlertTicketTransfer: a ticket offered to a transfer's recipient;
	// fields event, ticket, url (the single-use accept link).
	AlertTicketTransfer = "ticket_transfer"
)

// alertText is one alert kind's words in one language: the subject and the
// opening sentence are fmt formats over the kind's fields, in order.
type alertText struct {
	subject, intro, action string
}

var alertFields = map[string][]string{
	AlertEndpointDisabled:      {"endpoint_id", "url"},
	AlertKeyManyIPs:            {"key_id", "ips", "limit", "day"},
	AlertLiveKeyRevoked:        {"key_id", "revoked_at"},
	AlertKeyCeiling:            {"key_id", "limit", "bucket", "day"},
	AlertKeyLeaked:             {"key_id", "key", "url", "revoked_at"},
	AlertPartlyRefundedOutside: {"order_id", "payment_id"},
	AlertAccountVerify:         {"email", "url"},
	AlertAccountReset:          {"email", "url"},
	AlertAccountExists:         {"email", "url"},
	AlertMemberInvite:          {"email", "url"},
	AlertTicketTransfer:        {"event", "ticket", "url"},
}

var alertTexts = map[string]alertText{
	"ru/" + AlertEndpointDisabled: {"Вебхук-эндпоинт %s отключён", "Эндпоинт %s (%s) отключён автоматически: доставки подряд не удавались.",
		"Исправьте получателя и включите эндпоинт снова; пропущенные события можно отправить повторно."},
	"en/" + AlertEndpointDisabled: {"Webhook endpoint %s was disabled", "Endpoint %s (%s) was disabled automatically: its deliveries kept failing.",
		"Fix the receiver and enable the endpoint again; missed events can be redelivered."},
	"ru/" + AlertKeyManyIPs: {"Ключ %s используется со многих адресов", "Секретный ключ %s использовался с %s разных IP-адресов за %[4]s (порог %[3]s).",
		"Если это не ваши серверы, отзовите ключ и выпустите новый."},
	"en/" + AlertKeyManyIPs: {"Key %s is used from many addresses", "Secret key %s was used from %s distinct IP addresses on %[4]s (the threshold is %[3]s).",
		"If these are not your servers, revoke the key and create a new one."},
	"ru/" + AlertLiveKeyRevoked: {"Боевой ключ %s отозван", "Боевой ключ %s отозван %s.",
		"Запросы с этим ключом больше не принимаются. Если вы этого не делали, свяжитесь с поддержкой."},
	"ru/" + AlertKeyCeiling: {"Ключ %s упёрся в свой потолок запросов", "Публикуемый ключ %s %[4]s исчерпал свой общий потолок: %[2]s запросов (%[3]s) за окно; сверх него всем покупателям отвечали 429.",
		"Если это обычный спрос, поднимите потолок (tixctl keys set-budget); если нет, посмотрите, откуда идут запросы, и при необходимости выпустите новый ключ."},
	"en/" + AlertKeyCeiling: {"Key %s reached its request ceiling", "Publishable key %s reached its ceiling of %[2]s %[3]s requests per window (all of its clients together) on %[4]s; requests past it were answered 429 for every buyer.",
		"If this is real demand, raise the ceiling (tixctl keys set-budget); if not, find where the requests come from and rotate the key if needed."},
	"en/" + AlertLiveKeyRevoked: {"Live key %s was revoked", "Live key %s was revoked at %s.",
		"Requests with this key are refused from now on. If you did not do this, contact support."},
	"ru/" + AlertKeyLeaked: {"Ключ %s найден в открытом доступе и отозван", "Секретный ключ %s (%s) найден в открытом источнике (%s) и отозван %s.",
		"Запросы с ним больше не принимаются. Выпустите новый секретный ключ, замените им старый в настройках своих серверов и удалите старый ключ из открытого источника и его истории. Проверьте заказы и вебхук-эндпоинты: нет ли изменений, которых вы не делали."},
	"en/" + AlertKeyLeaked: {"Key %s was found in public and revoked", "Secret key %s (%s) was found in a public source (%s) and was revoked at %s.",
		"Requests with it are refused from now on. Create a new secret key, put it in your servers' configuration in place of the old one, and remove the old key from the public source and its history. Check your orders and webhook endpoints for changes you did not make."},
	"ru/" + AlertPartlyRefundedOutside: {"Заказ %s частично возвращён в банке", "Часть оплаты заказа %s (платёж %s) возвращена в личном кабинете банка, не через tix. Заказ остаётся оплаченным, его билеты действуют.",
		"Решите, какие билеты аннулировать, и сообщите покупателю; заказ отмечен для оператора (tixctl orders show)."},
	"en/" + AlertPartlyRefundedOutside: {"Order %s was partly refunded at the bank", "emailsend.Part of order %s's payment (%s) was returned in the bank's portal, not through tix. The order stays paid and its tickets stay valid.",
		"Decide which tickets to void and tell the buyer; the order is flagged for the operator (tixctl orders show)."},
}

func init() {
	for k, v := range map[string]alertText{
		"ru/" + AlertAccountVerify: {"Подтвердите адрес %s", "Откройте ссылку, чтобы подтвердить адрес %s для кабинета организатора tix: %s",
			"Ссылка действует 24 часа и работает один раз. Если вы не регистрировались, ничего не делайте."},
		"en/" + AlertAccountVerify: {"Confirm %s", "Open this link to confirm %s for the tix organizer dashboard: %s",
			"The link works once, for 24 hours. If you did not sign up, do nothing."},
		"ru/" + AlertAccountReset: {"Новый пароль для %s", "Откройте ссылку, чтобы задать новый пароль для %s: %s",
			"Ссылка действует час и работает один раз. Если вы не просили сменить пароль, ничего не делайте: пароль остаётся прежним."},
		"en/" + AlertAccountReset: {"A new password for %s", "Open this link to set a new password for %s: %s",
			"The link works once, for an hour. If you did not ask for it, do nothing: your password stays as it is."},
		"ru/" + AlertAccountExists: {"У %s уже есть кабинет", "Кто-то регистрировался с адресом %s, но у него уже есть кабинет. Войти или сменить пароль: %s",
			"Если это были не вы, ничего не делайте."},
		"en/" + AlertAccountExists: {"%s already has an account", "Someone signed up with %s, which already has an account. Sign in or reset your password: %s",
			"If this was not you, do nothing."},
		"ru/" + AlertMemberInvite: {"Приглашение в кабинет tix для %s", "Вас (%s) пригласили в кабинет организатора tix. Принять приглашение: %s",
			"Ссылка действует 7 дней и работает один раз."},
		"en/" + AlertMemberInvite: {"An invitation to tix for %s", "You (%s) are invited to an organizer's tix dashboard. Accept: %s",
			"The link works once, for 7 days."},
		"ru/" + AlertTicketTransfer: {"Вам передают билет на %s", "Вам передают билет %[2]s на «%[1]s». Чтобы принять его, откройте ссылку: %[3]s",
			"Ссылка работает один раз. Приняв билет, вы получите новый билет письмом; прежний билет перестанет действовать. Если вы не ждали билета, ничего не делайте."},
		"en/" + AlertTicketTransfer: {"A ticket to %s for you", "Ticket %[2]s to %[1]s is being transferred to you. To accept it, open this link: %[3]s",
			"The link works once. Once you accept, your new ticket arrives by email and the old ticket stops working. If you did not expect a ticket, do nothing."},
	} {
		alertTexts[k] = v
	}
}

// alertView is what the alert templates read.
type alertView struct {
	Lang, Title, Intro, Action string
	Lines                      []string
}

// RenderAlert builds an owner alert of kind in language l from its fields
// (see the Alert* constants). To is left for the caller: one message per
// contact address.
func RenderAlert(kind string, fields map[string]string, l string) (emailsend.Message, error) {
	l, err := lang(l)
	if err != nil {
		return emailsend.Message{}, err
	}
	names, ok := alertFields[kind]
	if !ok {
		return emailsend.Message{}, fmt.Errorf("mail: unknown alert kind %q", kind)
	}
	args := make([]any, len(names))
	for i, n := range names {
		if fields[n] == "" {
			return emailsend.Message{}, fmt.Errorf("mail: alert %s needs field %q", kind, n)
		}
		args[i] = fields[n]
	}
	t := alertTexts[l+"/"+kind]
	v := alertView{Lang: l, Title: fmt.Sprintf(t.subject, args[0]), Intro: fmt.Sprintf(t.intro, args...), Action: t.action}
	for _, line := range strings.Split(fields["failures"], "\n") {
		if line = strings.TrimSpace(line); line != "" {
			v.Lines = append(v.Lines, line)
		}
	}
	text, html, err := render("alert", l, v)
	if err != nil {
		return emailsend.Message{}, err
	}
	return emailsend.Message{FromName: "tix", Subject: v.Title, Text: text, HTML: html,
		Headers: map[string]string{"X-Tix-Kind": "alert-" + kind}}, nil
}

// AlertKinds lists the alert kinds RenderAlert knows.
func AlertKinds() []string {
	out := make([]string, 0, len(alertFields))
	for k := range alertFields {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
