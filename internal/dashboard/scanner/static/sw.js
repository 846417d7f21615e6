// The scanner's service worker (docs/door.md, "Scanner page"): it keeps the
// page and its assets, so the scanner opens and works with no network. The
// page's JSON calls (api/) are never cached: offline, the page decides from
// its IndexedDB list and queues the scans itself.
'use strict';
const CACHE = 'tix-scanner-v1';
const scope = self.registration.scope; // .../scanner/
const SHELL = [scope, scope + 'static/scanner.js', scope + 'static/jsQR.js', scope + 'static/scanner.css',
  new URL('../static/dashboard.css', scope).href]; // and the dashboard's styles it builds on

self.addEventListener('install', (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (e) => {
  e.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

// Network first (a fresh page online), the kept copy when the network fails.
self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== 'GET' || !SHELL.includes(url.origin + url.pathname) && !e.request.url.startsWith(scope) ||
      url.pathname.startsWith(new URL(scope).pathname + 'api/')) return;
  const key = e.request.mode === 'navigate' ? scope : url.origin + url.pathname;
  e.respondWith(fetch(e.request).then((res) => {
    if (res.ok && res.type === 'basic' && !res.redirected) {
      const copy = res.clone();
      caches.open(CACHE).then((c) => c.put(key, copy));
    }
    return res;
  }).catch(() => caches.match(key).then((hit) => hit || Response.error())));
});
