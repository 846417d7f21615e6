// The reference verifier of tix ticket codes in JavaScript (docs/door.md),
// with Node's built-in crypto only. It mirrors internal/ticketcode.Verify:
// a code verifies when it is one JSON object of the known members, each
// named once, and its Ed25519 signature over the signed bytes verifies under
// the key its kid names, while that key verifies (before its verify_until).
//
// As a command: node scripts/door/verify.js JWKS_FILE [NOW_RFC3339]
// reads one code per line on stdin and writes one JSON line per code:
// {"valid":true,"claims":{...}} or {"valid":false}.
//
// It also verifies a page of an admission list (verifyAdmissionPage): with
// --admission-list first, it reads one page (the body of GET
// /v1/events/{id}/admission-list) on stdin and writes {"valid":true} or
// {"valid":false}.
'use strict';

const crypto = require('node:crypto');

const DOMAIN = 'tix.ticket-code.v2';
const MEMBERS = ['v', 'order_id', 'ticket_number', 'event_id', 'occurrence_id', 'seat_id',
  'quantity', 'livemode', 'test', 'tickets', 'kid', 'sig'];
const CONTROL = /[\x00-\x1f\x7f]/;

// namedOnce: JSON.parse keeps the last of two equal names; refuse them.
function namedOnce(text) {
  return MEMBERS.every((m) => (text.match(new RegExp('"' + m + '"\\s*:', 'g')) || []).length <= 1);
}

function isString(v) { return typeof v === 'string'; }

// claimsOf returns the code's claims, or null when it is not well formed.
function claimsOf(text) {
  let o;
  try { o = JSON.parse(text); } catch (e) { return null; }
  if (o === null || typeof o !== 'object' || Array.isArray(o) || !namedOnce(text)) return null;
  if (Object.keys(o).some((k) => !MEMBERS.includes(k))) return null;
  const optional = (k) => o[k] === undefined || isString(o[k]);
  if (o.v !== 2 || !isString(o.order_id) || !isString(o.ticket_number) || !isString(o.event_id) ||
      !optional('occurrence_id') || !optional('seat_id') || !Number.isInteger(o.quantity) || o.quantity < 1 ||
      typeof o.livemode !== 'boolean' || (o.test !== undefined && typeof o.test !== 'boolean') ||
      (o.test === true && o.livemode) || !isString(o.kid) || !isString(o.sig)) return null;
  if (o.tickets !== undefined && (!Array.isArray(o.tickets) ||
      o.tickets.some((t) => !isString(t) || t === '' || t.includes(',')))) return null;
  return o;
}

// signedBytes are the exact bytes the signature covers (docs/door.md).
function signedBytes(c) {
  const fields = [DOMAIN, c.tickets !== undefined ? 'order' : 'ticket', c.kid, c.livemode ? 'live' : 'test',
    c.order_id, c.ticket_number, c.event_id, c.occurrence_id || '', c.seat_id || '', String(c.quantity),
    (c.tickets || []).join(',')];
  if (fields.some((f) => CONTROL.test(f))) return null;
  if (c.order_id === '' || c.ticket_number === '' || c.event_id === '' || c.kid === '') return null;
  return Buffer.from(fields.join('\n'), 'utf8');
}

// verify returns the claims of a valid code, else null. jwks is the body of
// GET /v1/ticket-keys; now a Date.
function verify(text, jwks, now) {
  const c = claimsOf(text);
  if (c === null) return null;
  const key = publicKey(jwks, c.kid, now);
  const msg = signedBytes(c);
  const sig = Buffer.from(c.sig, 'base64url');
  if (key === null || msg === null || sig.length !== 64 || sig.toString('base64url') !== c.sig) return null;
  if (!crypto.verify(null, msg, key, sig)) return null;
  const claims = { ...c };
  delete claims.sig;
  return claims;
}

// publicKey is the key the JWK set names by kid, while it verifies at now.
function publicKey(jwks, kid, now) {
  const jwk = (jwks.keys || []).find((k) => k.kid === kid && k.kty === 'OKP' && k.crv === 'Ed25519');
  if (!jwk || (jwk.verify_until !== undefined && !(now.getTime() < Date.parse(jwk.verify_until)))) return null;
  try {
    return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  } catch (e) { return null; }
}

const ADMISSION_DOMAIN = 'tix.admission-list.v1';

// admissionBytes are the exact bytes a page's signature covers
// (docs/door.md#the-admission-list), or null.
function admissionBytes(p) {
  const s = (v) => (v === null || v === undefined ? '' : v);
  if (!Array.isArray(p.data) || typeof p.has_more !== 'boolean' || typeof p.livemode !== 'boolean') return null;
  const lines = [ADMISSION_DOMAIN, s(p.kid), p.livemode ? 'live' : 'test', s(p.event_id), s(p.occurrence_id),
    s(p.generated_at), String(p.has_more), String(p.data.length)];
  const fields = lines.slice();
  for (const e of p.data) {
    const ci = e.check_in || {};
    const f = [e.ticket_number, e.order_id, s(e.order_ticket_number), s(e.occurrence_id),
      s(e.seat && e.seat.seat_code), e.state, s(ci.id), s(ci.at), s(ci.gate)];
    if (f.some((x) => typeof x !== 'string')) return null;
    fields.push(...f);
    lines.push(f.join('\t'));
  }
  if (fields.some((f) => typeof f !== 'string' || CONTROL.test(f)) || !p.kid || !p.event_id) return null;
  return Buffer.from(lines.join('\n'), 'utf8');
}

// verifyAdmissionPage reports whether a page (the parsed body) is signed by
// a key of jwks that verifies at now.
function verifyAdmissionPage(page, jwks, now) {
  if (page === null || typeof page !== 'object' || typeof page.sig !== 'string') return false;
  const msg = admissionBytes(page);
  const sig = Buffer.from(page.sig, 'base64url');
  if (msg === null || sig.length !== 64 || sig.toString('base64url') !== page.sig) return false;
  const key = publicKey(jwks, page.kid, now);
  return key !== null && crypto.verify(null, msg, key, sig);
}

module.exports = { verify, signedBytes, verifyAdmissionPage, admissionBytes };

if (require.main === module && process.argv[2] === '--admission-list') {
  const fs = require('node:fs');
  const jwks = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
  const now = process.argv[4] ? new Date(process.argv[4]) : new Date();
  let page = null;
  try { page = JSON.parse(fs.readFileSync(0, 'utf8')); } catch (e) { page = null; }
  process.stdout.write(JSON.stringify({ valid: verifyAdmissionPage(page, jwks, now) }) + '\n');
} else if (require.main === module) {
  const fs = require('node:fs');
  const jwks = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const now = process.argv[3] ? new Date(process.argv[3]) : new Date();
  const lines = fs.readFileSync(0, 'utf8').split('\n').filter((l) => l.trim() !== '');
  for (const line of lines) {
    const claims = verify(line, jwks, now);
    process.stdout.write(JSON.stringify(claims ? { valid: true, claims } : { valid: false }) + '\n');
  }
}
