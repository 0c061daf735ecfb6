"""The research catalog: systems, prompt sets, submissions of responses, conversations."""

import uuid

from django.conf import settings
from django.core.validators import MaxValueValidator, RegexValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from knox.models import AbstractAuthToken

from . import limits, permissions
from .fields import bounded_text
from .slugs import validate_slug


class SystemQuerySet(models.QuerySet):
    @staticmethod
    def public_q(now=None) -> Q:
        """Systems anybody may see: public, and past any embargo."""
        now = now or timezone.now()
        return Q(visibility=System.Visibility.PUBLIC) & (
            Q(embargo_until__isnull=True) | Q(embargo_until__lte=now)
        )

    def public(self, now=None):
        return self.filter(self.public_q(now))

    def visible_to(self, user, now=None):
        return permissions.visible_to(self, user, public=self.public_q(now))

    def managed_by(self, user):
        return permissions.managed_by(self, user)


class System(models.Model):
    """A dialogue system under evaluation."""

    class Visibility(models.TextChoices):
        PUBLIC = "public", "Public"
        PRIVATE = "private", "Private"

    slug = models.SlugField(max_length=80, unique=True, validators=[validate_slug])
    name = models.CharField(max_length=limits.NAME_CHARS)
    description = bounded_text(limits.DESCRIPTION_CHARS, blank=True)
    paper_url = models.URLField("paper URL", blank=True)
    code_url = models.URLField("code URL", blank=True)
    weights_url = models.URLField("weights URL", blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="systems",
    )
    is_baseline = models.BooleanField(
        default=False, help_text="Offered to other researchers as a point of comparison."
    )
    visibility = models.CharField(
        max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC
    )
    embargo_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Until this moment only the owner and staff see the system and its results.",
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = SystemQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("system-detail", args=[self.slug])

    def is_public(self, now=None) -> bool:
        now = now or timezone.now()
        embargoed = self.embargo_until is not None and self.embargo_until > now
        return self.visibility == self.Visibility.PUBLIC and not embargoed

    def is_visible_to(self, user) -> bool:
        return permissions.may_see(user, self)

    def is_managed_by(self, user) -> bool:
        return permissions.is_managed_by(user, self)


class PromptSet(models.Model):
    """An ordered list of prompts that systems answer, e.g. ChatEval's NCM set."""

    slug = models.SlugField(max_length=80, unique=True, validators=[validate_slug])
    name = models.CharField(max_length=limits.NAME_CHARS)
    description = bounded_text(limits.DESCRIPTION_CHARS, blank=True)
    source = models.CharField(max_length=300, blank=True, help_text="Where the prompts come from.")
    version = models.CharField(max_length=40, default="1")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("promptset-detail", args=[self.slug])

    @property
    def has_references(self) -> bool:
        return self.prompts.exclude(references=[]).exists()


class Prompt(models.Model):
    """One dialogue context; `context` is a list of one or more utterances, oldest first."""

    prompt_set = models.ForeignKey(PromptSet, on_delete=models.CASCADE, related_name="prompts")
    position = models.PositiveIntegerField()
    external_id = models.CharField(
        max_length=100,
        help_text="The id submissions use to name this prompt (its line number by default).",
    )
    context = models.JSONField()
    references = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["prompt_set", "position"]
        constraints = [
            models.UniqueConstraint(fields=["prompt_set", "position"], name="prompt_position"),
            models.UniqueConstraint(
                fields=["prompt_set", "external_id"], name="prompt_external_id"
            ),
        ]

    def __str__(self):
        return f"{self.prompt_set.slug}#{self.external_id}"

    @property
    def last_utterance(self) -> str:
        return self.context[-1] if self.context else ""


class Submission(models.Model):
    """A system's responses to one prompt set, as uploaded, with its automatic metrics.

    A file is validated completely before the submission exists, so a stored submission
    starts as `validated`; the metrics task moves it to `scored`, or to `failed` with the
    error kept in `error_report` (and can be run again).
    """

    class Status(models.TextChoices):
        RECEIVED = "received", "Received"
        VALIDATED = "validated", "Validated"
        SCORED = "scored", "Scored"
        FAILED = "failed", "Failed"

    class Format(models.TextChoices):
        TXT = "txt", "Plain text: one response per line, line i answers prompt i"
        JSONL = "jsonl", 'JSON lines: {"prompt": <prompt id>, "response": "..."}'
        CSV = "csv", "CSV with the columns prompt,response"
        HF = "hf", "Hugging Face layout: Parquet (or JSON lines) with the columns id and response"

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="submissions")
    prompt_set = models.ForeignKey(PromptSet, on_delete=models.PROTECT, related_name="submissions")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RECEIVED)
    file = models.FileField(upload_to="submissions/%Y/%m/", blank=True)
    original_filename = models.CharField(max_length=255, blank=True)
    format = models.CharField(max_length=8, choices=Format.choices)
    baselines = models.ManyToManyField(
        System, blank=True, related_name="compared_in", help_text="Systems to compare against."
    )
    metrics = models.JSONField(null=True, blank=True)
    error_report = models.JSONField(default=list, blank=True)
    warnings = models.JSONField(
        default=list,
        blank=True,
        help_text="What was accepted but deserves a look, e.g. empty responses: {line, message}.",
    )
    created = models.DateTimeField(auto_now_add=True)
    scored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"{self.system.slug} on {self.prompt_set.slug} ({self.created:%Y-%m-%d})"

    def get_absolute_url(self):
        return reverse("system-detail", args=[self.system.slug]) + f"?submission={self.public_id}"


class Response(models.Model):
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="responses")
    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="responses")
    text = bounded_text(limits.TEXT_CHARS)

    class Meta:
        ordering = ["prompt__position"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "prompt"], name="one_response_per_prompt")
        ]

    def __str__(self):
        return self.text[:60]


class ConversationQuerySet(models.QuerySet):
    def usable_by(self, user):
        """Conversations `user`'s tournaments may draw on: the staff-curated ones (no owner)
        and `user`'s own uploads. Staff's own tournaments draw on the curated ones and
        theirs, like anyone's: another researcher's seeds never become someone's control."""
        if user is None or not user.is_authenticated:
            return self.filter(owner__isnull=True)
        return self.filter(Q(owner__isnull=True) | Q(owner=user))

    def visible_to(self, user, now=None):
        """Conversations in which every system speaking is one `user` may see (a private or
        embargoed system's conversations are its owner's, and staff's, alone), and that are
        curated or `user`'s own uploads."""
        if permissions.is_staff(user):
            return self.all()
        hidden = System.objects.exclude(pk__in=System.objects.visible_to(user, now).values("pk"))
        return self.usable_by(user).exclude(speakers__system__in=hidden.values("pk"))


class Conversation(models.Model):
    """A whole dialogue between two or more speakers, each a system or a human."""

    class Source(models.TextChoices):
        IMPORTED = "imported", "Imported"
        SELF_PLAY = "self-play", "Self-play"
        ALL_PLAY_ALL = "all-play-all", "All-play-all"
        BIPARTITE_PLAY = "bipartite-play", "Bipartite-play"
        HUMAN_HUMAN = "human-human", "Human-human"
        HUMAN_BOT = "human-bot", "Human-bot"
        # A worker talking with a system's endpoint in a chat campaign (annotation/chat.py);
        # metadata["incomplete"] is true until the conversation ended complete.
        CHAT = "chat", "Live chat (chat campaign)"

    external_id = models.CharField(
        max_length=200,
        unique=True,
        validators=[RegexValidator(r"^\S+$", "No whitespace in conversation ids.")],
    )
    domain = models.CharField(max_length=100, blank=True, db_index=True)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.IMPORTED)
    metadata = models.JSONField(default=dict, blank=True)
    seed_turns = models.JSONField(
        default=list,
        blank=True,
        help_text='The opening given to both speakers before they spoke, [{"speaker", '
        '"text"}, ...] (a collected conversation\'s seed exchange, from a human-human '
        "conversation): no speaker's turn, attributed to no system, not counted in its "
        "exchanges.",
    )
    # The user's own rating of the conversation (Alexa Prize style), on the scale the file
    # declared: all three set, or none.
    user_rating = models.FloatField(null=True, blank=True)
    user_rating_min = models.FloatField(null=True, blank=True)
    user_rating_max = models.FloatField(null=True, blank=True)
    text_available = models.BooleanField(
        default=True,
        help_text="False for a dialogue a published study judged without releasing its text: "
        "it has its speakers and no turns.",
    )
    # Seed conversations a researcher uploaded are theirs: only their tournaments seed
    # dialogues and draw human-human controls from them. Empty: staff-curated (staff
    # imports, the demo, collected conversations), open to every tournament.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="conversations",
        help_text="The researcher who uploaded it; empty for staff-curated conversations.",
    )
    created = models.DateTimeField(auto_now_add=True)

    objects = ConversationQuerySet.as_manager()

    class Meta:
        ordering = ["external_id"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(user_rating__isnull=True, user_rating_min__isnull=True)
                    & Q(user_rating_max__isnull=True)
                )
                | Q(
                    user_rating_min__lt=models.F("user_rating_max"),
                    user_rating__gte=models.F("user_rating_min"),
                    user_rating__lte=models.F("user_rating_max"),
                ),
                name="user_rating_on_its_scale",
            )
        ]

    def __str__(self):
        return self.external_id


class Speaker(models.Model):
    """Who speaks at a position of a conversation: a system, or a human when `system` is null."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="speakers"
    )
    index = models.PositiveSmallIntegerField()
    system = models.ForeignKey(
        System, null=True, blank=True, on_delete=models.PROTECT, related_name="speaking_in"
    )

    class Meta:
        ordering = ["conversation", "index"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "index"], name="speaker_index")
        ]

    def __str__(self):
        return self.system.slug if self.system_id else "human"

    @property
    def is_human(self) -> bool:
        return self.system_id is None


# An hour: no live reply is awaited longer (the chat client gives up within a minute).
MAX_LATENCY_MS = 3_600_000


class Turn(models.Model):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    position = models.PositiveIntegerField()
    speaker = models.PositiveSmallIntegerField(help_text="Index into the conversation's speakers.")
    text = bounded_text(limits.TEXT_CHARS)
    timestamp = models.DateTimeField(null=True, blank=True, help_text="When it was said.")
    topic = models.CharField(max_length=60, blank=True, help_text="The turn's topic label.")
    latency_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MaxValueValidator(MAX_LATENCY_MS)],
        help_text="A live bot's turn: milliseconds from the request to its reply (0 to 3,600,000).",
    )
    flagged_offensive = models.BooleanField(
        default=False, help_text="The person talking with the bot flagged this turn as offensive."
    )

    class Meta:
        ordering = ["conversation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "position"], name="turn_position"),
            models.CheckConstraint(
                condition=Q(latency_ms__isnull=True) | Q(latency_ms__lte=MAX_LATENCY_MS),
                name="turn_latency_range",
            ),
        ]

    def __str__(self):
        return f"{self.conversation_id}:{self.position}"


class NoticeKind(models.TextChoices):
    """What a user may be told about (evalhub.notifications.notify)."""

    SUBMISSION_SCORED = "submission_scored", "A submission of mine was scored"
    SUBMISSION_FAILED = "submission_failed", "A submission of mine failed"
    CAMPAIGN_COMPLETE = "campaign_complete", "A campaign of mine is complete"
    TOURNAMENT_RESULTS = "tournament_results", "A tournament's results are ready"
    LAUNCH_REQUESTED = "launch_requested", "A campaign launch was requested (staff)"
    LAUNCH_DECIDED = "launch_decided", "My launch request was approved or declined"
    BUDGET_REACHED = "budget_reached", "A campaign reached its budget and stopped handing out work"
    ANALYSIS_FAILED = "analysis_failed", "An analysis of mine failed"
    ENDPOINT_FAILING = "endpoint_failing", "A bot endpoint of mine keeps failing"
    TRAINING_MISSING = "training_missing", "A campaign requires training it does not have (staff)"


class Notice(models.Model):
    """One thing a user was told, shown on their notices page until they read it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notices"
    )
    kind = models.CharField(max_length=30, choices=NoticeKind.choices)
    text = models.CharField(max_length=500)
    url = models.CharField(max_length=500, blank=True, help_text="A path on this site.")
    once_key = models.CharField(
        max_length=200, blank=True, help_text="Set: the same event notifies the user once."
    )
    created = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-pk"]
        indexes = [models.Index(fields=["user", "read_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "once_key"],
                condition=~Q(once_key=""),
                name="notice_once_per_user",
            )
        ]

    def __str__(self):
        return f"{self.user} · {self.kind}: {self.text[:40]}"


class NoticePreference(models.Model):
    """A user's choice for one kind of notice; without a row, both channels are on."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notice_preferences"
    )
    kind = models.CharField(max_length=30, choices=NoticeKind.choices)
    on_site = models.BooleanField(default=True)
    by_email = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="notice_preference_per_kind")
        ]

    def __str__(self):
        return f"{self.user} · {self.kind}"


class Lease(models.Model):
    """Who does one piece of background work now (evalhub/leases.py): held while
    ``expires_at`` is ahead, renewed by its owner's heartbeat, free for anyone once it lapses.
    A released lease is deleted, so a row whose time has passed is work whose owner died."""

    key = models.CharField(max_length=200, unique=True)
    owner = models.CharField(max_length=200)
    acquired_at = models.DateTimeField()
    heartbeat_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)
    # How many owners took it; more than one means a takeover (a worker died).
    attempts = models.PositiveIntegerField(default=1)

    def __str__(self):
        return f"{self.key} · {self.owner} until {self.expires_at:%H:%M:%S}"


class ApiToken(AbstractAuthToken):
    """An API token under a name its owner chose: django-rest-knox's token (only its SHA-512
    digest is stored, it has an expiry, deleting it revokes it), and when it was last used
    (evalhub/api/authentication.py). Made and revoked through evalhub/api_tokens.py; the
    token itself is shown once, when it is made. `token_key` is its first characters,
    which name it on the pages."""

    NAME_CHARS = 100

    name = models.CharField(max_length=NAME_CHARS)
    last_used = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(fields=["user", "name"], name="api_token_name_per_user")
        ]

    def __str__(self):
        return f"{self.user} · {self.name}"
