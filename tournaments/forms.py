"""Creating tournaments: a Spot The Bot tournament, or an A/B experiment (ChatEval).

The checks that do not depend on how the data arrives (`spot_the_bot_errors`,
`ab_errors`) are shared with the REST API, so that a form and a POST refuse the same
tournaments with the same messages.
"""

from django import forms

from evalhub import limits
from evalhub.comparison import latest_submission
from evalhub.declared import Declared, declare_fields
from evalhub.models import Submission, System
from evalhub.nul_refusal import RefusesNul
from evalhub.slugs import ProposedSlugForm

from .models import PartnerSet, Tournament
from .tournament_settings import ABSettings, SpotTheBotSettings, settings_errors

Schedule = Tournament.Schedule


def spot_the_bot_errors(
    *, systems, schedule, partner_set, segment_lengths, features, settings=None
) -> dict[str, str]:
    """{field: message} for a Spot The Bot tournament's settings; empty when they are fine.

    `settings` holds the other declared settings (tournament_settings.SpotTheBotSettings)."""
    errors = settings_errors(
        "spot_the_bot",
        {**(settings or {}), "segment_lengths": segment_lengths, "features": features},
    )
    systems = list(systems or [])
    if not systems:
        errors["systems"] = "Choose the systems of the pool."
    elif schedule == Schedule.ALL_PLAY_ALL and len(systems) < 2:
        errors["systems"] = "All-play-all needs at least two systems."
    if schedule == Schedule.BIPARTITE_PLAY:
        if partner_set is None:
            errors["partner_set"] = "Bipartite-play needs a partner set."
        else:
            overlap = sorted(
                {s.slug for s in systems} & {s.slug for s in partner_set.systems.all()}
            )
            if overlap:
                errors["systems"] = (
                    f"These systems are partners in {partner_set}, so they cannot also be "
                    f"evaluated against it: {', '.join(overlap)}."
                )
    elif partner_set is not None:
        errors["partner_set"] = "A partner set is used by bipartite-play only."
    return errors


def ab_errors(*, submission, baselines, settings=None) -> dict[str, str]:
    """{field: message} for an A/B experiment of `submission` against `baselines`.

    `settings` holds the declared settings (tournament_settings.ABSettings)."""
    errors = settings_errors("ab", settings or {})
    baselines = list(baselines or [])
    if not baselines:
        errors["baselines"] = "Choose at least one baseline."
    elif submission is not None:
        if submission.system_id in {b.pk for b in baselines}:
            errors["baselines"] = f"{submission.system.name} cannot be its own baseline."
        else:
            missing = [
                b.name for b in baselines if latest_submission(b, submission.prompt_set) is None
            ]
            if missing:
                errors["baselines"] = (
                    f"No responses to {submission.prompt_set.name} from: {', '.join(missing)}."
                )
    return errors


def user_submissions(user):
    """Submissions of the systems `user` may change, newest first."""
    return (
        Submission.objects.filter(system__in=System.objects.managed_by(user))
        .exclude(status=Submission.Status.FAILED)
        .select_related("system", "prompt_set")
        .order_by("-created")
    )


def baseline_choices(user):
    return System.objects.visible_to(user).filter(is_baseline=True).order_by("name")


def latest_partner_sets(user):
    return PartnerSet.objects.visible_to(user).order_by("slug", "-version")


# The settings of each kind of tournament, shared by the forms and the API.
SPOT_THE_BOT_FIELDS = [
    "domain",
    "systems",
    "schedule",
    "partner_set",
    "conversations_per_pair",
    "exchanges",
    "segment_lengths",
    "human_share",
    "features",
    "batch_size",
    "max_batches_per_worker",
    "judgments_per_segment",
    "show_seed",
]
AB_FIELDS = [
    "submission",
    "baselines",
    "judgments_per_prompt",
    "prompts_per_batch",
    "reward_per_judgment",
]


class IntegerListField(forms.CharField):
    """ "2, 3, 5" <-> [2, 3, 5]."""

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return ", ".join(str(v) for v in value)
        return value

    def to_python(self, value):
        value = super().to_python(value)
        numbers = []
        for part in value.replace(";", ",").split(","):
            part = part.strip()
            if not part:
                continue
            try:
                numbers.append(int(part))
            except ValueError:
                raise forms.ValidationError(f"'{part}' is not a whole number.") from None
        return numbers


class NameListField(forms.CharField):
    """ "sensibleness, fluency" <-> ["sensibleness", "fluency"]."""

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return ", ".join(value)
        return value

    def to_python(self, value):
        value = super().to_python(value)
        return [part.strip() for part in value.split(",") if part.strip()]


class TournamentForm(RefusesNul, ProposedSlugForm, forms.ModelForm):
    settings_schema: type[Declared]

    def __init__(self, *args, user, **kwargs):
        self.user = user
        super().__init__(*args, **kwargs)
        declare_fields(self.fields, self.settings_schema)

    def declared_settings(self, cleaned) -> dict:
        return {name: cleaned.get(name) for name in self.settings_schema.model_fields}

    def _add_errors(self, errors: dict[str, str]) -> None:
        for field, message in errors.items():
            self.add_error(field if field in self.fields else None, message)


class SpotTheBotForm(TournamentForm):
    settings_schema = SpotTheBotSettings
    systems = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(),
        to_field_name="slug",
        widget=forms.CheckboxSelectMultiple,
        label="Pool of systems",
        help_text="Their bot-bot conversations are segmented into the items.",
    )
    # Help texts, defaults and ranges of the settings: tournament_settings.py.
    segment_lengths = IntegerListField(initial="2, 3, 5")
    features = NameListField(initial="sensibleness, specificity, fluency")
    partner_set = forms.ModelChoiceField(
        queryset=PartnerSet.objects.none(),
        required=False,
        help_text="For bipartite-play; a new one can be made on the partner set page.",
    )

    class Meta:
        model = Tournament
        fields = ["name", "slug", "description", *SPOT_THE_BOT_FIELDS, "published"]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "domain": forms.TextInput(attrs={"list": "seed-domains"}),
        }
        help_texts = {
            "slug": "Lowercase letters, digits and hyphens; used in URLs and the API.",
            "domain": "Conversations of this domain are used, e.g. personachat. Collected "
            "dialogues start from a human-human conversation of the domain: the list offers "
            "the domains that have some.",
            "schedule": "How the bot-bot conversations come about.",
            "published": "Anyone may see a published tournament; otherwise only you and staff.",
        }

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, user=user, **kwargs)
        self.fields["systems"].queryset = System.objects.visible_to(user).order_by("name")
        self.fields["partner_set"].queryset = latest_partner_sets(user)
        self.fields["domain"].required = True

    def clean(self):
        cleaned = super().clean()
        self._add_errors(
            spot_the_bot_errors(
                systems=cleaned.get("systems"),
                schedule=cleaned.get("schedule"),
                partner_set=cleaned.get("partner_set"),
                segment_lengths=cleaned.get("segment_lengths", [2]),
                features=cleaned.get("features", ["sensibleness"]),
                settings=self.declared_settings(cleaned),
            )
        )
        return cleaned

    def save(self, commit=True):
        self.instance.kind = Tournament.Kind.SPOT_THE_BOT
        self.instance.owner = self.user
        return super().save(commit)


class ABForm(TournamentForm):
    settings_schema = ABSettings
    submission = forms.ModelChoiceField(
        queryset=Submission.objects.none(),
        to_field_name="public_id",
        help_text="The responses to evaluate: a submission of one of your systems.",
    )
    baselines = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(),
        to_field_name="slug",
        widget=forms.CheckboxSelectMultiple,
        help_text="Each prompt is judged once against each baseline.",
    )

    class Meta:
        model = Tournament
        fields = ["name", "slug", "description", *AB_FIELDS, "published"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        help_texts = {
            "slug": "Lowercase letters, digits and hyphens; used in URLs and the API.",
            "published": "Anyone may see a published tournament; otherwise only you and staff.",
        }

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, user=user, **kwargs)
        self.fields["submission"].queryset = user_submissions(user)
        # Several uploads of one system to one prompt set in a minute must still be told
        # apart: the file they came from and the submission's number.
        self.fields["submission"].label_from_instance = lambda s: (
            f"{s.system.name} on {s.prompt_set.name}: {s.original_filename or 'by the API'} "
            f"#{s.pk} ({s.created:%Y-%m-%d %H:%M})"
        )
        self.fields["baselines"].queryset = baseline_choices(user)

    def clean(self):
        cleaned = super().clean()
        if "submission" in cleaned:
            self._add_errors(
                ab_errors(
                    submission=cleaned["submission"],
                    baselines=cleaned.get("baselines"),
                    settings=self.declared_settings(cleaned),
                )
            )
        return cleaned

    def save(self, commit=True):
        tournament = self.instance
        tournament.kind = Tournament.Kind.AB
        tournament.owner = self.user
        tournament.prompt_set = self.cleaned_data["submission"].prompt_set
        tournament = super().save(commit)
        if commit:
            pool = [self.cleaned_data["submission"].system, *self.cleaned_data["baselines"]]
            tournament.systems.set(pool)
        return tournament


class PartnerSetForm(RefusesNul, forms.Form):
    """A new partner set; `researcher_flow.create_partner_set` checks and stores it."""

    name = forms.CharField(max_length=limits.NAME_CHARS)
    slug = forms.SlugField(max_length=80, help_text="Lowercase letters, digits and hyphens.")
    description = forms.CharField(
        required=False,
        max_length=limits.DESCRIPTION_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    systems = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(),
        to_field_name="slug",
        widget=forms.CheckboxSelectMultiple,
        label="Partner systems",
        help_text="Every target of a bipartite-play tournament talks with each of them.",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["systems"].queryset = System.objects.visible_to(user).order_by("name")
