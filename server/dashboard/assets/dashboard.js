"use strict";
// The dashboard's only script (no inline script is allowed by its CSP): confirmations,
// copy buttons, and forms answered in place (DLQ replay) with a poll until settled.
(function () {
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    var question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      event.preventDefault();
      return;
    }
    var target = form.getAttribute("data-target");
    if (!target) return;
    event.preventDefault();
    var button = form.querySelector("button");
    if (button) button.disabled = true;
    fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      headers: { "x-dashboard-fragment": "1" },
      credentials: "same-origin",
    })
      .then(function (response) {
        return response.text();
      })
      .then(function (text) {
        replace(target, text);
      })
      .catch(function () {
        if (button) button.disabled = false;
        announce("The request failed; try again.");
      });
  });

  function replace(selector, text) {
    var element = document.querySelector(selector);
    if (!element) return;
    var template = document.createElement("template");
    template.innerHTML = text;
    var fresh = template.content.firstElementChild;
    if (!fresh) return;
    element.replaceWith(fresh);
    poll(fresh);
  }

  // An element carrying data-poll is not settled yet: fetch its URL again until it is.
  function poll(element) {
    var watched = element.querySelectorAll("[data-poll]");
    if (element.hasAttribute("data-poll")) watched = [element];
    Array.prototype.forEach.call(watched, function (node) {
      var url = node.getAttribute("data-poll");
      var tries = 0;
      var tick = function () {
        tries += 1;
        fetch(url, { headers: { "x-dashboard-fragment": "1" }, credentials: "same-origin" })
          .then(function (response) {
            return response.text();
          })
          .then(function (text) {
            var template = document.createElement("template");
            template.innerHTML = text;
            var fresh = template.content.firstElementChild;
            if (!fresh || !node.isConnected) return;
            node.replaceWith(fresh);
            node = fresh;
            if (fresh.hasAttribute("data-poll") && tries < 60) setTimeout(tick, 1000);
          });
      };
      setTimeout(tick, 500);
    });
  }

  function announce(message) {
    var live = document.getElementById("live");
    if (live) live.textContent = message;
  }

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent || "").then(function () {
      announce("Copied.");
      button.textContent = "Copied";
    });
  });

  Array.prototype.forEach.call(document.querySelectorAll("[data-poll]"), function (node) {
    poll(node);
  });
})();
