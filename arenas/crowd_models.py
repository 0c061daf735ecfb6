"""An arena's paid crowd: its gold battles, its launches on a crowd platform, and which
battle answered which slot of a participant's batch.

A launch (`CrowdLaunch`) owns a campaign of the `arena` kind (annotation/kinds/arena.py):
the campaign carries the whole crowd side (provider, batches, assignments, budget, launch
approval, review, pay, block, quality figures); the arena carries the battles. A
`CrowdBattle` ties one battle to the (assignment, item) slot it was voted for, so that its
vote becomes that item's judgment. Imported by arenas/models.py (Django finds the models
there); the arena's own models are named by string, so this module imports none of them.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Assignment, Campaign, Item
from evalhub.declared import range_constraint, range_validators

from .arena_settings import MAX_PROMPT_CHARS
from .crowd_settings import GOLD_ANSWER_CHARS, CrowdSettings


class GoldBattle(models.Model):
    """An owner's check for crowd voters: a prompt, two fixed answers and which is better.
    Shown as a battle like any other; its vote is scored, never counted on the leaderboard."""

    class Better(models.TextChoices):
        FIRST = "first", "The first answer"
        SECOND = "second", "The second answer"

    arena = models.ForeignKey("arenas.Arena", on_delete=models.CASCADE, related_name="gold_battles")
    prompt = models.TextField(max_length=MAX_PROMPT_CHARS)
    first = models.TextField("first answer", max_length=GOLD_ANSWER_CHARS)
    second = models.TextField("second answer", max_length=GOLD_ANSWER_CHARS)
    better = models.CharField(max_length=6, choices=Better.choices)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["arena", "pk"]

    def __str__(self):
        return f"gold battle {self.pk} of {self.arena.slug}"


class CrowdLaunch(models.Model):
    """One launch of an arena on a crowd platform: `participants` batches of
    `battles_per_participant` battles, run as `campaign`."""

    arena = models.ForeignKey(
        "arenas.Arena", on_delete=models.CASCADE, related_name="crowd_launches"
    )
    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="arena_crowd")
    battles_per_participant = models.PositiveSmallIntegerField(
        validators=range_validators(CrowdSettings, "battles_per_participant"),
        help_text=CrowdSettings.model_fields["battles_per_participant"].description,
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]
        constraints = [
            range_constraint(CrowdSettings, "battles_per_participant", prefix="crowd_launch")
        ]

    def __str__(self):
        return f"{self.arena.slug} on {self.campaign.provider} ({self.campaign.slug})"


class CrowdBattle(models.Model):
    """The battle a crowd voter fought for one slot (an item) of their batch."""

    battle = models.OneToOneField("arenas.Battle", on_delete=models.CASCADE, related_name="crowd")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="+")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    # Gold only: the side ("a" or "b") the item's first answer was shown on.
    first_side = models.CharField(max_length=1, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "item"], name="crowd_battle_once"),
            models.CheckConstraint(
                condition=Q(first_side__in=["", "a", "b"]), name="crowd_battle_first_side"
            ),
        ]

    def __str__(self):
        return f"battle {self.battle_id} for {self.assignment_id}/{self.item_id}"
