// Checks tix webhook POSTs with the npm `standardwebhooks` package (the
// Standard Webhooks reference library for JavaScript), as a Node receiver
// would (docs/webhooks.md, Standard Webhooks). The tix secret is base62, not
// base64: the library takes it in its raw form.
//
// As a command: node scripts/webhookreceiver/standard-verify.js SECRET
// reads one JSON line per POST on stdin, {"headers":{...},"body":"<raw body>"},
// and writes one JSON line per POST: {"valid":true,"id":"evt_..."} or
// {"valid":false,"error":"..."}.
'use strict';

const path = require('node:path');
const readline = require('node:readline');
const { Webhook } = require(path.join(__dirname, '..', 'node_modules', 'standardwebhooks'));

const wh = new Webhook(process.argv[2], { format: 'raw' });
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (!line.trim()) return;
  const post = JSON.parse(line);
  try {
    const ev = wh.verify(post.body, post.headers);
    process.stdout.write(JSON.stringify({ valid: true, id: ev.id }) + '\n');
  } catch (e) {
    process.stdout.write(JSON.stringify({ valid: false, error: String(e.message) }) + '\n');
  }
});
