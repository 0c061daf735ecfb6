"""The staff form that sets a campaign up: its settings, task config and item source."""

import json

from django import forms

from endpoints.chat import chat_systems
from evalhub.declared import declare_fields, describe
from evalhub.importers.problems import InvalidUpload
from evalhub.models import PromptSet, System
from evalhub.nul_refusal import RefusesNul
from evalhub.permissions import managed_by
from evalhub.services import read_upload
from evalhub.slugs import ProposedSlugForm

from .campaign_settings import CampaignSettings, settings_errors
from .campaigns import (
    ChatConversations,
    ChatSystems,
    ConversationFiles,
    ResponsePairs,
    available_kinds,
    builds_from_responses,
    builds_from_systems,
)
from .crowd import PROVIDERS
from .kinds import get_kind
from .kinds.base import ConfigInvalid
from .models import Campaign

# Path segments under manage/campaigns/ that a campaign slug would shadow.
RESERVED_SLUGS = {"new"}
PROVIDERS_HELP = (
    "A Prolific or Amazon Mechanical Turk campaign is estimated, launched (with a "
    "confirmation, since it pays real money), synced and paid with `manage.py crowd`; its "
    "shareable link keeps working beside the platform."
)


class ProviderSelect(forms.Select):
    """Lists every provider; only the installed ones can be chosen."""

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        if value not in PROVIDERS:
            option["attrs"]["disabled"] = True
        return option


class CampaignForm(RefusesNul, ProposedSlugForm, forms.ModelForm):
    slug_from = "title"
    task_config = forms.CharField(
        label="Task config (JSON)",
        required=False,
        initial="{}",
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text="An object; keys left out take the kind's defaults (listed below the form).",
    )
    completion_redirect_url = forms.URLField(
        label="Completion redirect URL",
        required=False,
        assume_scheme="https",
        help_text="Where a participant goes after a batch; {code} is replaced by their code.",
    )
    prompt_set = forms.ModelChoiceField(
        queryset=PromptSet.objects.all(), to_field_name="slug", required=False
    )
    system = forms.ModelChoiceField(
        queryset=System.objects.all(),
        to_field_name="slug",
        required=False,
        help_text="The system under evaluation: its latest submission on the prompt set.",
    )
    baselines = forms.ModelMultipleChoiceField(
        queryset=System.objects.all(),
        to_field_name="slug",
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Compared with the system prompt by prompt: the latest submission of each.",
    )
    conversations = forms.FileField(
        required=False,
        help_text="A .jsonl file in the conversation interchange format; imported into the "
        "catalog, then built into items.",
    )
    gold_items = forms.FileField(
        label="Gold and training items",
        required=False,
        help_text='Optional .jsonl: the same lines plus "role": "gold" or "training" and a '
        '"gold" object with the answer.',
    )
    chat_campaign = forms.ModelChoiceField(
        label="Or: the conversations of a chat campaign",
        queryset=Campaign.objects.filter(task_kind="chat"),
        to_field_name="slug",
        required=False,
        help_text="Instead of a file: the conversations workers held in this chat campaign.",
    )
    include_incomplete = forms.BooleanField(
        label="Include incomplete chats",
        required=False,
        help_text="Also the chats a bot failed in or that were never ended (left out by default).",
    )
    chat_systems = forms.ModelMultipleChoiceField(
        label="Systems to chat with",
        queryset=System.objects.none(),
        to_field_name="slug",
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Chat campaigns: systems with a bot endpoint you may use; each conversation "
        "is with one of them, balanced.",
    )
    # Its range and help come from CampaignSettings, like the other settings'.
    gold_per_batch = forms.IntegerField(label="Gold items per batch", initial=1)

    class Meta:
        model = Campaign
        fields = [
            "task_kind",
            "title",
            "slug",
            "instructions",
            "redundancy",
            "batch_size",
            "reward_per_batch",
            "budget",
            "max_batches_per_worker",
            "time_limit_minutes",
            "provider",
            "completion_redirect_url",
            "allow_worker_param",
            "language",
            "follow_browser",
            "requires_training",
            "training_threshold",
        ]
        labels = {
            "task_kind": "Task kind",
            "time_limit_minutes": "Time limit (minutes)",
            "allow_worker_param": "Take any ?worker= id",
            "language": "Workers' language",
            "follow_browser": "Follow the browser's language",
        }
        help_texts = {
            "slug": "Lowercase letters, digits and hyphens; the start link is /work/<slug>/.",
            "provider": PROVIDERS_HELP,
        }
        widgets = {
            "instructions": forms.Textarea(attrs={"rows": 5}),
            "provider": ProviderSelect,
        }

    # The template shows each group under its own heading; the item sources come last.
    FIELDSETS = (
        ("Task", ("task_kind", "title", "slug", "instructions", "task_config")),
        (
            "Workers and pay",
            (
                "redundancy",
                "batch_size",
                "reward_per_batch",
                "budget",
                "max_batches_per_worker",
                "time_limit_minutes",
                "provider",
                "completion_redirect_url",
                "allow_worker_param",
            ),
        ),
        ("Workers' language", ("language", "follow_browser")),
        ("Training and screening", ("requires_training", "training_threshold")),
    )
    RESPONSE_FIELDS = ("prompt_set", "system", "baselines")
    CONVERSATION_FIELDS = (
        "conversations",
        "chat_campaign",
        "include_incomplete",
        "gold_items",
        "gold_per_batch",
    )
    CHAT_FIELDS = ("chat_systems",)

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["chat_systems"].queryset = chat_systems(user).order_by("slug")
        if user is not None:
            # Only what the user may see (staff, who create campaigns, see everything):
            # another owner's private system or chat campaign is no choice, like an absent one.
            self.fields["system"].queryset = System.objects.visible_to(user)
            self.fields["baselines"].queryset = System.objects.visible_to(user)
            self.fields["chat_campaign"].queryset = managed_by(
                Campaign.objects.filter(task_kind="chat"), user
            )
        self.fields["task_kind"].choices = available_kinds()
        declare_fields(self.fields, CampaignSettings)
        # Left out (a script, an older client): English, the model's default.
        self.fields["language"].required = False
        self.source = None

    def fieldsets(self) -> list[tuple[str, list]]:
        return [(legend, [self[name] for name in names]) for legend, names in self.FIELDSETS]

    def response_fields(self) -> list:
        return [self[name] for name in self.RESPONSE_FIELDS]

    def conversation_fields(self) -> list:
        return [self[name] for name in self.CONVERSATION_FIELDS]

    def chat_fields(self) -> list:
        return [self[name] for name in self.CHAT_FIELDS]

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if slug in RESERVED_SLUGS:
            raise forms.ValidationError(f"'{slug}' is reserved; choose another slug.")
        return slug

    def clean_language(self):
        return self.cleaned_data["language"] or Campaign._meta.get_field("language").default

    def clean_provider(self):
        provider = self.cleaned_data["provider"]
        if provider not in PROVIDERS:
            raise forms.ValidationError("This provider is not installed; use the shareable link.")
        return provider

    def clean_task_config(self):
        text = self.cleaned_data["task_config"].strip() or "{}"
        try:
            config = json.loads(text)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(
                f"Not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})."
            ) from None
        if not isinstance(config, dict):
            raise forms.ValidationError('The task config must be a JSON object {"key": value}.')
        return config

    def clean(self):
        cleaned = super().clean()
        for name, message in settings_errors(cleaned).items():
            self.add_error(name if name in self.fields else None, message)
        key = cleaned.get("task_kind")
        if not key:
            return cleaned
        kind = get_kind(key)
        if "task_config" in cleaned:
            try:
                cleaned["task_config"] = kind.clean_config(cleaned["task_config"])
            except ConfigInvalid as invalid:
                self.add_error("task_config", str(invalid))
        if builds_from_systems(kind):
            systems = list(cleaned.get("chat_systems") or [])
            if not systems and "chat_systems" not in self.errors:
                self.add_error("chat_systems", "Choose at least one system to chat with.")
            self.source = None if self.errors else ChatSystems(systems)
        elif builds_from_responses(kind):
            self.source = self._response_pairs(cleaned)
        else:
            self.source = self._conversation_files(cleaned)
        return cleaned

    def _response_pairs(self, cleaned) -> ResponsePairs | None:
        for name in self.RESPONSE_FIELDS:
            if not cleaned.get(name) and name not in self.errors:
                self.add_error(name, "Required for this task kind.")
        system, baselines = cleaned.get("system"), cleaned.get("baselines")
        if system and baselines and system in baselines:
            self.add_error("baselines", "The system cannot be its own baseline.")
        if self.errors:
            return None
        return ResponsePairs(cleaned["prompt_set"], system, list(baselines))

    def _conversation_files(self, cleaned) -> ConversationFiles | None:
        upload, gold = cleaned.get("conversations"), cleaned.get("gold_items")
        chats = cleaned.get("chat_campaign")
        if chats and upload:
            self.add_error("chat_campaign", "Choose a file or a chat campaign, not both.")
            return None
        if chats:
            if gold:
                self.add_error("gold_items", "Gold items come with a conversations file.")
            include = cleaned.get("include_incomplete", False)
            return None if self.errors else ChatConversations(chats, include)
        if not upload:
            if "conversations" not in self.errors:
                self.add_error("conversations", "Required for this task kind.")
            return None
        data = self._read(upload, "conversations")
        gold_data = self._read(gold, "gold_items") if gold else None
        if self.errors:
            return None
        return ConversationFiles(data, upload.name, gold_data, gold.name if gold else "")

    def _read(self, upload, field: str) -> bytes | None:
        try:
            return read_upload(upload)
        except InvalidUpload as invalid:
            for message in invalid.messages():
                self.add_error(field, message)
            return None


def kind_summaries() -> list[dict]:
    """Label, item source, default config (as JSON) and the declared config keys (name,
    description, default, range) of every available kind."""
    summaries = []
    for key, label in available_kinds():
        kind = get_kind(key)
        summaries.append(
            {
                "key": key,
                "label": label,
                "from_responses": builds_from_responses(kind),
                "from_systems": builds_from_systems(kind),
                "config": json.dumps(kind.default_config(), indent=2),
                "keys": describe(kind.config_schema),
            }
        )
    return summaries


class CrowdSettingsForm(RefusesNul, forms.ModelForm):
    """What a campaign's owner may change until it launches: where its workers come from
    (a campaign a tournament generated starts on its link), the pay and the limits a launch
    is checked against (the items, and so the places, are fixed at creation)."""

    SITES = {"sandbox": True, "production": False}
    # Left out of a post (an older page, the API's shape), the platform and site stay as
    # they are.
    provider = forms.ChoiceField(
        label="Where workers come from",
        choices=Campaign.Provider.choices,
        required=False,
        widget=ProviderSelect,
        help_text="A paid platform (Prolific, MTurk's production site) launches once staff "
        "approve a launch request.",
    )
    mturk_site = forms.ChoiceField(
        label="MTurk site",
        choices=[("sandbox", "Sandbox: no money moves"), ("production", "Production: pays")],
        required=False,
        help_text="Only for Amazon Mechanical Turk.",
    )
    completion_redirect_url = CampaignForm.base_fields["completion_redirect_url"]

    class Meta:
        model = Campaign
        fields = [
            "provider",
            "reward_per_batch",
            "budget",
            "max_batches_per_worker",
            "time_limit_minutes",
            "completion_redirect_url",
        ]
        labels = {"time_limit_minutes": "Time limit (minutes)"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        declare_fields(self.fields, CampaignSettings)
        self.fields["mturk_site"].initial = (
            "sandbox" if self.instance.platform_sandbox else "production"
        )

    def clean_provider(self):
        provider = self.cleaned_data["provider"] or self.instance.provider
        if provider not in PROVIDERS:
            raise forms.ValidationError("This provider is not installed; use the shareable link.")
        return provider

    def clean(self):
        cleaned = super().clean()
        for name, message in settings_errors(cleaned).items():
            if name in self.fields:
                self.add_error(name, message)
        site = cleaned.get("mturk_site")
        sandbox = self.SITES[site] if site else self.instance.platform_sandbox
        moved = (cleaned.get("provider"), sandbox) != (
            self.instance.provider,
            self.instance.platform_sandbox,
        )
        if moved and self.instance.platform_ref:
            # Already posted on its platform (a launch that stopped half-way): moving it
            # would orphan the study or HITs there.
            self.add_error(
                "provider", f"It is already posted on {self.instance.get_provider_display()}."
            )
        self.instance.platform_sandbox = sandbox
        return cleaned


# Pairing (issue 27): the allocation and stopping settings, and the budget planner's inputs --


class PairingSettingsForm(RefusesNul, forms.ModelForm):
    class Meta:
        model = Campaign
        fields = ["allocation", "separation_level", "pause_when_answered"]


class PlanForm(RefusesNul, forms.Form):
    """The planner's inputs on a campaign's or an arena's page (a GET form)."""

    pilot = forms.BooleanField(
        required=False, label="From the judgments so far (a pilot) instead of a spread"
    )
    systems = forms.IntegerField(required=False, min_value=2, max_value=30, initial=10)
    spread_elo = forms.FloatField(
        required=False,
        min_value=1,
        max_value=2000,
        initial=200,
        label="Spread of strengths (Elo points, best minus worst)",
    )
    tie_rate = forms.FloatField(
        required=False,
        min_value=0,
        max_value=0.95,
        label="Share of ties (empty: the pilot's, or 0)",
    )
    level = forms.FloatField(min_value=0.5, max_value=0.999, initial=0.95)
    studies = forms.IntegerField(min_value=10, max_value=400, initial=100)

    def inputs(self):
        from .planning import PlanInputs

        return PlanInputs.from_cleaned(self.cleaned_data)


def plan_section(request, plan_for):
    """(form, plan, problem) of a page's planner section: the plan is computed when the
    page is asked for with the form's inputs (`?plan=1&...`)."""
    from .planning import PlanRefused

    if "plan" not in request.GET:
        return PlanForm(), None, ""
    form = PlanForm(request.GET)
    if not form.is_valid():
        return form, None, ""
    try:
        return form, plan_for(form.inputs()), ""
    except PlanRefused as refused:
        return form, None, str(refused)
