// Command tixctl is the operator's tool, a stand-in for the organizer dashboard:
// organizers, API keys, catalog import, webhook endpoints and table setup, straight against
// DynamoDB (DynamoDB Local by default). docs/tixctl.md describes every command.
package main

import (
	"io"
	"os"
	_ "time/tzdata"

	"tix/internal/payment/tbanksim" // catalog time zones validate on machines without zoneinfo
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// commands is the dispatch table: "group name" -> implementation.
var commands = []command{
	{"organizers create", "--name NAME [--id org_x]", "create an organizer", organizersCreate},
	{"organizers verify", "--id ID [--unverify]", "mark an organizer verified (live keys need it)", organizersVerify},
	{"organizers list", "", "list organizers", organizersList},
	{"organizers show", "--id ID", "show an organizer and its payment account (never secrets)", organizersShow},
	{"organizers connect-tbank", "--id ID --terminal-key KEY (--password-file FILE | --password-stdin) [--taxation T --vat V] [--api-url URL]", "connect the organizer's T-Bank terminal (checked with the bank) and verify the organizer", organizersConnectTBank},
	{"organizers receipt-settings", "--id ID --taxation T --vat V", "change the taxation and VAT rate of the organizer's receipts", organizersReceiptSettings},
	{"organizers set-identity", "--id ID [--sender-name NAME] [--reply-to ADDR] [--support TEXT] [--logo-url URL] [--language ru|en]", "set how the organizer appears in its emails (only the flags given change)", organizersSetIdentity},
	{"organizers set-contacts", "--id ID --email ADDR [--email ADDR]...", "set the owner contact addresses that receive alerts", organizersSetContacts},
	{"organizers invite", "--id ID --email ADDR [--role owner|developer|support|viewer] [--dashboard-url URL] [--no-email]", "invite a person into the organizer's dashboard (prints the single-use link; emails it)", organizersInvite},
	{"organizers test-recipients", "--id ID [--add ADDR]... [--remove ADDR]... [--list]", "the addresses test-mode emails may reach besides the owner contacts (at most 20); others are skipped", organizersTestRecipients},
	{"keys create", "--organizer ID --type sk|pk --env test|live [--scopes a,b] [--origin URL]... [--ip CIDR]... [--expires RFC3339|DURATION] [--name LABEL] [--events evt_a,evt_b]", "create an API key; prints its secret once", keysCreate},
	{"keys list", "--organizer ID", "list an organizer's keys (never secrets)", keysList},
	{"keys show", "KEY_ID|KEY", "show one key, named by its id or by the key itself (never printed): status, revocation reason and source", keysShow},
	{"keys revoke", "KEY_ID|KEY [--leaked [--source URL]]", "revoke a key (refused everywhere within TIX_KEY_CACHE_TTL, 10 s); --leaked: found in public, its owner is told", keysRevoke},
	{"keys set-budget", "--id key_x [--reads N] [--writes N] [--ip-reads N] [--ip-writes N]", "set a key's rate-limit budgets per window (pk: --reads/--writes are the key's ceiling, --ip-* each client's; 0 = the default)", keysSetBudget},
	{"ticket-keys list", "--organizer ID --env test|live", "the organizer's ticket signing keys (made on first need): the signing one and those still verifying (docs/door.md)", ticketKeysList},
	{"ticket-keys rotate", "--organizer ID --env test|live [--overlap DURATION]", "make a new ticket signing key; the current one still verifies codes for the overlap (default TIX_TICKET_KEY_OVERLAP, 720h)", ticketKeysRotate},
	{"onsale protect", "--organizer ID --event ID --opens-at RFC3339 [--env test|live] [--occurrence ID] [--rate N] [--difficulty BITS]", "put a waiting room in front of an on-sale: pk holds and orders then need an admission (docs/waiting-room.md)", onsaleProtect},
	{"catalog import", "--organizer ID FILE|-", "validate and import a catalog file (docs/catalog-import.md)", catalogImport},
	{"catalog validate", "[--organizer ID] FILE|-", "validate a catalog file without writing", catalogValidate},
	{"webhooks create", "--organizer ID --env test|live --url URL [--events order.paid,...] [--description TEXT]", "register a webhook endpoint; prints its signing secret once", webhooksCreate},
	{"webhooks list", "--organizer ID [--env test|live]", "list an organizer's webhook endpoints (never secrets)", webhooksList},
	{"webhooks show", "ID", "show one webhook endpoint and its health", webhooksShow},
	{"webhooks update", "ID [--url URL] [--events LIST] [--description TEXT]", "change an endpoint (a new URL must be verified again)", webhooksUpdate},
	{"webhooks verify", "ID", "send endpoint.verify; the endpoint is verified when the receiver echoes the nonce", webhooksVerify},
	{"webhooks rotate-secret", "ID", "issue a new signing secret (printed once); the old one signs for the overlap", webhooksRotateSecret},
	{"webhooks disable", "ID", "stop deliveries to an endpoint; its pending deliveries are skipped", webhooksDisable},
	{"webhooks enable", "ID", "re-enable a disabled endpoint with a clean failure count", webhooksEnable},
	{"webhooks test", "ID", "send webhook.test now (not a delivery; health unchanged)", webhooksTest},
	{"webhooks delete", "ID", "delete an endpoint", webhooksDelete},
	{"webhooks replay", "ID (--since TIME [--idempotency-key KEY] | --show REPLAY_ID)", "send an endpoint every event of the event log since TIME again (behind live traffic), or show a replay's progress", webhooksReplay},
	{"listen", "--forward-to URL [--api URL] [--key sk_...] [--since TIME|DURATION] [--events order.paid,...] [--secret whsec_...] [--interval 1s] [--page-size N]", "follow the event log through the API and forward each new event to a local URL, signed with a secret it prints (^C stops)", listen},
	{"payments strays", "", "stray payments: money confirmed under an order that the order does not own or not for its amount, and the refund of each", paymentsStrays},
	{"orders show", "ORDER_ID", "an order's status, payment, refund, late payment and emails", ordersShow},
	{"orders resend-tickets", "ORDER_ID [--call-id ID]", "send a paid order's tickets again to the buyer (once per call id)", ordersResendTickets},
	{"orders backfill-buyer-index", "", "give orders written before the buyer index their keys (the dashboard's search by email); scans the table once", ordersBackfillBuyerIndex},
	{"scan-sim report", "TOKEN... [--source URL] [--url URL]", "simulated GitHub secret scanning (make run): report tokens found in public to tix, signed as GitHub does", scanSimReport},
	{"table create", "", "create the table if it does not exist", tableCreate},
	{"acquirer-sim pay", "ORDER_ID [--url URL]", "simulated T-Bank: the buyer pays the order's SBP QR", acquirerSim(tbanksim.Pay)},
	{"acquirer-sim reject", "ORDER_ID [--url URL]", "simulated T-Bank: the payer's bank rejects the payment", acquirerSim(tbanksim.Reject)},
	{"acquirer-sim expire", "ORDER_ID [--url URL]", "simulated T-Bank: the order's QR expires unpaid", acquirerSim(tbanksim.Expire)},
}

// run is tixctl with its arguments and outputs: it returns the exit code (0 ok,
// 1 failed, 2 usage).
func run(args []string, stdout, stderr io.Writer) int {
	return newApp(stdout, stderr, os.Stdin).run(args)
}
