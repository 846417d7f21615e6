// Passkeys in the organizer dashboard (docs/dashboard.md, Passkeys): adding
// one on the passkeys page and signing in with one. The server keeps each
// ceremony's challenge (bound to this browser by an HttpOnly cookie); this
// script only carries the options to navigator.credentials and the
// authenticator's answer back, converting base64url and ArrayBuffers.
(function () {
  "use strict";

  function toBuffer(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) {
      s += "=";
    }
    var bin = atob(s);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) {
      out[i] = bin.charCodeAt(i);
    }
    return out.buffer;
  }

  function toBase64url(buf) {
    var bytes = new Uint8Array(buf);
    var s = "";
    for (var i = 0; i < bytes.length; i++) {
      s += String.fromCharCode(bytes[i]);
    }
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function decodeIDs(list) {
    (list || []).forEach(function (c) {
      c.id = toBuffer(c.id);
    });
  }

  // credentialJSON is the PublicKeyCredential as the server parses it.
  function credentialJSON(cred) {
    var r = cred.response;
    var out = {
      id: cred.id,
      rawId: toBase64url(cred.rawId),
      type: cred.type,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: { clientDataJSON: toBase64url(r.clientDataJSON) }
    };
    if (cred.authenticatorAttachment) {
      out.authenticatorAttachment = cred.authenticatorAttachment;
    }
    if (r.attestationObject) {
      out.response.attestationObject = toBase64url(r.attestationObject);
      if (r.getTransports) {
        out.response.transports = r.getTransports();
      }
    } else {
      out.response.authenticatorData = toBase64url(r.authenticatorData);
      out.response.signature = toBase64url(r.signature);
      if (r.userHandle) {
        out.response.userHandle = toBase64url(r.userHandle);
      }
    }
    return out;
  }

  // post sends body and resolves with the JSON answer, or rejects with
  // the server's message.
  function post(url, body, type) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": type, "Accept": "application/json" },
      body: body
    }).then(function (res) {
      return res.json().catch(function () {
        return {};
      }).then(function (data) {
        if (!res.ok) {
          var e = new Error(data.error || "");
          e.fromServer = true;
          throw e;
        }
        return data;
      });
    });
  }

  function supported() {
    return window.isSecureContext && window.PublicKeyCredential && navigator.credentials;
  }

  // offer shows box where passkeys work: this browser supports them and
  // this page is on one of the relying party's origins (else the hint
  // with the address where they work).
  function offer(box) {
    var here = (box.getAttribute("data-origins") || "").split(" ").indexOf(window.location.origin) >= 0;
    var unsupported = document.querySelector(".passkey-unsupported");
    var elsewhere = document.querySelector(".passkey-elsewhere");
    if (!supported()) {
      return false;
    }
    if (unsupported) {
      unsupported.hidden = true;
    }
    if (!here) {
      if (elsewhere) {
        elsewhere.hidden = false;
      }
      return false;
    }
    box.hidden = false;
    return true;
  }

  // run drives one ceremony from box: begin, the browser's dialog, finish.
  function run(box, beginBody, ask, finishURL) {
    var status = box.querySelector(".passkey-status");
    var button = box.querySelector("button");
    status.textContent = box.getAttribute("data-working");
    button.disabled = true;
    post(box.getAttribute("data-begin"), beginBody, "application/x-www-form-urlencoded")
      .then(ask)
      .then(function (cred) {
        return post(finishURL, JSON.stringify(credentialJSON(cred)), "application/json");
      })
      .then(function (data) {
        window.location.assign(data.redirect);
      })
      .catch(function (err) {
        button.disabled = false;
        if (err && err.fromServer && err.message) {
          status.textContent = err.message;
        } else if (err && (err.name === "NotAllowedError" || err.name === "AbortError")) {
          status.textContent = box.getAttribute("data-cancelled");
        } else {
          status.textContent = box.getAttribute("data-failed");
        }
      });
  }

  function setUpAdd(form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var body = new URLSearchParams(new FormData(form)).toString();
      run(form, body, function (opts) {
        var pk = opts.publicKey;
        pk.challenge = toBuffer(pk.challenge);
        pk.user.id = toBuffer(pk.user.id);
        decodeIDs(pk.excludeCredentials);
        return navigator.credentials.create({ publicKey: pk });
      }, form.getAttribute("data-finish"));
    });
  }

  function setUpSignIn(box) {
    var next = document.querySelector("input[name=next]");
    var finish = box.getAttribute("data-finish");
    if (next && next.value) {
      finish += "?next=" + encodeURIComponent(next.value);
    }
    box.querySelector("button").addEventListener("click", function () {
      run(box, "", function (opts) {
        var pk = opts.publicKey;
        pk.challenge = toBuffer(pk.challenge);
        decodeIDs(pk.allowCredentials);
        return navigator.credentials.get({ publicKey: pk });
      }, finish);
    });
  }

  var add = document.getElementById("passkey-add");
  if (add && offer(add)) {
    setUpAdd(add);
  }
  var signIn = document.getElementById("passkey-signin");
  if (signIn && offer(signIn)) {
    setUpSignIn(signIn);
  }
})();
