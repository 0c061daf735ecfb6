"""The forms of the judges' pages (the API checks the same things with the same services)."""

from django import forms

from annotation.models import Campaign
from arenas.models import Arena
from evalhub import limits, permissions
from evalhub.declared import declare_fields
from evalhub.errors import UserInputError
from evalhub.nul_refusal import RefusesNul

from . import rubric_versions
from .models import Judge, JudgeRun, Rubric
from .rubrics import judgeable_kinds, rubric_kinds
from .run_settings import JudgeRunSettings

# Addresses under /judges/ that a judge's slug would hide.
RESERVED_SLUGS = ("new", "rubrics", "runs")


def campaigns_for(user):
    campaigns = Campaign.objects.filter(task_kind__in=judgeable_kinds())
    return permissions.managed_by(campaigns, user).order_by("-created")


def arenas_for(user):
    """The arenas whose battles the user may have judged: those they manage."""
    return Arena.objects.managed_by(user).order_by("name")


def _user_errors(form: forms.Form, error: UserInputError) -> None:
    for problem in error.problems:
        form.add_error(problem.field if problem.field in form.fields else None, problem.message)


class JudgeForm(RefusesNul, forms.ModelForm):
    """The judge's name and address; its endpoint is ModelEndpointForm, on the same page."""

    class Meta:
        model = Judge
        fields = ["slug", "name"]
        help_texts = {"slug": "Lowercase letters, digits and hyphens; the judge's address."}

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if slug in RESERVED_SLUGS:
            raise forms.ValidationError(f"'{slug}' names a page of the judges; choose another.")
        return slug


class RubricForm(RefusesNul, forms.Form):
    task_kind = forms.ChoiceField(label="Task kind")
    name = forms.SlugField(max_length=80, help_text="A new version is made under this name.")
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 18}),
        max_length=limits.INSTRUCTIONS_CHARS,
        help_text="The prompt. $answer_format says how to reply; the other $names show the "
        "item (see the default rubric of the kind).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        labels = dict(Rubric._meta.get_field("task_kind").choices)
        self.fields["task_kind"].choices = [(k, labels[k]) for k in rubric_kinds()]

    def save(self, user) -> Rubric | None:
        try:
            return rubric_versions.create(owner=user, **self.cleaned_data)
        except UserInputError as error:
            _user_errors(self, error)
            return None


class RubricReviseForm(RefusesNul, forms.Form):
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 18}), max_length=limits.INSTRUCTIONS_CHARS
    )

    def save(self, rubric: Rubric, user) -> Rubric | None:
        try:
            return rubric_versions.revise(
                rubric, instructions=self.cleaned_data["instructions"], owner=user
            )
        except UserInputError as error:
            _user_errors(self, error)
            return None


class RunForm(RefusesNul, forms.ModelForm):
    """A run over a campaign or over an arena's voted battles: one of the two."""

    class Meta:
        model = JudgeRun
        fields = ["campaign", "arena", "rubric", "concurrency", "max_attempts"]

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["campaign"].queryset = campaigns_for(user)
        self.fields["arena"].queryset = arenas_for(user)
        self.fields["arena"].help_text = (
            "Or an arena of yours: the judge compares both models' conversations of each voted "
            "battle (with an arena rubric)."
        )
        self.fields["rubric"].queryset = Rubric.objects.filter(task_kind__in=rubric_kinds())
        self.fields[
            "rubric"
        ].help_text = "Its task kind must be the campaign's (arena for an arena)."
        # One of campaign and arena: the model's constraint says so (judge_run_one_target).
        declare_fields(self.fields, JudgeRunSettings)
