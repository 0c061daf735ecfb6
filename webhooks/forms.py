from django import forms
from django.core.validators import URLValidator

from evalhub.nul_refusal import RefusesNul

from .models import EventType, Subscription


class SubscriptionForm(RefusesNul, forms.Form):
    url = forms.URLField(
        label="URL",
        max_length=Subscription.URL_CHARS,
        assume_scheme="https",
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="EvalHub POSTs each event here, signed (Standard Webhooks).",
    )
    description = forms.CharField(
        max_length=Subscription.DESCRIPTION_CHARS,
        required=False,
        help_text="For you: what listens there.",
    )
    events = forms.MultipleChoiceField(
        choices=EventType.choices, widget=forms.CheckboxSelectMultiple
    )
