// The reference verifier of tix ticket codes in JavaScript (docs/door.md),
// with Node's built-in crypto only. It mirrors internal/ticketcode.Verify:
// a code verifies when it is one JSON object of the known members, each
// named once, and its Ed25519 signature over the signed bytes verifies under
// the key its kid names, while that key verifies (before its verify_until).
//
// As a command: node scripts/door/verify.js JWKS_FILE [NOW_RFC3339]
// reads one code per line on stdin and writes one JSON line per code:
// {"valid":true,"claims":{...}} or {"valid":false}.
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
  const jwk = (jwks.keys || []).find((k) => k.kid === c.kid && k.kty === 'OKP' && k.crv === 'Ed25519');
  if (!jwk || (jwk.verify_until !== undefined && !(now.getTime() < Date.parse(jwk.verify_until)))) return null;
  const msg = signedBytes(c);
  const sig = Buffer.from(c.sig, 'base64url');
  if (msg === null || sig.length !== 64 || sig.toString('base64url') !== c.sig) return null;
  let key;
  try {
    key = crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  } catch (e) { return null; }
  if (!crypto.verify(null, msg, key, sig)) return null;
  const claims = { ...c };
  delete claims.sig;
  return claims;
}

module.exports = { verify, signedBytes };

if (require.main === module) {
  const fs = require('node:fs');
  const jwks = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const now = process.argv[3] ? new Date(process.argv[3]) : new Date();
  const lines = fs.readFileSync(0, 'utf8').split('\n').filter((l) => l.trim() !== '');
  for (const line of lines) {
    const claims = verify(line, jwks, now);
    process.stdout.write(JSON.stringify(claims ? { valid: true, claims } : { valid: false }) + '\n');
  }
}
