from django.core.paginator import Paginator
from django.shortcuts import render

from ..comparison import compare_responses
from ..forms import CompareForm


def compare(request):
    form = CompareForm(request.GET or None, user=request.user)
    context = {"form": form}
    if form.is_valid():
        comparison = compare_responses(
            form.cleaned_data["prompt_set"],
            list(form.cleaned_data["systems"]),
            form.cleaned_data["q"],
        )
        page = Paginator(comparison.prompts, 20).get_page(request.GET.get("page"))
        context.update(comparison=comparison, page=page, rows=comparison.rows_for(page.object_list))
        context["q"] = form.cleaned_data["q"].strip()  # highlighted where it matched
        query = request.GET.copy()
        query.pop("page", None)
        context["query"] = query.urlencode()
    return render(request, "evalhub/compare.html", context)
