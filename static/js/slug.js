// A slug field marked data-slug-from="<id of the name field>" follows the name as it is
// typed (lowercase letters, digits, hyphens) until someone edits the slug itself. The
// server proposes the same when the slug is left blank, so this is only a convenience.
document.querySelectorAll("[data-slug-from]").forEach((slug) => {
  const name = document.getElementById(slug.dataset.slugFrom);
  if (!name) return;
  let edited = slug.value !== "";
  slug.addEventListener("input", () => { edited = slug.value !== ""; });
  name.addEventListener("input", () => {
    if (edited) return;
    slug.value = name.value
      .normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
      .toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 80);
  });
});
