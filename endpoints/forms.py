"""The forms with which a system's owner registers or edits its bot endpoint
(`BotEndpointForm`), and a user their own model endpoint, one of no system such as a judge's
(`ModelEndpointForm`: OpenAI-compatible, and only what a caller that writes its own
messages uses).

The token (API key) is write-only: the field is never filled in when the form is shown,
leaving it blank keeps the stored one, and "remove the token" clears it."""

from django import forms

from evalhub.nul_refusal import RefusesNul

from .models import BotEndpoint


class StopSequencesField(forms.CharField):
    """Stop sequences, one per line (escapes such as \\n are written as such)."""

    widget = forms.Textarea(attrs={"rows": 2})

    def prepare_value(self, value):
        if isinstance(value, list):
            return "\n".join(s.encode("unicode_escape").decode() for s in value)
        return value

    def to_python(self, value):
        lines = (super().to_python(value) or "").splitlines()
        try:
            return [line.encode().decode("unicode_escape") for line in lines if line.strip()]
        except UnicodeDecodeError as error:
            raise forms.ValidationError(f"Cannot read the stop sequences: {error}.") from None


def url_field() -> forms.URLField:
    model_field = BotEndpoint._meta.get_field("url")
    return forms.URLField(
        label="URL",
        max_length=model_field.max_length,
        assume_scheme="https",
        help_text=model_field.help_text,
    )


TOKEN_LEFT_OUT = (
    "This endpoint's token was left out when its data was imported (exports never carry "
    "secrets): type it again, or say it needs none."
)


class BotEndpointForm(RefusesNul, forms.ModelForm):
    url = url_field()
    auth_token = forms.CharField(
        label="Token or API key",
        required=False,
        max_length=BotEndpoint.MAX_TOKEN_CHARS,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Sent as 'Authorization: Bearer <token>'. Never shown again after saving; "
        "leave blank to keep the current one.",
    )
    clear_token = forms.BooleanField(label="Remove the stored token", required=False)
    stop = StopSequencesField(
        label="Stop sequences",
        required=False,
        help_text=f"OpenAI-compatible: one per line, at most {BotEndpoint.MAX_STOP_SEQUENCES}.",
    )

    class Meta:
        model = BotEndpoint
        fields = [
            "protocol",
            "url",
            "model_name",
            "auth_token",
            "system_prompt",
            "temperature",
            "top_p",
            "max_tokens",
            "stop",
            "timeout_seconds",
            "max_concurrency",
            "daily_budget",
            "chat_share",
            "structured_output",
            "allow_other_owners",
        ]
        widgets = {"system_prompt": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, system=None, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        # Exactly one of them (the model's constraint bot_endpoint_one_owner).
        if system is not None:
            self.instance.system = system
        elif owner is not None and self.instance.pk is None:
            self.instance.owner = owner
        if self.instance.auth_token:
            self.fields[
                "auth_token"
            ].help_text = "A token is stored (hidden). Leave blank to keep it, or type a new one."
        elif self.instance.token_left_out:
            self.fields["auth_token"].help_text = TOKEN_LEFT_OUT
            self.fields["clear_token"].label = "This endpoint needs no token"
        else:
            del self.fields["clear_token"]
        # A form sent without it (a script, an older page) keeps asking for structured output.
        self.fields["structured_output"].required = False

    def clean_structured_output(self):
        return self.cleaned_data["structured_output"] or BotEndpoint.StructuredOutput.AUTO

    def clean(self):
        data = super().clean()
        if data.get("clear_token"):
            self.instance.replace_token("")
        elif data.get("auth_token"):
            self.instance.replace_token(data["auth_token"])
        # The model's own checks (model name for OpenAI) see the kept token too.
        data["auth_token"] = self.instance.auth_token
        return data


class ModelEndpointForm(BotEndpointForm):
    """A model endpoint of no system, such as a judge's: always OpenAI-compatible, and
    without what only a conversation partner uses (its system prompt: the caller writes
    the messages) or only systems serve (chats, other owners' tournaments)."""

    class Meta(BotEndpointForm.Meta):
        fields = [
            "url",
            "model_name",
            "auth_token",
            "temperature",
            "top_p",
            "max_tokens",
            "stop",
            "timeout_seconds",
            "max_concurrency",
            "daily_budget",
            "structured_output",
        ]

    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, owner=owner, **kwargs)
        self.instance.protocol = BotEndpoint.Protocol.OPENAI
        self.fields["model_name"].required = True
        self.fields["model_name"].help_text = "The `model` sent with each request."
        self.fields["url"].help_text = (
            "The base URL of the OpenAI-compatible API, e.g. https://host/v1 "
            "(EvalHub appends /chat/completions)."
        )
        self.fields["daily_budget"].help_text = "Requests per day (UTC) at most, retries included."
