"""A researcher uploads human-human seed conversations for a domain (tournament seeds)."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from ..errors import show_on_page
from ..importers.problems import InvalidUpload
from ..nul_refusal import RefusesNul
from ..quotas import QuotaExceeded
from ..seed_uploads import allow_seed_upload
from ..services import import_seed_conversations, read_upload


class SeedUploadForm(RefusesNul, forms.Form):
    file = forms.FileField(help_text='Conversations as JSON lines (.jsonl); every speaker "human".')


@login_required
def seed_upload(request):
    form = SeedUploadForm(request.POST or None, request.FILES or None)
    problems, status = None, 200
    if request.method == "POST" and not allow_seed_upload(request.user):
        show_on_page(request, "Too many seed uploads this hour; try again later.")
        status = 429
    elif request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            result = import_seed_conversations(
                data=read_upload(upload), filename=upload.name, user=request.user
            )
        except QuotaExceeded as refused:
            show_on_page(request, refused)
            status = refused.status_code
        except InvalidUpload as invalid:
            problems, status = invalid, 400
        else:
            messages.success(
                request,
                f"Stored {result.created} seed conversation{'s' if result.created != 1 else ''}"
                f" ({result.unchanged} already there).",
            )
            return redirect("seed-upload")
    return render(
        request, "evalhub/seed_upload.html", {"form": form, "problems": problems}, status=status
    )
