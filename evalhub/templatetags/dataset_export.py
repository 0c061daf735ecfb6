"""`{% dataset_export_form url %}`: the form that downloads a study as a Hugging Face
dataset, with the card's licence and citation (evalhub/hf/card.py)."""

from django import template

from evalhub.hf.card import CITATION_CHARS, LICENSES

register = template.Library()


@register.inclusion_tag("evalhub/_dataset_export_form.html")
def dataset_export_form(url: str, what: str = "study"):
    return {"url": url, "what": what, "licenses": LICENSES, "citation_chars": CITATION_CHARS}
