"""The owner's forms for an arena's crowd: a gold battle, and a launch on a platform. The
ranges are the declared ones (arenas/crowd_settings.py, the campaigns' settings)."""

from decimal import Decimal

from django import forms
from django.conf import settings

from annotation.campaign_settings import CampaignSettings
from annotation.provider_settings import MTurkConfig, ProlificConfig
from evalhub.nul_refusal import RefusesNul

from .crowd import LaunchSetup
from .crowd_models import GoldBattle
from .crowd_settings import CrowdSettings


def _range(schema, name: str) -> dict:
    field = schema.model_fields[name]
    bounds = {}
    for rule in field.metadata:
        if getattr(rule, "ge", None) is not None:
            bounds["min_value"] = rule.ge
        if getattr(rule, "le", None) is not None:
            bounds["max_value"] = rule.le
    return {**bounds, "initial": field.default, "help_text": field.description}


class GoldBattleForm(RefusesNul, forms.ModelForm):
    class Meta:
        model = GoldBattle
        fields = ["prompt", "first", "second", "better"]
        widgets = {
            "prompt": forms.Textarea(attrs={"rows": 2}),
            "first": forms.Textarea(attrs={"rows": 3}),
            "second": forms.Textarea(attrs={"rows": 3}),
        }
        help_texts = {"better": "The answer a careful voter prefers; shown on a random side."}


class CrowdLaunchForm(RefusesNul, forms.Form):
    provider = forms.ChoiceField(choices=[("prolific", "Prolific"), ("mturk", "Amazon MTurk")])
    platform_sandbox = forms.BooleanField(
        required=False, initial=True, label="MTurk: use the sandbox (no money moves)"
    )
    participants = forms.IntegerField(**_range(CrowdSettings, "participants"))
    battles_per_participant = forms.IntegerField(**_range(CrowdSettings, "battles_per_participant"))
    gold_per_batch = forms.IntegerField(
        label="Gold battles per participant", **_range(CampaignSettings, "gold_per_batch")
    )
    reward_per_participant = forms.DecimalField(
        max_digits=8,
        decimal_places=2,
        min_value=Decimal("0.01"),
        max_value=Decimal("10000"),
        help_text="Paid for each participant's batch, in the platform's currency.",
    )
    budget = forms.DecimalField(
        max_digits=10,
        decimal_places=2,
        min_value=Decimal("0.01"),
        max_value=Decimal("10000000"),
        help_text="What the launch may spend in all, platform fees included: a launch "
        "whose estimate is above it is refused.",
    )
    time_limit_minutes = forms.IntegerField(**_range(CampaignSettings, "time_limit_minutes"))
    language = forms.ChoiceField(
        choices=settings.LANGUAGES,
        required=False,
        initial="en",
        label="Participants' language",
        help_text="The language of the study's pages and battle pages (docs/translating.md).",
    )
    # Screening: the providers' own settings, declared in annotation/provider_settings.py.
    devices = forms.MultipleChoiceField(
        required=False,
        choices=[("desktop", "Desktop"), ("tablet", "Tablet"), ("mobile", "Mobile")],
        widget=forms.CheckboxSelectMultiple,
        label="Prolific: devices participants may use",
        help_text=ProlificConfig.model_fields["device_compatibility"].description
        + " None ticked: desktop only.",
    )
    min_approval_rate = forms.IntegerField(
        required=False,
        label="MTurk: lowest approval rate (%)",
        **_range(MTurkConfig, "min_approval_rate"),
    )
    min_approved_hits = forms.IntegerField(
        required=False,
        label="MTurk: fewest approved HITs",
        **_range(MTurkConfig, "min_approved_hits"),
    )
    locales = forms.CharField(
        required=False,
        max_length=300,
        label="MTurk: countries allowed",
        help_text="ISO codes separated by commas (e.g. US, GB); empty: anywhere.",
    )
    confirm = forms.BooleanField(
        required=False,
        label="I confirm that this launch pays real money (staff launching at once)",
    )

    def clean_language(self):
        # Left out (a script's post): English, as before the field existed.
        return self.cleaned_data["language"] or "en"

    def clean_locales(self):
        codes = [code.strip() for code in self.cleaned_data["locales"].split(",") if code.strip()]
        wrong = [code for code in codes if not (len(code) == 2 and code.isalpha())]
        if wrong:
            raise forms.ValidationError(
                f"Countries are two-letter ISO codes (US, GB): {', '.join(wrong)} is not one."
            )
        return ", ".join(code.upper() for code in codes)

    def setup(self) -> LaunchSetup:
        data = self.cleaned_data
        return LaunchSetup(
            provider=data["provider"],
            participants=data["participants"],
            battles_per_participant=data["battles_per_participant"],
            reward_per_participant=data["reward_per_participant"],
            budget=data["budget"],
            gold_per_batch=data["gold_per_batch"],
            time_limit_minutes=data["time_limit_minutes"],
            platform_sandbox=data["platform_sandbox"],
            screening=self.screening(),
            language=data["language"],
        )

    def screening(self) -> dict:
        """The provider settings the form sets for its platform (the others' are ignored)."""
        data = self.cleaned_data
        if data["provider"] == "prolific":
            return {"device_compatibility": data["devices"]} if data["devices"] else {}
        chosen = {
            "min_approval_rate": data["min_approval_rate"],
            "min_approved_hits": data["min_approved_hits"],
        }
        config = {key: value for key, value in chosen.items() if value is not None}
        locales = [code.strip().upper() for code in data["locales"].split(",") if code.strip()]
        if locales:
            config["locales"] = locales
        return config
