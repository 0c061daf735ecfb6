// Comfort for task pages; every page also works without it.
// - times the item (client_ms) so durations exclude page loads;
// - keyboard shortcuts: a label with data-key="1" is chosen by pressing 1. On pages with
//   several questions, each question is a [data-choice-group] and keys go to the first one
//   still unanswered; Enter submits;
// - marks the chosen card, and refuses a double submit;
// - posts the answer and shows the next item in place, in one round trip instead of a
//   post and a redirect (annotation/views/in_place.py). If the post cannot be sent, the
//   form is submitted the plain way, so no answer is lost.
(function () {
  "use strict";
  var form = null;
  var shownAt = 0;
  var sent = false;

  function groups() {
    var found = form.querySelectorAll("[data-choice-group]");
    return found.length ? Array.prototype.slice.call(found) : [form];
  }

  function answered(group) {
    return group.querySelector("input[type=radio]:checked") !== null;
  }

  function refreshSelected() {
    form.querySelectorAll("label.choice").forEach(function (label) {
      var input = label.querySelector("input");
      label.classList.toggle("selected", !!(input && input.checked));
    });
  }

  function show(html, address) {
    var page = new DOMParser().parseFromString(html, "text/html");
    document.title = page.title;
    // Scripts of a parsed document do not run when moved here: this one stays in charge.
    document.body.replaceWith(page.body);
    if (address) history.replaceState(null, "", address);
    window.scrollTo(0, 0);
    var main = document.querySelector("main");
    if (main) main.focus({ preventScroll: true });
    setUp();
  }

  function postInPlace(event) {
    event.preventDefault();
    var posting = form;
    fetch(posting.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(posting, event.submitter)),
      headers: { "X-EvalHub-In-Place": "1" },
      credentials: "same-origin",
    })
      .then(function (response) {
        var target = response.headers.get("X-EvalHub-Redirect");
        if (target) return window.location.assign(target);
        if (response.redirected) return window.location.assign(response.url);
        return response.text().then(function (html) {
          show(html, response.headers.get("X-EvalHub-Location"));
        });
      })
      .catch(function () {
        // Not sent, or no answer: the plain post stores the judgment once, whichever.
        posting.submit();
      });
  }

  function onSubmit(event) {
    if (sent) { event.preventDefault(); return; }
    sent = true;
    var ms = form.querySelector("input[name=client_ms]");
    if (ms) ms.value = String(Math.round(performance.now() - shownAt));
    if (form.hasAttribute("data-in-place") && window.fetch) postInPlace(event);
    // Disabled after FormData read the form: a disabled submitter would not be sent.
    var button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
  }

  function setUp() {
    form = document.querySelector("form.task-form");
    if (!form) return;
    shownAt = performance.now();
    sent = false;
    form.addEventListener("change", refreshSelected);
    form.addEventListener("submit", onSubmit);
    refreshSelected();
  }

  // ABC-Eval: j / k move the current bot turn, a digit ticks that label of it, r ticks
  // "I checked every bot turn". True when the key was one of these.
  function flagKey(event) {
    var turns = Array.prototype.slice.call(form.querySelectorAll("fieldset.turn-flags"));
    if (!turns.length) return false;
    var at = turns.findIndex(function (t) { return t.classList.contains("current"); });
    if (event.key === "j" || event.key === "k") {
      var next = Math.min(turns.length - 1, Math.max(0, at + (event.key === "j" ? 1 : -1)));
      if (at >= 0) turns[at].classList.remove("current");
      turns[next].classList.add("current");
      turns[next].scrollIntoView({ block: "center" });
      return true;
    }
    if (event.key === "r") {
      var reviewed = form.querySelector('input[name="reviewed"]');
      if (reviewed) reviewed.checked = !reviewed.checked;
      return !!reviewed;
    }
    var box = at >= 0 && turns[at].querySelector('label[data-flag-key="' + event.key + '"] input');
    if (!box) return false;
    box.checked = !box.checked;
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (!form || !form.isConnected) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var typing = event.target && /^(TEXTAREA|INPUT)$/.test(event.target.tagName) &&
      event.target.type === "text";
    if (!typing && flagKey(event)) { event.preventDefault(); return; }
    var target = event.target;
    if (target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text"))) return;
    if (event.key === "Enter") {
      event.preventDefault();
      form.requestSubmit ? form.requestSubmit() : form.submit();
      return;
    }
    var list = groups();
    var group = list.find(function (g) { return !answered(g); }) || list[list.length - 1];
    var label = group.querySelector('label[data-key="' + event.key + '"]');
    if (!label) return;
    var input = label.querySelector("input");
    if (input) {
      input.checked = true;
      input.dispatchEvent(new Event("change", { bubbles: true }));
      event.preventDefault();
    }
  });

  // The batch's time limit, counting down (the page says the limit and its end without
  // JavaScript; an expired batch is refused on the server whatever this shows).
  function countDown() {
    var clock = document.querySelector(".time-left[data-expires]");
    if (!clock) return;
    var end = Date.parse(clock.getAttribute("data-expires"));
    var out = clock.querySelector(".countdown");
    function tick() {
      var left = Math.max(0, Math.round((end - Date.now()) / 1000));
      var m = Math.floor(left / 60), s = left % 60;
      // The words come translated from the page (data-left, data-up): annotation.html.
      var time = m + ":" + (s < 10 ? "0" : "") + s;
      out.textContent = " " + (left ? clock.getAttribute("data-left").replace("{time}", time) : clock.getAttribute("data-up"));
      clock.classList.toggle("urgent", left < 300);
      if (left) setTimeout(tick, 1000);
    }
    tick();
  }

  setUp();
  countDown();
})();
