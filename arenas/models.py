"""Arenas: anonymous side-by-side battles between live models, voted by people.

An `Arena` belongs to its owner, who enters systems (`ArenaSystem`, each with the bot
endpoint it is called through and a sampling weight). A voter writes a prompt; two entered
systems, drawn by the arena's pairing rule, answer it side by side as "Model A" and
"Model B" (`Battle`); every user turn (`BattleTurn`) goes to both sides, each side's answer
to it is a `BattleAnswer` (streamed, timed, counted); then the voter votes. Battles may
also be imported in Chatbot Arena's clean-battle format (`source="imported"`).

What a battle keeps is what the leaderboard and its later controls need: both
conversations with per-turn timestamps, time to the first token and tokens per second per
side, token counts, the style features per side (arenas/style.py), the prompt's language,
the voter and their platform identity, the vote and its time, flags, and the pairing rule's
state when the pair was drawn.
"""

import secrets
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from endpoints.models import BotEndpoint
from evalhub import permissions
from evalhub.declared import declared_field, range_constraint, range_validators
from evalhub.models import System
from evalhub.slugs import validate_slug

from .arena_settings import (
    MAX_BLOCKED_PHRASE_CHARS,
    MAX_BLOCKED_PHRASES,
    MAX_CATEGORY_PATTERN_CHARS,
    MAX_PROMPT_CHARS,
    MAX_SYSTEM_PROMPT_CHARS,
    ArenaSettings,
    CategorySettings,
    EntrySettings,
)
from .categories import is_builtin, pattern_problem


def new_invitation_token() -> str:
    return secrets.token_urlsafe(24)


def validate_block_list(value):
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise ValidationError("The block list is a list of non-empty phrases.")
    if len(value) > MAX_BLOCKED_PHRASES:
        raise ValidationError(f"At most {MAX_BLOCKED_PHRASES} blocked phrases.")
    if any(len(p) > MAX_BLOCKED_PHRASE_CHARS for p in value):
        raise ValidationError(
            f"A blocked phrase has at most {MAX_BLOCKED_PHRASE_CHARS} characters."
        )


class ArenaQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Public arenas, the user's own, and every one for staff."""
        return permissions.visible_to(self, user, public=Q(visibility=Arena.Visibility.PUBLIC))

    def managed_by(self, user):
        return permissions.managed_by(self, user)


class Arena(models.Model):
    """Who sees it (`visibility`: its page and leaderboard), who may vote in it (`voters`),
    and how a battle goes (turns, system prompt, the block list, the pairing rule)."""

    class Visibility(models.TextChoices):
        PUBLIC = "public", "Public: anybody sees the arena and its leaderboard"
        PRIVATE = "private", "Private: only its owner and staff"

    class Voters(models.TextChoices):
        SIGNED_IN = "signed_in", "Anybody signed in who can see the arena"
        LINK = "link", "Anybody with the invitation link, signed in or not"

    class Pairing(models.TextChoices):
        UNIFORM = "uniform", "Uniform over pairs, weighted by the systems' weights"
        ADAPTIVE = (
            "adaptive",
            (
                "Adaptive: mostly the pairs whose next vote narrows the ranking most "
                "(with uniform exploration and the systems' weights)"
            ),
        )

    slug = models.SlugField(max_length=80, unique=True, validators=[validate_slug])
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, max_length=10_000)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="arenas",
    )
    visibility = models.CharField(
        max_length=10, choices=Visibility.choices, default=Visibility.PRIVATE
    )
    voters = models.CharField(max_length=12, choices=Voters.choices, default=Voters.SIGNED_IN)
    invitation_token = models.CharField(max_length=64, default=new_invitation_token, editable=False)
    max_turns = declared_field(
        models.PositiveSmallIntegerField, ArenaSettings, "max_turns", "turns allowed"
    )
    system_prompt = models.TextField(
        blank=True,
        max_length=MAX_SYSTEM_PROMPT_CHARS,
        help_text="Sent first, as the system message, to every OpenAI-compatible model of "
        "the arena (instead of the endpoint's own).",
    )
    block_list = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_block_list],
        help_text="Phrases a prompt may not contain (case is ignored); such a prompt is "
        "refused before any model sees it.",
    )
    exclude_flagged = models.BooleanField(
        "leave flagged battles out of the leaderboard",
        default=True,
        help_text="A flagged battle (e.g. a model named itself) is kept but not counted.",
    )
    # Moderation: per-voter caps and what flags a battle (arenas/voter_limits.py,
    # arenas/fast_votes.py; the flags themselves: arenas/flags.py).
    battles_per_day = declared_field(
        models.PositiveIntegerField,
        ArenaSettings,
        "battles_per_day",
        "battles a voter may start a day",
    )
    repeat_window_hours = declared_field(
        models.PositiveSmallIntegerField,
        ArenaSettings,
        "repeat_window_hours",
        "repeated prompts: window (hours)",
    )
    max_prompt_repeats = declared_field(
        models.PositiveSmallIntegerField,
        ArenaSettings,
        "max_prompt_repeats",
        "repeats of a prompt allowed",
    )
    fast_vote_fraction = declared_field(
        models.FloatField,
        ArenaSettings,
        "fast_vote_fraction",
        "fast votes: share of the reading time",
    )
    pairing_rule = models.CharField(max_length=20, choices=Pairing.choices, default=Pairing.UNIFORM)
    provisional_battles = declared_field(
        models.PositiveIntegerField,
        ArenaSettings,
        "provisional_battles",
        "battles before a system is ranked",
    )
    provisional_width = declared_field(
        models.FloatField, ArenaSettings, "provisional_width", "widest interval of a ranked system"
    )
    # Pairing (issue 27): the stopping rule (arenas/pairing_state.py) ---------------------
    separation_level = declared_field(
        models.FloatField, ArenaSettings, "separation_level", "separation level"
    )
    pause_when_answered = models.BooleanField(
        "pause when the ranking is answered",
        default=False,
        help_text="Stop holding new battles once every adjacent pair is separated.",
    )
    paused = models.BooleanField(
        default=False,
        help_text="No new battles start (set by the owner, or by the stopping rule).",
    )
    # ---------------------------------------------------------------------------------------
    # Set when a vote asks for the leaderboard and the debounced task is queued; cleared
    # by the task when it starts, so that votes arriving during a computation queue again.
    leaderboard_queued_at = models.DateTimeField(null=True, blank=True, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = ArenaQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            range_constraint(ArenaSettings, name, prefix="arena")
            for name in (
                "max_turns",
                "battles_per_day",
                "repeat_window_hours",
                "max_prompt_repeats",
                "fast_vote_fraction",
                "provisional_battles",
                "provisional_width",
                "separation_level",
            )
        ]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("arenas:detail", args=[self.slug])

    def is_public(self) -> bool:
        return self.visibility == self.Visibility.PUBLIC

    def is_visible_to(self, user) -> bool:
        return permissions.may_see(user, self)

    def is_managed_by(self, user) -> bool:
        return permissions.is_managed_by(user, self)

    def blocked_phrase(self, prompt: str) -> str | None:
        """The first phrase of the block list the prompt contains (case ignored), or None."""
        folded = prompt.casefold()
        for phrase in self.block_list:
            if phrase.strip().casefold() in folded:
                return phrase
        return None

    def invitation_url(self) -> str:
        return reverse("arenas:join", args=[self.slug, self.invitation_token])


def entry_problem(arena: Arena, system: System, endpoint: BotEndpoint | None) -> str | None:
    """Why `system` may not be entered in `arena` (None when it may).

    An owner enters their own systems; somebody else's only when it is public and its owner
    lets other owners' arenas and tournaments call its endpoint (the consent that lets the
    arena spend that endpoint's budget). A system with no endpoint can only be named by
    imported battles, never drawn for a live one.
    """
    own = system.owner_id is not None and system.owner_id == arena.owner_id
    if own:
        return None
    if not system.is_public():
        return f"{system.slug} is private and not yours."
    if endpoint is not None and not endpoint.allow_other_owners:
        return f"The owner of {system.slug} does not let other owners' arenas call its endpoint."
    return None


class ArenaSystem(models.Model):
    """A system entered in an arena: drawn for live battles through `endpoint` with
    probability proportional to `weight`; without an endpoint (named by imported battles
    only) it is never drawn."""

    arena = models.ForeignKey(Arena, on_delete=models.CASCADE, related_name="entries")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="arena_entries")
    endpoint = models.ForeignKey(
        BotEndpoint,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="arena_entries",
    )
    weight = models.FloatField(
        default=EntrySettings.model_fields["weight"].default,
        validators=range_validators(EntrySettings, "weight"),
        help_text=EntrySettings.model_fields["weight"].description,
    )
    added = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["arena", "system__name"]
        constraints = [
            models.UniqueConstraint(fields=["arena", "system"], name="arena_system_once"),
            range_constraint(EntrySettings, "weight", prefix="arena_system"),
        ]

    def __str__(self):
        return f"{self.system.slug} in {self.arena.slug}"

    def clean(self):
        super().clean()
        if self.endpoint_id is not None and self.endpoint.system_id != self.system_id:
            raise ValidationError({"endpoint": "The endpoint must be the system's own."})
        if self.arena_id and self.system_id:
            problem = entry_problem(self.arena, self.system, self.endpoint)
            if problem:
                raise ValidationError({"system": problem})

    @property
    def drawable(self) -> bool:
        return self.endpoint_id is not None and self.weight > 0


class Battle(models.Model):
    """One battle: two systems, the voter's turns and both sides' answers, the vote."""

    class Vote(models.TextChoices):
        A_BETTER = "a_better", "A is better"
        B_BETTER = "b_better", "B is better"
        TIE = "tie", "Tie"
        BOTH_BAD = "both_bad", "Both are bad"

    class Source(models.TextChoices):
        LIVE = "live", "Held in this arena"
        IMPORTED = "imported", "Imported (Chatbot Arena's clean-battle format)"
        # arenacrowd: a gold battle shown to a crowd voter; scored, never counted.
        GOLD = "gold", "A gold check shown to a crowd voter (never on the leaderboard)"

    class Platform(models.TextChoices):
        SITE = "site", "A signed-in user"
        LINK = "link", "A visitor with the invitation link"
        IMPORTED = "imported", "Imported"
        # arenacrowd: a participant a crowd platform sent (voter_ref: their platform id).
        PROLIFIC = "prolific", "A Prolific participant"
        MTURK = "mturk", "An MTurk worker"

    CROWD_PLATFORMS = (Platform.PROLIFIC, Platform.MTURK)

    # Flags: why a battle is left out of the leaderboard when the arena says so (every
    # code, and what raises it: arenas/flags.py).
    FLAG_NAME_IN_ANSWER = "name_in_answer"

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    arena = models.ForeignKey(Arena, on_delete=models.CASCADE, related_name="battles")
    system_a = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+")
    system_b = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+")
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.LIVE)
    # Chatbot Arena's question_id: unique in an arena, so an import is idempotent.
    question_id = models.CharField(max_length=100)
    anonymous = models.BooleanField(
        default=True, help_text="The voter did not know the models' names (Chatbot Arena's anony)."
    )
    started_at = models.DateTimeField(default=timezone.now)
    voter = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="arena_battles",
    )
    voter_platform = models.CharField(max_length=12, choices=Platform.choices)
    # The voter's identity on that platform: "user:<id>", a random id kept in an invited
    # visitor's session, or a crowd platform's participant id; empty when imported.
    # Looked up within an arena only: battle_arena_voter (arena, voter_ref, started_at)
    # serves that; an index of its own (and Django's LIKE twin) only slowed every insert,
    # a million imported battles by a third (bench/README.md, 2026-11-27).
    voter_ref = models.CharField(max_length=200, blank=True)
    language = models.CharField(max_length=40, blank=True)
    turns = models.PositiveSmallIntegerField(default=0)
    vote = models.CharField(max_length=10, choices=Vote.choices, blank=True)  # "": not yet
    voted_at = models.DateTimeField(null=True, blank=True)
    flags = models.JSONField(default=list, blank=True)
    # Moderation (arenas/flags.py): per flag code, what raised it ({code: text}), and the
    # owner's review ({code: {"decision": "confirmed" or "cleared", "by", "at"}}); the
    # normalised first prompt's digest, to find a voter's repeats (arenas/voter_limits.py).
    flag_notes = models.JSONField(default=dict, blank=True)
    flag_reviews = models.JSONField(default=dict, blank=True)
    prompt_digest = models.CharField(max_length=64, blank=True)
    # The pairing rule and its state when the pair was drawn (rule, weights, probability).
    pairing = models.JSONField(default=dict, blank=True)
    # Per side, summed over the turns: tokens of the answers and their style features.
    tokens_a = models.PositiveIntegerField(null=True, blank=True)
    tokens_b = models.PositiveIntegerField(null=True, blank=True)
    style_a = models.JSONField(default=dict, blank=True)
    style_b = models.JSONField(default=dict, blank=True)
    # Fields of an imported line this model has no column for (category tags, judge...),
    # written back on export.
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(fields=["arena", "question_id"], name="battle_question_once"),
            models.CheckConstraint(
                condition=~Q(system_a=models.F("system_b")), name="battle_two_systems"
            ),
            models.CheckConstraint(
                condition=Q(vote="", voted_at__isnull=True)
                | (~Q(vote="") & Q(voted_at__isnull=False)),
                name="battle_vote_has_time",
            ),
        ]
        indexes = [
            models.Index(fields=["arena", "vote"], name="battle_arena_vote"),
            # A voter's battles of the day, and their repeats (arenas/voter_limits.py).
            models.Index(fields=["arena", "voter_ref", "started_at"], name="battle_arena_voter"),
        ]

    def __str__(self):
        return f"{self.arena.slug}: {self.system_a.slug} vs {self.system_b.slug}"

    def get_absolute_url(self):
        return reverse("arenas:battle", args=[self.arena.slug, self.public_id])

    @property
    def is_voted(self) -> bool:
        return bool(self.vote)

    @property
    def is_flagged(self) -> bool:
        return bool(self.flags)

    def system(self, side: str) -> System:
        return self.system_a if side == "a" else self.system_b


class BattleTurn(models.Model):
    """One user turn of a battle, sent to both sides."""

    battle = models.ForeignKey(Battle, on_delete=models.CASCADE, related_name="battle_turns")
    number = models.PositiveSmallIntegerField()  # 1, 2, ...
    prompt = models.TextField(max_length=MAX_PROMPT_CHARS)
    asked_at = models.DateTimeField(null=True, blank=True)
    # Answers the voter had regenerated, oldest first: [{"a", "b", "status_a", "status_b",
    # "at"}]; the answers in `answers` are the ones voted on.
    regenerated = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["battle", "number"]
        constraints = [
            models.UniqueConstraint(fields=["battle", "number"], name="battle_turn_once"),
            models.CheckConstraint(condition=Q(number__gte=1), name="battle_turn_number_range"),
        ]

    def __str__(self):
        return f"turn {self.number} of battle {self.battle_id}"


class BattleAnswer(models.Model):
    """One side's answer to one turn: claimed once (`pending` to `streaming`), then settled
    as `done`, `stopped` (the voter stopped it, or left: the text so far is kept) or
    `failed` (the model gave no usable answer; `error` says so to the voter)."""

    class Side(models.TextChoices):
        A = "a", "Model A"
        B = "b", "Model B"

    class Status(models.TextChoices):
        PENDING = "pending", "Not asked yet"
        STREAMING = "streaming", "Answering"
        DONE = "done", "Done"
        STOPPED = "stopped", "Stopped"
        FAILED = "failed", "Failed"

    SETTLED = (Status.DONE, Status.STOPPED, Status.FAILED)

    turn = models.ForeignKey(BattleTurn, on_delete=models.CASCADE, related_name="answers")
    side = models.CharField(max_length=1, choices=Side.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    text = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    first_token_ms = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    tokens = models.PositiveIntegerField(null=True, blank=True)
    tokens_reported = models.BooleanField(
        default=False, help_text="The server reported the tokens (usage); else EvalHub counted."
    )
    tokens_per_second = models.FloatField(null=True, blank=True)
    stop_requested = models.BooleanField(default=False)
    error = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["turn", "side"]
        constraints = [
            models.UniqueConstraint(fields=["turn", "side"], name="battle_answer_once"),
            models.CheckConstraint(
                condition=Q(tokens_per_second__isnull=True) | Q(tokens_per_second__gte=0),
                name="battle_answer_speed_range",
            ),
        ]

    def __str__(self):
        return f"{self.get_side_display()} on {self.turn}"

    @property
    def settled(self) -> bool:
        return self.status in self.SETTLED


class Leaderboard(models.Model):
    """An arena's latest leaderboard, computed by arenas.tasks.compute_leaderboard (never in
    a request) from its voted battles; `result` is the API's answer."""

    arena = models.OneToOneField(Arena, on_delete=models.CASCADE, related_name="leaderboard")
    result = models.JSONField(default=dict)
    battles = models.PositiveIntegerField(default=0)
    computed_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"leaderboard of {self.arena.slug} ({self.battles} battles)"


def validate_category_pattern(value: str):
    problem = pattern_problem(value, MAX_CATEGORY_PATTERN_CHARS)
    if problem:
        raise ValidationError(problem)


class ArenaCategory(models.Model):
    """An owner-defined leaderboard category: the battles meeting every condition given
    (language, turns, prompt tokens, a pattern in the prompts; arenas/categories.py)."""

    arena = models.ForeignKey(Arena, on_delete=models.CASCADE, related_name="categories")
    name = models.SlugField(
        max_length=40,
        validators=[validate_slug],
        help_text="Lowercase letters, digits and hyphens, as in ?category=<name>.",
    )
    language = models.CharField(
        max_length=40,
        blank=True,
        help_text="Only battles in this language (its English name: english, german...).",
    )
    min_turns = declared_field(models.PositiveSmallIntegerField, CategorySettings, "min_turns")
    max_turns = declared_field(models.PositiveSmallIntegerField, CategorySettings, "max_turns")
    min_user_tokens = declared_field(
        models.PositiveIntegerField, CategorySettings, "min_user_tokens"
    )
    max_user_tokens = declared_field(
        models.PositiveIntegerField, CategorySettings, "max_user_tokens"
    )
    prompt_pattern = models.CharField(
        max_length=MAX_CATEGORY_PATTERN_CHARS,
        blank=True,
        validators=[validate_category_pattern],
        help_text="A regular expression found in the prompts (Python syntax, case "
        "sensitive unless it starts with (?i)); empty: any prompt.",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["arena", "name"]
        verbose_name_plural = "arena categories"
        constraints = [
            models.UniqueConstraint(fields=["arena", "name"], name="arena_category_once"),
            range_constraint(CategorySettings, "min_turns", prefix="arena_category"),
            range_constraint(CategorySettings, "max_turns", prefix="arena_category"),
            range_constraint(CategorySettings, "min_user_tokens", prefix="arena_category"),
            range_constraint(CategorySettings, "max_user_tokens", prefix="arena_category"),
        ]

    def __str__(self):
        return f"{self.name} in {self.arena.slug}"

    def clean(self):
        super().clean()
        if self.name and is_builtin(self.name):
            raise ValidationError({"name": f"{self.name} is a built-in category."})
        if self.min_turns > self.max_turns:
            raise ValidationError({"max_turns": "At least the minimum number of turns."})
        if self.min_user_tokens > self.max_user_tokens:
            raise ValidationError({"max_user_tokens": "At least the minimum number of tokens."})
        self.language = self.language.strip().lower()


class LeaderboardVariant(models.Model):
    """One variant of an arena's leaderboard (style-controlled, a category, or both),
    computed with the overall one by the same task; `key` is "style", "category:<name>" or
    "style,category:<name>" (arenas/leaderboard.py), `result` the API's answer."""

    arena = models.ForeignKey(Arena, on_delete=models.CASCADE, related_name="leaderboard_variants")
    key = models.CharField(max_length=80)
    result = models.JSONField(default=dict)
    battles = models.PositiveIntegerField(default=0)
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["arena", "key"]
        constraints = [
            models.UniqueConstraint(fields=["arena", "key"], name="leaderboard_variant_once")
        ]

    def __str__(self):
        return f"leaderboard {self.key} of {self.arena.slug}"


# Pairing (issue 27) --------------------------------------------------------------------------


class PairingState(models.Model):
    """The arena's Bradley-Terry state for pairing and stopping (evalstats/pairing.py), kept
    up to date vote by vote (arenas/pairing_state.py) and rebuilt from the counted battles
    with each leaderboard, so that a decision never reads the battles."""

    arena = models.OneToOneField(Arena, on_delete=models.CASCADE, related_name="pairing_state")
    # System ids in the state's order; `wins` holds 2 x the effective wins (a tie is one
    # each way, so they stay whole numbers) row by row, as base64 of little-endian int32.
    systems = models.JSONField(default=list)
    wins = models.JSONField(default=str)
    strengths = models.JSONField(default=list)
    votes = models.PositiveIntegerField(default=0)
    # The stopping rule when the state was last updated.
    separated_pairs = models.PositiveIntegerField(default=0)
    adjacent_pairs = models.PositiveIntegerField(default=0)
    answered = models.BooleanField(default=False)
    updated = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"pairing state of {self.arena.slug} ({self.votes} votes)"


# arenacrowd: an arena's paid crowd (gold battles, launches, battles per slot).
from .crowd_models import CrowdBattle, CrowdLaunch, GoldBattle  # noqa: E402, F401
