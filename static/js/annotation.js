// Comfort for task pages; every page also works without it.
// - times the item (client_ms) so durations exclude page loads;
// - keyboard shortcuts: a label with data-key="1" is chosen by pressing 1. On pages with
//   several questions, each question is a [data-choice-group] and keys go to the first one
//   still unanswered; Enter submits;
// - marks the chosen card, and refuses a double submit.
(function () {
  "use strict";
  var form = document.querySelector("form.task-form");
  if (!form) return;
  var shownAt = performance.now();

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

  form.addEventListener("change", refreshSelected);

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
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

  var sent = false;
  form.addEventListener("submit", function (event) {
    if (sent) { event.preventDefault(); return; }
    sent = true;
    var ms = form.querySelector("input[name=client_ms]");
    if (ms) ms.value = String(Math.round(performance.now() - shownAt));
    var button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
  });
  refreshSelected();
})();
