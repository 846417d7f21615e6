// The door's scanner page (docs/door.md, "Scanner page"). Online, each scan
// goes to the scanner's own POST api/check-ins (the service of POST
// /v1/check-ins). Offline, a code is verified here against the organizer's
// public keys (Web Crypto Ed25519), decided against the downloaded admission
// list (IndexedDB) and the scans this device made, and queued; the queue is
// uploaded through api/check-ins/batch when the network is back.
(function () {
  'use strict';
  const root = document.getElementById('scanner');
  if (!root) return;
  const base = root.dataset.path, csrf = root.dataset.csrf, live = root.dataset.env === 'live';
  const T = JSON.parse(document.getElementById('texts').textContent);
  const $ = (id) => document.getElementById(id);
  const state = { reachable: true, jwks: null, lastCode: '', lastSeen: 0, busy: false, stream: null, syncing: false };
  const REPEAT_MS = 3000; // the same code seen again within this is one scan

  // --- storage: IndexedDB "tix-scanner" -------------------------------------
  // kv: jwks, the lists' meta, the device id and scan counter; tickets: the
  // admission list's entries by ticket number (event_id added); scans: this
  // device's scans by client_scan_id (synced when uploaded).
  let dbp = null;
  function db() {
    if (!dbp) {
      dbp = new Promise((resolve, reject) => {
        const rq = indexedDB.open('tix-scanner', 1);
        rq.onupgradeneeded = () => {
          const d = rq.result;
          d.createObjectStore('kv');
          d.createObjectStore('tickets', { keyPath: 'ticket_number' }).createIndex('order', 'order_ticket_number');
          d.createObjectStore('scans', { keyPath: 'client_scan_id' }).createIndex('synced', 'synced');
        };
        rq.onsuccess = () => resolve(rq.result);
        rq.onerror = () => reject(rq.error);
      });
    }
    return dbp;
  }
  async function tx(store, mode, fn) {
    const d = await db();
    return new Promise((resolve, reject) => {
      const t = d.transaction(store, mode);
      let out;
      Promise.resolve(fn(t.objectStore(store))).then((v) => { out = v; });
      t.oncomplete = () => resolve(out);
      t.onerror = () => reject(t.error);
    });
  }
  const req = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
  const kvGet = (k) => tx('kv', 'readonly', (s) => req(s.get(k)));
  const kvPut = (k, v) => tx('kv', 'readwrite', (s) => { s.put(v, k); });

  // --- the server ------------------------------------------------------------
  class Offline extends Error {}
  async function call(method, path, body) {
    if (!navigator.onLine) throw new Offline();
    let res;
    try {
      res = await fetch(base + path, {
        method, credentials: 'same-origin', cache: 'no-store',
        headers: Object.assign({ 'X-Tix-Scanner-Csrf': csrf }, body ? { 'Content-Type': 'application/json' } : {}),
        body: body ? JSON.stringify(body) : undefined,
      });
    } catch (e) {
      state.reachable = false;
      throw new Offline();
    }
    state.reachable = true;
    if (res.status === 401) { show('bad', T.signed_out, '', ''); throw new Error('signed out'); }
    const out = await res.json();
    if (!res.ok) throw Object.assign(new Error((out.error && out.error.message) || res.status), { status: res.status });
    return out;
  }

  // --- verifying a code offline (the rules of scripts/door/verify.js) ------
  const MEMBERS = ['v', 'order_id', 'ticket_number', 'event_id', 'occurrence_id', 'seat_id',
    'quantity', 'livemode', 'test', 'tickets', 'kid', 'sig'];
  const CONTROL = /[\x00-\x1f\x7f]/;
  const isStr = (v) => typeof v === 'string';
  function claimsOf(text) {
    let o;
    try { o = JSON.parse(text); } catch (e) { return null; }
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return null;
    if (!MEMBERS.every((m) => (text.match(new RegExp('"' + m + '"\\s*:', 'g')) || []).length <= 1)) return null;
    if (Object.keys(o).some((k) => !MEMBERS.includes(k))) return null;
    const opt = (k) => o[k] === undefined || isStr(o[k]);
    if (o.v !== 2 || !isStr(o.order_id) || !isStr(o.ticket_number) || !isStr(o.event_id) || !opt('occurrence_id') ||
        !opt('seat_id') || !Number.isInteger(o.quantity) || o.quantity < 1 || typeof o.livemode !== 'boolean' ||
        (o.test !== undefined && typeof o.test !== 'boolean') || (o.test === true && o.livemode) ||
        !isStr(o.kid) || !isStr(o.sig)) return null;
    if (o.tickets !== undefined && (!Array.isArray(o.tickets) || o.tickets.some((t) => !isStr(t) || t === '' || t.includes(',')))) return null;
    return o;
  }
  function b64url(s) {
    if (!/^[A-Za-z0-9_-]*$/.test(s)) return null;
    const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  }
  // verifySig checks an Ed25519 signature by the key kid of the JWK set over
  // fields (none may hold a control character) joined by seps.
  async function verifySig(kid, sigText, fields, join) {
    const jwk = ((state.jwks && state.jwks.keys) || []).find((k) => k.kid === kid && k.kty === 'OKP' && k.crv === 'Ed25519');
    if (!jwk || (jwk.verify_until !== undefined && !(Date.now() < Date.parse(jwk.verify_until)))) return false;
    if (fields.some((f) => CONTROL.test(f))) return false;
    const sig = b64url(sigText);
    if (!sig || sig.length !== 64) return false;
    try {
      const key = await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, { name: 'Ed25519' }, false, ['verify']);
      return await crypto.subtle.verify({ name: 'Ed25519' }, key, sig, new TextEncoder().encode(join(fields)));
    } catch (e) {
      return false;
    }
  }
  async function verifyCode(text) {
    const c = claimsOf(text);
    if (!c || c.order_id === '' || c.ticket_number === '' || c.event_id === '' || c.kid === '') return null;
    const lines = ['tix.ticket-code.v2', c.tickets !== undefined ? 'order' : 'ticket', c.kid, c.livemode ? 'live' : 'test',
      c.order_id, c.ticket_number, c.event_id, c.occurrence_id || '', c.seat_id || '', String(c.quantity), (c.tickets || []).join(',')];
    return (await verifySig(c.kid, c.sig, lines, (f) => f.join('\n'))) ? c : null;
  }
  // verifyPage checks a page of the admission list (docs/door.md, "The admission list").
  async function verifyPage(p, eventID) {
    const f = (v) => (v === null || v === undefined ? '' : String(v));
    const head = ['tix.admission-list.v1', f(p.kid), live ? 'live' : 'test', f(p.event_id), f(p.occurrence_id), f(p.generated_at),
      p.has_more ? 'true' : 'false', String(p.data.length)];
    const entries = p.data.map((e) => [e.ticket_number, e.order_id, e.order_ticket_number, e.occurrence_id, e.seat && e.seat.seat_code,
      e.state, e.check_in && e.check_in.id, e.check_in && e.check_in.at, e.check_in && e.check_in.gate].map(f));
    const join = () => head.concat(entries.map((e) => e.join('\t'))).join('\n');
    return p.event_id === eventID && p.livemode === live && verifySig(p.kid, p.sig, head.concat(...entries), join);
  }

  // --- answers -----------------------------------------------------------------
  const VERDICT = { admitted: 'admitted', already_admitted: 'already', duplicate: 'already', refunded: 'refunded',
    cancelled: 'cancelled', wrong_event: 'wrong_event', invalid: 'invalid', transferred: 'transferred' };
  const clock = (at) => new Date(at).toLocaleTimeString(document.documentElement.lang, { hour12: false });
  function seatText(seat) {
    if (!seat) return '';
    let s = T.seat + ' ' + seat.label;
    if (seat.zone_name) s += ' · ' + seat.zone_name;
    return s;
  }
  function show(kind, verdict, seat, detail) {
    const r = $('result');
    r.className = 'result ' + kind;
    $('verdict').textContent = verdict;
    $('seat').textContent = seat;
    $('detail').textContent = detail;
  }
  // render shows an answer ({result, ticket_number, seat, check_in, tickets}).
  function render(a, note) {
    const ok = a.result === 'admitted';
    const one = a.tickets && a.tickets.length ? a.tickets : [a];
    const seats = one.map((t) => seatText(t.seat)).filter(Boolean).join('; ');
    let detail = one.map((t) => t.ticket_number).filter(Boolean).join(', ');
    const first = one.find((t) => t.result !== 'admitted' && t.check_in);
    if (first) detail += ' · ' + T.first_scan + ' ' + clock(first.check_in.at) + ', ' + T.at_gate + ' ' + first.check_in.gate;
    if (note) detail += ' · ' + note;
    show(ok ? 'ok' : 'bad', T[VERDICT[a.result]] || T.invalid, seats, detail);
    const li = document.createElement('li');
    li.className = ok ? 'ok' : 'bad';
    li.textContent = clock(Date.now()) + ' ' + (T[VERDICT[a.result]] || T.invalid) + (detail ? ' · ' + detail : '');
    $('recent').prepend(li);
    while ($('recent').children.length > 10) $('recent').lastChild.remove();
    root.dataset.last = a.result; // the browser test reads it
  }

  // --- scanning ----------------------------------------------------------------
  const gate = () => $('gate').value.trim();
  // The door: an event, or one occurrence of a series ("evt_...|occ_...").
  const door = () => $('event').value;
  const eventID = () => door().split('|')[0];
  const occurrenceID = () => door().split('|')[1] || '';
  const split = (dv) => ({ event_id: dv.split('|')[0] || null, occurrence_id: dv.split('|')[1] || null });
  async function handle(code) {
    if (!gate()) { show('bad', T.need_gate, '', ''); $('gate').focus(); return; }
    state.busy = true;
    try {
      let answer, note = '';
      try {
        answer = await call('POST', '/api/check-ins', { code, gate: gate(), event_id: eventID(), occurrence_id: occurrenceID(), idempotency_key: 'scn-' + crypto.randomUUID() });
        await remember(answer);
      } catch (e) {
        if (!(e instanceof Offline)) throw e;
        answer = await decideOffline(code);
        note = T.offline_note + (answer.notInList ? ' · ' + T.not_in_list : '');
      }
      render(answer, note);
      refresh();
    } catch (e) {
      if (e.message !== 'signed out') show('bad', T.error, '', e.message);
    } finally {
      state.busy = false;
      state.lastSeen = Date.now(); // the time the answer took is not time out of view
    }
  }
  // remember keeps an online admission in the local list, so the same
  // ticket scanned here offline later is already admitted.
  async function remember(a) {
    const all = a.tickets && a.tickets.length ? a.tickets : [a];
    await tx('tickets', 'readwrite', async (s) => {
      for (const t of all) {
        if (!t.ticket_number || !t.check_in) continue;
        const e = (await req(s.get(t.ticket_number))) || { ticket_number: t.ticket_number, seat: t.seat };
        if (!e.check_in) { e.state = 'admitted'; e.check_in = t.check_in; s.put(e); }
      }
    });
  }
  // decideOffline answers from the signature, the list and this device's scans, and queues the scan.
  async function decideOffline(code) {
    let numbers, claims = null;
    if (code.startsWith('{')) {
      claims = await verifyCode(code);
      if (!claims || claims.livemode !== live) return { result: 'invalid' };
      if (eventID() && (claims.event_id !== eventID() || (occurrenceID() && claims.occurrence_id !== occurrenceID()))) {
        return { result: 'wrong_event', ticket_number: claims.ticket_number };
      }
      numbers = claims.tickets || [claims.ticket_number];
    } else {
      const n = code.toUpperCase();
      const one = await tx('tickets', 'readonly', (s) => req(s.get(n)));
      const order = one ? [] : await tx('tickets', 'readonly', (s) => req(s.index('order').getAll(n)));
      numbers = one ? [n] : order.map((e) => e.ticket_number);
      if (!numbers.length) return { result: 'invalid', ticket_number: n };
    }
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const answers = await tx('tickets', 'readwrite', async (s) => {
      const out = [];
      for (const n of numbers) {
        const e = await req(s.get(n));
        const a = { ticket_number: n, seat: e ? e.seat : null, check_in: e ? e.check_in : null };
        if (e && !claims && eventID() && (e.event_id !== eventID() || (occurrenceID() && e.occurrence_id !== occurrenceID()))) a.result = 'wrong_event';
        else if (e && e.check_in) a.result = 'already_admitted';
        else if (e && e.state === 'refunded') a.result = 'refunded';
        else if (e && e.state === 'transferred') a.result = 'transferred';
        else if (e && e.state !== 'valid') a.result = 'invalid';
        else {
          a.result = 'admitted';
          a.check_in = { gate: gate(), at, local: true };
          a.notInList = !e;
          s.put(Object.assign(e || { ticket_number: n, event_id: claims.event_id }, { state: 'admitted', check_in: a.check_in }));
        }
        out.push(a);
      }
      return out;
    });
    const answer = answers.length === 1 && !(claims && claims.tickets) ? answers[0]
      : { result: answers.some((a) => a.result === 'admitted') ? 'admitted' : answers[0].result, ticket_number: claims ? claims.ticket_number : code, tickets: answers };
    await queue(code, at, door() || (claims ? claims.event_id : ''));
    return answer;
  }
  async function queue(code, at, dv) {
    let dev = await kvGet('device');
    if (!dev) { dev = crypto.randomUUID().slice(0, 8); await kvPut('device', dev); }
    const n = ((await kvGet('counter')) || 0) + 1;
    await kvPut('counter', n);
    await tx('scans', 'readwrite', (s) => {
      s.put({ client_scan_id: 'scn-' + dev + ':' + String(n).padStart(6, '0'), code, scanned_at: at, gate: gate(), door: dv, synced: 0 });
    });
  }

  // --- syncing -----------------------------------------------------------------
  // upload sends scans of one door; when the server refuses the request (a
  // scan older than it takes, say), each is sent alone, and one refused alone
  // is kept as refused (synced 2) so that it blocks no other.
  async function upload(dv, part) {
    let out;
    try {
      out = await call('POST', '/api/check-ins/batch', Object.assign({ gate: part[0].gate }, split(dv), {
        scans: part.map((sc) => ({ client_scan_id: sc.client_scan_id, code: sc.code, scanned_at: sc.scanned_at, gate: sc.gate })) }));
    } catch (e) {
      if (!(e.status >= 400 && e.status < 500) || e.status === 401) throw e; // not a refusal: try again later
      if (part.length > 1) {
        for (const one of part) await upload(dv, [one]);
        return;
      }
      await tx('scans', 'readwrite', (s) => { s.put(Object.assign(part[0], { synced: 2, result: 'refused', error: e.message })); });
      return;
    }
    await tx('scans', 'readwrite', (s) => {
      out.data.forEach((a, j) => { s.put(Object.assign(part[j], { synced: 1, result: a.result })); });
    });
  }

  async function sync() {
    if (state.syncing || !navigator.onLine) { await refresh(); return; }
    state.syncing = true;
    try {
      const pending = await tx('scans', 'readonly', (s) => req(s.index('synced').getAll(0)));
      const byEvent = {};
      for (const sc of pending) (byEvent[sc.door] = byEvent[sc.door] || []).push(sc);
      for (const [dv, scans] of Object.entries(byEvent)) {
        // Up to 100 scans and about 40 KB a request (the dashboard's handler takes 64 KB).
        for (let i = 0, n; i < scans.length; i += n) {
          let bytes = 0;
          for (n = 0; i + n < scans.length && n < 100 && (n === 0 || bytes + scans[i + n].code.length < 40000); n++) bytes += scans[i + n].code.length + 120;
          await upload(dv, scans.slice(i, i + n));
        }
      }
    } catch (e) {
      if (!(e instanceof Offline)) console.warn('scanner sync:', e.message);
    } finally {
      state.syncing = false;
      await refresh();
    }
  }

  // --- the admission list and the keys -------------------------------------
  async function loadKeys() {
    try {
      state.jwks = await call('GET', '/api/ticket-keys');
      await kvPut('jwks', state.jwks);
    } catch (e) {
      state.jwks = (await kvGet('jwks')) || state.jwks;
    }
  }
  async function download() {
    const doors = door() ? [door()] : Array.from($('event').options).map((o) => o.value).filter(Boolean);
    try {
      await loadKeys();
      for (const dv of doors) {
        const { event_id: ev, occurrence_id: occ } = split(dv);
        let cursor = '', count = 0, generated = '';
        do {
          const p = await call('GET', '/api/admission-list?event_id=' + encodeURIComponent(ev) + (occ ? '&occurrence_id=' + encodeURIComponent(occ) : '') +
            (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
          if ((p.occurrence_id || null) !== occ || !(await verifyPage(p, ev))) throw new Error('the admission list does not verify');
          await tx('tickets', 'readwrite', async (s) => {
            for (const e of p.data) {
              const had = await req(s.get(e.ticket_number));
              const keep = had && had.check_in && !e.check_in ? { state: 'admitted', check_in: had.check_in } : {}; // a local scan not yet merged
              s.put(Object.assign({}, e, { event_id: ev }, keep));
            }
          });
          count += p.data.length;
          generated = generated || p.generated_at;
          cursor = p.has_more ? p.next_cursor : '';
        } while (cursor);
        await kvPut('list:' + dv, { count, generated_at: generated });
      }
    } catch (e) {
      if (!(e instanceof Offline)) console.warn('scanner list:', e.message);
    }
    refresh();
  }

  // --- the state line ---------------------------------------------------------
  async function refresh() {
    const online = navigator.onLine && state.reachable; // the server answered the last call
    $('net').textContent = online ? T.online : T.offline;
    root.dataset.net = online ? 'online' : 'offline';
    const dv = door() || (Array.from($('event').options).find((o) => o.value) || {}).value || '';
    const meta = dv ? await kvGet('list:' + dv) : null;
    $('list').textContent = meta ? T.list + ': ' + meta.count + ' ' + T.tickets + ', ' + clock(meta.generated_at) : T.list_none;
    root.dataset.list = meta ? String(meta.count) : '';
    const all = await tx('scans', 'readonly', (s) => req(s.getAll()));
    const pending = all.filter((s) => !s.synced).length, synced = all.filter((s) => s.synced === 1);
    const refused = all.filter((s) => s.synced === 2).length;
    const dups = synced.filter((s) => s.result === 'duplicate').length;
    $('queue').textContent = T.pending + ': ' + pending + ' · ' + T.synced + ': ' + synced.length + (dups ? ' (' + dups + ' ' + T.duplicates + ')' : '') +
      (refused ? ' · ' + T.refused + ': ' + refused : '');
    root.dataset.pending = String(pending);
    root.dataset.synced = String(synced.length);
    root.dataset.refused = String(refused);
  }

  // --- the camera ---------------------------------------------------------------
  async function startCamera() {
    const v = $('video'), btn = $('camera-toggle');
    if (state.stream) {
      state.stream.getTracks().forEach((t) => t.stop());
      state.stream = null;
      v.classList.remove('on');
      btn.textContent = btn.dataset.start;
      return;
    }
    try {
      state.stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false });
    } catch (e) {
      show('bad', T.no_camera, '', e.name || '');
      return;
    }
    state.lastCode = ''; // a code still in view when the camera starts again is a new scan
    v.srcObject = state.stream;
    await v.play();
    v.classList.add('on');
    btn.dataset.start = btn.dataset.start || btn.textContent;
    btn.textContent = btn.dataset.stop;
    tick();
  }
  function tick() {
    if (!state.stream) return;
    const v = $('video'), c = $('frame');
    if (!state.busy && v.videoWidth) {
      const scale = Math.min(1, 800 / v.videoWidth);
      c.width = Math.round(v.videoWidth * scale);
      c.height = Math.round(v.videoHeight * scale);
      const g = c.getContext('2d', { willReadFrequently: true });
      g.drawImage(v, 0, 0, c.width, c.height);
      const found = window.jsQR(g.getImageData(0, 0, c.width, c.height).data, c.width, c.height, { inversionAttempts: 'attemptBoth' });
      const now = Date.now();
      if (found && found.data) {
        // A code is scanned again only once it was out of view for REPEAT_MS.
        if (found.data !== state.lastCode || now - state.lastSeen > REPEAT_MS) {
          state.lastCode = found.data;
          handle(found.data);
        }
        state.lastSeen = now;
      }
    }
    setTimeout(tick, 150);
  }

  // --- wiring ---------------------------------------------------------------------
  $('gate').value = localStorage.getItem('tix-scanner-gate') || '';
  const savedEvent = localStorage.getItem('tix-scanner-event');
  if (savedEvent !== null && Array.from($('event').options).some((o) => o.value === savedEvent)) $('event').value = savedEvent;
  $('gate').addEventListener('change', () => localStorage.setItem('tix-scanner-gate', gate()));
  $('event').addEventListener('change', () => { localStorage.setItem('tix-scanner-event', door()); download(); });
  $('camera-toggle').addEventListener('click', startCamera);
  $('manual').addEventListener('submit', (e) => {
    e.preventDefault();
    const code = $('manual-code').value.trim();
    if (code) handle(code);
    $('manual-code').value = '';
  });
  // Signing out clears this device's storage: never while scans wait to be sent.
  const signout = document.querySelector('form.signout');
  signout.addEventListener('submit', async (e) => {
    e.preventDefault();
    await sync();
    if (root.dataset.pending !== '0') {
      show('bad', T.unsent, '', T.pending + ': ' + root.dataset.pending);
      return;
    }
    signout.submit();
  });
  $('download').addEventListener('click', download);
  $('sync').addEventListener('click', sync);
  window.addEventListener('online', () => { state.reachable = true; refresh(); sync(); });
  window.addEventListener('offline', refresh);
  setInterval(async () => { // every 10 s: is the server back? then send what waits
    if (!state.reachable) await loadKeys();
    sync();
  }, 10000);
  if ('serviceWorker' in navigator) navigator.serviceWorker.register(base + '/sw.js', { scope: base + '/' }).catch((e) => console.warn('scanner service worker:', e.message));
  loadKeys().then(download).then(sync).then(() => { root.dataset.ready = 'true'; });
  refresh();
})();
