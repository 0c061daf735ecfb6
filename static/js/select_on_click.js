// A click on a field marked data-select-on-click selects its text, ready to copy (no inline
// handler: the Content-Security-Policy refuses inline scripts).
document.querySelectorAll("[data-select-on-click]").forEach((field) => {
  field.addEventListener("click", () => field.select());
});
