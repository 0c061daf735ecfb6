"""The owner's forms: an arena's settings, and a system entered with its weight."""

from django import forms
from django.db.models import Q

from endpoints.models import BotEndpoint
from evalhub.models import System

from .arena_settings import (
    MAX_BLOCKED_PHRASE_CHARS,
    MAX_BLOCKED_PHRASES,
    MAX_CATEGORIES,
    MAX_PROMPT_CHARS,
)
from .models import Arena, ArenaCategory, ArenaSystem, Battle, entry_problem


class BlockListField(forms.CharField):
    """One phrase a line in the form, a list in the model."""

    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value):
        if isinstance(value, list):
            return "\n".join(value)
        return value

    def to_python(self, value):
        text = super().to_python(value) or ""
        phrases = []
        for line in text.splitlines():
            phrase = line.strip()
            if phrase and phrase.casefold() not in {p.casefold() for p in phrases}:
                phrases.append(phrase)
        return phrases

    def validate(self, value):
        if len(value) > MAX_BLOCKED_PHRASES:
            raise forms.ValidationError(f"At most {MAX_BLOCKED_PHRASES} phrases.")
        for phrase in value:
            if len(phrase) > MAX_BLOCKED_PHRASE_CHARS:
                raise forms.ValidationError(
                    f"A phrase has at most {MAX_BLOCKED_PHRASE_CHARS} characters: {phrase[:40]}..."
                )


class ArenaForm(forms.ModelForm):
    block_list = BlockListField(
        required=False,
        label="Block list",
        help_text="One phrase a line. A prompt containing one (case ignored) is refused "
        "before any model sees it.",
    )

    class Meta:
        model = Arena
        fields = [
            "name",
            "slug",
            "description",
            "visibility",
            "voters",
            "max_turns",
            "system_prompt",
            "block_list",
            "exclude_flagged",
            # Moderation (arenas/voter_limits.py, arenas/fast_votes.py)
            "battles_per_day",
            "repeat_window_hours",
            "max_prompt_repeats",
            "fast_vote_fraction",
            "provisional_battles",
            "provisional_width",
            "pairing_rule",
            "separation_level",
            "pause_when_answered",
            "paused",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "system_prompt": forms.Textarea(attrs={"rows": 3}),
        }

    # Moderation, leaderboard and pairing settings left empty take their defaults (the
    # model's: arena_settings.py declares the numbers).
    OPTIONAL = (
        "battles_per_day",
        "repeat_window_hours",
        "max_prompt_repeats",
        "fast_vote_fraction",
        "provisional_battles",
        "provisional_width",
        "pairing_rule",
        "separation_level",
    )

    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.owner = owner
        if self.instance.pk:
            # The slug names the arena in links already handed out.
            self.fields["slug"].disabled = True
        for name in self.OPTIONAL:
            self.fields[name].required = False

    def clean(self):
        data = super().clean()
        for name in self.OPTIONAL:
            if name in data and data[name] in (None, ""):
                data[name] = Arena._meta.get_field(name).get_default()
        return data

    def save(self, commit=True):
        arena = super().save(commit=False)
        if arena.pk is None:
            arena.owner = self.owner
        if commit:
            arena.save()
        return arena


def enterable_systems(arena: Arena):
    """Systems with an endpoint that `arena` may call, not entered yet: its owner's own, and
    public ones whose owners let other owners call them (entry_problem says it per system)."""
    entered = arena.entries.values("system")
    endpoints = BotEndpoint.objects.filter(
        Q(system__owner_id=arena.owner_id) | Q(allow_other_owners=True)
    )
    systems = System.objects.filter(endpoint__in=endpoints).exclude(pk__in=entered)
    public = System.objects.public().values("pk")
    if arena.owner_id is None:
        return systems.filter(pk__in=public)
    return systems.filter(Q(owner_id=arena.owner_id) | Q(pk__in=public))


class EntryForm(forms.Form):
    system = forms.ModelChoiceField(
        queryset=System.objects.none(),
        to_field_name="slug",
        help_text="Your systems with a bot endpoint, and public ones whose owners allow it.",
    )
    weight = forms.FloatField(
        min_value=0.0,
        max_value=100.0,
        initial=1.0,
        help_text=ArenaSystem._meta.get_field("weight").help_text,
    )

    def __init__(self, *args, arena: Arena, **kwargs):
        super().__init__(*args, **kwargs)
        self.arena = arena
        self.fields["system"].queryset = enterable_systems(arena).order_by("name")

    def clean(self):
        data = super().clean()
        system = data.get("system")
        if system is not None:
            endpoint = BotEndpoint.objects.filter(system=system).first()
            problem = entry_problem(self.arena, system, endpoint)
            if problem:
                self.add_error("system", problem)
            data["endpoint"] = endpoint
        return data


class WeightForm(forms.Form):
    weight = forms.FloatField(min_value=0.0, max_value=100.0)


class PromptForm(forms.Form):
    prompt = forms.CharField(
        max_length=MAX_PROMPT_CHARS,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Your message",
    )


class VoteForm(forms.Form):
    vote = forms.ChoiceField(choices=Battle.Vote.choices)


# Moderation (arenas/flags.py) ----------------------------------------------------------------


class FlagReviewForm(forms.Form):
    decision = forms.ChoiceField(
        choices=[("confirmed", "Confirm"), ("cleared", "Clear")],
        error_messages={"invalid_choice": "Confirm the flag or clear it."},
    )


class CategoryForm(forms.ModelForm):
    """An owner's leaderboard category: a name and the rules a battle must meet."""

    class Meta:
        model = ArenaCategory
        fields = [
            "name",
            "language",
            "min_turns",
            "max_turns",
            "min_user_tokens",
            "max_user_tokens",
            "prompt_pattern",
        ]

    def __init__(self, *args, arena: Arena, **kwargs):
        super().__init__(*args, **kwargs)
        self.arena = arena
        self.instance.arena = arena

    def clean_name(self):
        name = self.cleaned_data["name"]
        taken = ArenaCategory.objects.filter(arena=self.arena, name=name)
        if taken.exclude(pk=self.instance.pk).exists():
            raise forms.ValidationError(f"The arena has a category {name} already.")
        return name

    def clean(self):
        data = super().clean()
        if self.instance.pk is None and self.arena.categories.count() >= MAX_CATEGORIES:
            raise forms.ValidationError(f"An arena has at most {MAX_CATEGORIES} categories.")
        return data
