from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from .importers import hf_layout
from .models import ApiToken, PromptSet, Submission, System
from .nul_refusal import RefusesNul
from .slugs import ProposedSlugForm


class SignupForm(RefusesNul, UserCreationForm):
    email = forms.EmailField(required=True, help_text="For password resets.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")


class ApiTokenForm(RefusesNul, forms.Form):
    name = forms.CharField(
        max_length=ApiToken.NAME_CHARS,
        help_text="What the token is for (a machine, a script), to tell it from your others.",
    )


class SystemForm(RefusesNul, ProposedSlugForm, forms.ModelForm):
    paper_url = forms.URLField(label="Paper URL", required=False, assume_scheme="https")
    code_url = forms.URLField(label="Code URL", required=False, assume_scheme="https")
    weights_url = forms.URLField(label="Weights URL", required=False, assume_scheme="https")

    class Meta:
        model = System
        fields = [
            "name",
            "slug",
            "description",
            "paper_url",
            "code_url",
            "weights_url",
            "visibility",
            "embargo_until",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 4}),
            "embargo_until": forms.DateTimeInput(attrs={"type": "datetime-local"}),
        }


HF_HELP = (
    "Hugging Face layout: a .parquet file, or .jsonl with this filled in. Which of your "
    'columns hold what EvalHub reads, as ours=theirs, e.g. "{example}"; unmapped ones are '
    'looked up under their own names ("id=id" reads a .jsonl in this layout as it is).'
)


def columns_field(example: str) -> forms.CharField:
    """The column mapping of an upload in the Hugging Face layout
    (evalhub/importers/hf_layout.py), which checks it."""
    return forms.CharField(
        label="Column mapping",
        required=False,
        max_length=hf_layout.MAX_MAPPING_CHARS,
        help_text=HF_HELP.format(example=example),
    )


class SubmissionForm(RefusesNul, forms.Form):
    prompt_set = forms.ModelChoiceField(queryset=PromptSet.objects.all(), to_field_name="slug")
    file = forms.FileField(
        help_text="A .txt, .jsonl, .csv or .parquet file; see the formats below."
    )
    format = forms.ChoiceField(
        choices=[("", "From the file name")] + list(Submission.Format.choices), required=False
    )
    columns = columns_field("id=question_id, response=output")
    baselines = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        to_field_name="slug",
        help_text="Systems to compare against in A/B experiments.",
    )

    def __init__(self, *args, user, system, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["baselines"].queryset = (
            System.objects.visible_to(user).filter(is_baseline=True).exclude(pk=system.pk)
        )


class CompareForm(RefusesNul, forms.Form):
    prompt_set = forms.ModelChoiceField(queryset=PromptSet.objects.all(), to_field_name="slug")
    systems = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(),
        to_field_name="slug",
        widget=forms.CheckboxSelectMultiple,
        help_text="Two to five systems.",
    )
    q = forms.CharField(required=False, label="Filter by text")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["systems"].queryset = (
            System.objects.visible_to(user).filter(submissions__isnull=False).distinct()
        )

    def clean_systems(self):
        systems = self.cleaned_data["systems"]
        if not 2 <= len(systems) <= 5:
            raise forms.ValidationError("Choose between two and five systems.")
        return systems
