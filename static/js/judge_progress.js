// The run page's progress (templates/judging/run_detail.html): every few seconds, reads
// the run's progress JSON and updates the bar and the numbers, until the run stops.
(function () {
  "use strict";
  var section = document.getElementById("judge-progress");
  if (!section) { return; }
  var url = section.getAttribute("data-progress-url");
  var ACTIVE = { queued: true, running: true };
  var INTERVAL_MS = 2000;

  function field(name) { return section.querySelector('[data-field="' + name + '"]'); }

  function show(p) {
    var status = field("status");
    status.textContent = p.status_display;
    status.className = "status-tag " + p.status;
    field("bar").value = p.percent;
    field("bar").textContent = p.percent + "%";
    ["percent", "items_done", "items_total", "items_failed", "items_skipped", "prompt_tokens",
      "completion_tokens", "requests_today"].forEach(function (name) {
      var shown = field(name);  // items_skipped is on arena runs' pages only
      if (shown) { shown.textContent = String(p[name]); }
    });
    var error = field("last_error");
    error.textContent = p.last_error;
    error.hidden = !p.last_error;
    section.setAttribute("data-status", p.status);
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (p) {
        if (!p) { return; }
        show(p);
        if (ACTIVE[p.status]) { window.setTimeout(poll, INTERVAL_MS); }
      })
      .catch(function () { window.setTimeout(poll, INTERVAL_MS * 2); });
  }

  poll();
}());
