"""Public pages of the catalog: home, prompt sets, systems."""

from django.core.paginator import Paginator
from django.db.models import Count
from django.shortcuts import get_object_or_404, render

from annotation.models import Campaign

from ..models import PromptSet, System


def home(request):
    systems = System.objects.public().select_related("owner").order_by("-created")[:8]
    prompt_sets = PromptSet.objects.annotate(n_prompts=Count("prompts", distinct=True))
    # Campaigns open to anyone with the link (crowd-platform campaigns are reached there).
    campaigns = Campaign.objects.filter(
        status=Campaign.Status.LIVE, provider=Campaign.Provider.LOCAL
    ).order_by("title")
    return render(
        request,
        "evalhub/home.html",
        {"systems": systems, "prompt_sets": prompt_sets, "campaigns": campaigns},
    )


def promptset_list(request):
    prompt_sets = PromptSet.objects.annotate(
        n_prompts=Count("prompts", distinct=True), n_submissions=Count("submissions", distinct=True)
    )
    return render(request, "evalhub/promptset_list.html", {"prompt_sets": prompt_sets})


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
        {"prompt_set": prompt_set, "page": page, "systems": systems},
    )


def system_list(request):
    systems = (
        System.objects.visible_to(request.user)
        .select_related("owner")
        .annotate(n_submissions=Count("submissions"))
    )
    return render(request, "evalhub/system_list.html", {"systems": systems})
