// The sample webhook receiver in Node (its Go twin is main.go beside it):
// it checks each POST with the npm `standardwebhooks` package (webhook-id,
// webhook-timestamp, webhook-signature; the endpoint's whsec_ secret taken
// raw), answers endpoint.verify with its nonce, drops a repeated event id,
// keeps each order's newest state by data.order.version (an older event
// arriving late is acknowledged and ignored), prints one line per POST, and
// shows what it keeps at GET <path>/orders.
//
//   node scripts/webhookreceiver/receiver.js --secret whsec_... [--addr 127.0.0.1:9000] [--path /hooks]
//
// Node's http module and `standardwebhooks` only: copy it into your project
// as a start (there, require('standardwebhooks')).
'use strict';

const http = require('node:http');
const path = require('node:path');
const { Webhook } = require(path.join(__dirname, '..', 'node_modules', 'standardwebhooks'));

function flag(name, def) {
  const i = process.argv.indexOf('--' + name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

const secret = flag('secret', process.env.TIX_WEBHOOK_SECRET || '');
const addr = flag('addr', '127.0.0.1:9000');
const hookPath = flag('path', '/hooks');
if (!secret) {
  process.stderr.write('receiver.js: --secret is required: pass the whsec_... secret that tixctl webhooks create (or tixctl listen) printed\n');
  process.exit(2);
}

const wh = new Webhook(secret, { format: 'raw' }); // a tix secret is base62: raw
const seen = new Set(); // event ids handled: a real receiver stores them with a unique constraint
const orders = new Map(); // order id -> {status, version}: the newest state

// handle acts on a verified event: once per id, the newest version per order.
function handle(ev) {
  const o = (ev.data && ev.data.order) || {};
  if (seen.has(ev.id)) {
    console.log(`duplicate ${ev.type} ${ev.id} ${o.id}: already handled, ignored`);
    return;
  }
  seen.add(ev.id);
  const kept = orders.get(o.id);
  if (o.id && kept && kept.version >= o.version) {
    // Delivery order is not guaranteed: a newer state is kept already.
    console.log(`verified ${ev.type} ${ev.id} ${o.id} ${o.status} (version ${o.version}), older than the kept ${kept.status} (version ${kept.version}): ignored`);
    return;
  }
  if (o.id) orders.set(o.id, { status: o.status, version: o.version });
  console.log(`verified ${ev.type} ${ev.id} ${o.id} ${o.status} (version ${o.version})`);
}

function answer(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

function onPost(raw, req, res) {
  let ev;
  try {
    ev = wh.verify(raw, req.headers); // the signature and a timestamp within 5 minutes
  } catch (e) {
    console.log(`REFUSED (${e.message})`);
    return answer(res, 400, { error: 'bad signature' });
  }
  if (ev.type === 'endpoint.verify') {
    console.log(`verified ${ev.type} ${ev.id}`);
    return answer(res, 200, { nonce: ev.data.nonce });
  }
  handle(ev);
  answer(res, 200, {});
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === hookPath + '/orders') {
    return answer(res, 200, Object.fromEntries(orders));
  }
  if (req.method !== 'POST' || req.url !== hookPath) return answer(res, 404, { error: 'not found' });
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > 1 << 20) req.destroy();
    else chunks.push(c);
  });
  req.on('end', () => onPost(Buffer.concat(chunks).toString('utf8'), req, res));
});

const sep = addr.lastIndexOf(':');
server.listen(Number(addr.slice(sep + 1)), addr.slice(0, sep), () => {
  const a = server.address();
  console.log(`receiver.js: listening on http://${a.address}:${a.port}${hookPath}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
