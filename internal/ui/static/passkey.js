// backupweb: passkey ceremonies in the browser. Served as a static asset
// (the pages' Content-Security-Policy allows scripts from this origin
// only, never inline). Two kinds of elements start a ceremony:
//
//   <form data-passkey="register" data-begin data-finish [data-csrf data-next]>
//     adds a passkey, named by the form's name field: for the signed-in
//     user (then reloads the page), or as a first second factor at the
//     enrolment (then shows the recovery codes the answer carries);
//   <button data-passkey="sign-in" data-begin data-finish [data-csrf data-next]>
//     signs in with a passkey, then follows the answer's next.
//
// Without data-csrf the token is the page's own form's csrf_token.
//
// The server begins each ceremony (POST data-begin, JSON options) and
// checks the browser's answer (POST data-finish); this script only passes
// them between the server and navigator.credentials. Errors are shown in
// the page's [role=alert] element #passkey-error.
"use strict";

(function () {
  function showError(text) {
    var el = document.getElementById("passkey-error");
    if (!el) {
      return;
    }
    el.textContent = text;
    el.hidden = false;
  }

  function hideError() {
    var el = document.getElementById("passkey-error");
    if (el) {
      el.hidden = true;
    }
  }

  // post sends body as JSON and returns the parsed answer; a refusal
  // (any status but 2xx) throws an Error with the server's sentence.
  async function post(url, csrf, body) {
    var res = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "X-CSRF-Token": csrf
      },
      body: JSON.stringify(body)
    });
    var data = {};
    try {
      data = await res.json();
    } catch (e) {
      data = {};
    }
    if (!res.ok) {
      throw new Error(data.error || "The server refused the request (" + res.status + ").");
    }
    return data;
  }

  // explain turns a browser's refusal into a sentence for a person.
  function explain(err) {
    if (err && err.name === "NotAllowedError") {
      return "The passkey request was cancelled or timed out. Try again.";
    }
    if (err && err.name === "InvalidStateError") {
      return "This authenticator is registered already.";
    }
    if (err && err.name === "SecurityError") {
      return "This address is not the one the service is configured for; passkeys work only at its public address.";
    }
    return (err && err.message) || "The passkey could not be used.";
  }

  function supported() {
    return window.PublicKeyCredential && PublicKeyCredential.parseCreationOptionsFromJSON &&
      PublicKeyCredential.parseRequestOptionsFromJSON;
  }

  // csrfOf returns the CSRF token el carries, or else that of the page's
  // own form (the second-factor and enrolment pages).
  function csrfOf(el) {
    if (el.dataset.csrf) {
      return el.dataset.csrf;
    }
    var field = document.querySelector("input[name=csrf_token]");
    return field ? field.value : "";
  }

  // showRecovery replaces the enrolment page's content by the recovery
  // codes the answer carries, shown this once, and the way on.
  function showRecovery(form, done) {
    var box = document.getElementById("passkey-enrolled");
    var list = document.getElementById("passkey-recovery");
    var slot = box.parentNode;
    // The attribute, not the property: an inline SVG (the QR code) has
    // no hidden property.
    Array.prototype.forEach.call(slot.parentNode.children, function (el) {
      if (el !== slot && el.tagName !== "H1") {
        el.setAttribute("hidden", "");
      }
    });
    Array.prototype.forEach.call(slot.children, function (el) {
      if (el !== box && el.tagName !== "SCRIPT") {
        el.setAttribute("hidden", "");
      }
    });
    done.recovery.forEach(function (code) {
      var li = document.createElement("li");
      li.textContent = code;
      list.appendChild(li);
    });
    document.getElementById("passkey-continue").setAttribute("href", done.next || "/");
    box.hidden = false;
  }

  async function register(form) {
    var name = form.elements.name.value.trim();
    var csrf = csrfOf(form);
    var begun = await post(form.dataset.begin, csrf, {next: form.dataset.next || ""});
    var cred = await navigator.credentials.create({
      publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(begun.options.publicKey)
    });
    var done = await post(form.dataset.finish, csrf, {ceremony: begun.ceremony, name: name, credential: cred.toJSON()});
    if (done.recovery) {
      showRecovery(form, done);
      return;
    }
    window.location.assign(window.location.pathname + "?added=1");
  }

  async function signIn(button) {
    var csrf = csrfOf(button);
    var begun = await post(button.dataset.begin, csrf, {next: button.dataset.next || ""});
    var cred = await navigator.credentials.get({
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(begun.options.publicKey)
    });
    var done = await post(button.dataset.finish, csrf, {ceremony: begun.ceremony, credential: cred.toJSON()});
    window.location.assign(done.next || "/");
  }

  function guard(el, run) {
    return async function (ev) {
      ev.preventDefault();
      hideError();
      if (!supported()) {
        showError("This browser cannot use passkeys.");
        return;
      }
      el.setAttribute("aria-busy", "true");
      try {
        await run(el);
      } catch (err) {
        showError(explain(err));
      } finally {
        el.removeAttribute("aria-busy");
      }
    };
  }

  document.querySelectorAll("form[data-passkey=register]").forEach(function (form) {
    form.hidden = false;
    form.addEventListener("submit", guard(form, register));
  });
  document.querySelectorAll("button[data-passkey=sign-in]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", guard(button, signIn));
  });
})();
