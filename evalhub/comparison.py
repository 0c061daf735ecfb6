"""Side-by-side responses of several systems to the prompts of one set."""

from dataclasses import dataclass

from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast

from .models import Prompt, PromptSet, Response, Submission, System


@dataclass
class Comparison:
    prompt_set: PromptSet
    systems: list[System]
    submissions: list[Submission | None]  # the latest submission of each system, if any
    prompts: QuerySet

    @property
    def missing(self) -> list[System]:
        return [s for s, sub in zip(self.systems, self.submissions, strict=True) if sub is None]

    def rows_for(self, prompts) -> list[tuple[Prompt, list[str | None]]]:
        """(prompt, response of each system or None) for one page of prompts, in one query."""
        prompts = list(prompts)
        submission_ids = [s.pk for s in self.submissions if s is not None]
        texts = {
            (submission_id, prompt_id): text
            for submission_id, prompt_id, text in Response.objects.filter(
                submission_id__in=submission_ids, prompt__in=prompts
            ).values_list("submission_id", "prompt_id", "text")
        }
        return [
            (
                prompt,
                [
                    texts.get((submission.pk, prompt.pk)) if submission else None
                    for submission in self.submissions
                ],
            )
            for prompt in prompts
        ]


def latest_submission(system: System, prompt_set: PromptSet) -> Submission | None:
    return (
        Submission.objects.filter(system=system, prompt_set=prompt_set)
        .exclude(status=Submission.Status.FAILED)
        .order_by("-created")
        .first()
    )


def compare_responses(prompt_set: PromptSet, systems: list[System], text: str = "") -> Comparison:
    submissions = [latest_submission(system, prompt_set) for system in systems]
    prompts = prompt_set.prompts.order_by("position")
    text = text.strip()
    if text:
        # The context is JSON; its text form is searched so that any utterance matches.
        submission_ids = [s.pk for s in submissions if s is not None]
        prompts = (
            prompts.annotate(context_text=Cast("context", TextField()))
            .filter(
                Q(context_text__icontains=text)
                | Q(responses__submission_id__in=submission_ids, responses__text__icontains=text)
            )
            .distinct()
        )
    return Comparison(prompt_set, systems, submissions, prompts)
