// The campaign form: only the item source of the chosen task kind is shown (each source's
// fieldset lists its kinds in data-kinds). Without this script every source is shown, and
// the server takes the one the kind needs.
(function () {
  "use strict";
  var kind = document.querySelector('select[name="task_kind"]');
  var sources = document.querySelectorAll("fieldset.source[data-kinds]");
  if (!kind || !sources.length) return;
  function show() {
    sources.forEach(function (fieldset) {
      var kinds = fieldset.getAttribute("data-kinds").trim().split(/\s+/);
      fieldset.hidden = kinds.indexOf(kind.value) === -1;
    });
  }
  kind.addEventListener("change", show);
  show();
})();
