"""Public pages of the catalog: home, prompt sets, systems."""

from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from .. import prompt_files
from ..errors import UserInputError
from ..hf import catalog
from ..hf.bundle import dataset_response, refusal
from ..hf.card import card_options
from ..listing import Sort, list_page
from ..models import PromptSet, System


def home(request):
    systems = System.objects.public().select_related("owner").order_by("-created")[:8]
    prompt_sets = PromptSet.objects.annotate(n_prompts=Count("prompts", distinct=True))
    return render(
        request,
        "evalhub/home.html",
        {"systems": systems, "prompt_sets": prompt_sets},
    )


PROMPT_SET_SORTS = {
    "name": Sort("Name", ("name",)),
    "created": Sort("Added", ("created",)),
    "prompts": Sort("Prompts", ("n_prompts",)),
    "submissions": Sort("Submissions", ("n_submissions",)),
}
SYSTEM_SORTS = {
    "name": Sort("Name", ("name",)),
    "created": Sort("Registered", ("created",)),
    "submissions": Sort("Submissions", ("n_submissions",)),
}


def promptset_list(request):
    prompt_sets = PromptSet.objects.annotate(
        n_prompts=Count("prompts", distinct=True), n_submissions=Count("submissions", distinct=True)
    )
    context = list_page(
        request,
        prompt_sets,
        search=["name", "slug", "description", "source"],
        sorts=PROMPT_SET_SORTS,
        default="name",
    )
    return render(request, "evalhub/promptset_list.html", context)


def promptset_detail(request, slug):
    prompt_set = get_object_or_404(PromptSet, slug=slug)
    page = Paginator(prompt_set.prompts.order_by("position"), 50).get_page(request.GET.get("page"))
    systems = (
        System.objects.visible_to(request.user)
        .filter(submissions__prompt_set=prompt_set)
        .distinct()
        .order_by("name")
    )
    return render(
        request,
        "evalhub/promptset_detail.html",
        {
            "prompt_set": prompt_set,
            "page": page,
            "systems": systems,
            "txt_possible": prompt_files.txt_possible(prompt_set),
        },
    )


def promptset_download(request, slug, fmt):
    """The prompt set as a file in an upload format (evalhub/prompt_files.py), streamed."""
    prompt_set = get_object_or_404(PromptSet, slug=slug)
    if fmt == "txt":
        if not prompt_files.txt_possible(prompt_set):
            raise Http404("These prompts have several utterances, ids or references: use .jsonl.")
        lines, content_type = prompt_files.txt_lines(prompt_set), "text/plain; charset=utf-8"
    else:
        lines, content_type = prompt_files.jsonl_lines(prompt_set), "application/x-ndjson"
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{prompt_set.slug}.{fmt}"'
    return response


@require_GET
def promptset_dataset(request, slug):
    """The prompt set as a Hugging Face dataset (Parquet and its card, zipped)."""
    prompt_set = get_object_or_404(PromptSet, slug=slug)
    try:
        license_id, citation = card_options(request.GET)
        return dataset_response(
            catalog.prompt_tables(prompt_set),
            catalog.prompt_card(prompt_set, license=license_id, citation=citation),
            f"{prompt_set.slug}-prompts",
        )
    except UserInputError as error:
        return refusal(error)


def system_list(request):
    systems = (
        System.objects.visible_to(request.user)
        .select_related("owner")
        .annotate(n_submissions=Count("submissions"))
    )
    # ?owner=<username>, or ?owner=me for one's own systems.
    owner = request.GET.get("owner", "").strip()[:150]
    if owner == "me":
        mine = request.user.is_authenticated
        systems = systems.filter(owner=request.user) if mine else systems.none()
    elif owner:
        systems = systems.filter(owner__username=owner)
    context = list_page(
        request,
        systems,
        search=["name", "slug", "description", "owner__username"],
        sorts=SYSTEM_SORTS,
        default="name",
    )
    if owner:
        context["owner"] = owner
        context["query"] = "&".join(filter(None, [context["query"], urlencode({"owner": owner})]))
    return render(request, "evalhub/system_list.html", context)
