"""Admin pages for bot endpoints (a system's, or a model's of no system such as a judge's:
exactly one of `system` and `owner`), their daily usage and their calls' outcomes.

A bot endpoint's token is write-only: the admin never sends it back to a browser.
"""

from django import forms
from django.contrib import admin

from evalhub.admin_tools import ModelAdmin, RecordAdmin
from evalhub.nul_refusal import RefusesNul

from .forms import BotEndpointForm, url_field
from .models import BotEndpoint, EndpointCall, EndpointUsage


class BotEndpointAdminForm(RefusesNul, forms.ModelForm):
    """The token is write-only here too: never rendered, kept when left blank."""

    url = url_field()

    auth_token = forms.CharField(
        label="Token or API key",
        required=False,
        max_length=BotEndpoint.MAX_TOKEN_CHARS,
        widget=forms.PasswordInput(render_value=False),
        help_text="Leave blank to keep the stored token.",
    )
    clear_token = forms.BooleanField(label="Remove the stored token", required=False)

    class Meta:
        model = BotEndpoint
        fields = ["system", "owner", "name", *BotEndpointForm.Meta.fields]

    def clean(self):
        data = super().clean()
        if data.get("clear_token"):
            self.instance.replace_token("")
        elif data.get("auth_token"):
            self.instance.replace_token(data["auth_token"])
        data["auth_token"] = self.instance.auth_token
        return data


@admin.register(BotEndpoint)
class BotEndpointAdmin(ModelAdmin):
    form = BotEndpointAdminForm
    list_display = [
        "__str__",
        "system",
        "owner",
        "protocol",
        "url",
        "has_token",
        "token_left_out",
        "model_name",
        "daily_budget",
        "chat_share",
        "allow_other_owners",
        "max_concurrency",
    ]
    list_filter = ["protocol", "allow_other_owners"]
    search_fields = ["system__slug", "name", "owner__username", "url", "model_name"]
    list_select_related = ["system", "owner"]
    raw_id_fields = ["system", "owner"]

    @admin.display(boolean=True, description="Token")
    def has_token(self, obj):
        return bool(obj.auth_token)


@admin.register(EndpointUsage)
class EndpointUsageAdmin(RecordAdmin):
    """Requests an endpoint was charged per UTC day. The bot client counts them with one
    conditional update per request; an edit here would hand out budget the owner never
    granted, or refuse requests the budget still allows."""

    list_display = ["endpoint", "day", "requests", "chat_requests"]
    list_filter = ["day"]
    search_fields = ["endpoint__system__slug", "endpoint__name"]
    list_select_related = ["endpoint__system", "endpoint__owner"]
    date_hierarchy = "day"


@admin.register(EndpointCall)
class EndpointCallAdmin(RecordAdmin):
    """Outcomes the client recorded, one per request. They are what an endpoint's owner
    reads to see why calls fail; an edit would tell them something that did not happen.
    The maintenance beat prunes them (endpoints/calls.py)."""

    list_display = ["endpoint", "at", "purpose", "status", "http_status", "latency_ms"]
    list_filter = ["status", "purpose", "streamed"]
    search_fields = ["endpoint__system__slug", "endpoint__name", "error_class"]
    list_select_related = ["endpoint__system", "endpoint__owner"]
    date_hierarchy = "at"
