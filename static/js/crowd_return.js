// Post a finished MTurk assignment back to MTurk as soon as the page shows: the judgments
// are already stored, and the button stays for browsers without JavaScript.
document.querySelectorAll("form[data-auto-submit]").forEach((form) => form.submit());
