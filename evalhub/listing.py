"""Lists that scale: one way for every list page to search, sort and paginate.

`list_page(request, queryset, search=..., sorts=..., default=...)` reads `?q=` (every word
must match one of the `search` fields, case-insensitively), `?sort=` (a key of `sorts`,
"-" first for descending; an unknown key falls back to `default`) and `?page=`, and gives
the template `page`, `q`, `sort`, `sort_options` and `query` (the other parameters, for
the pagination links of evalhub/_pagination.html). The template shows the controls with
``{% include "evalhub/_list_controls.html" %}``: a plain GET form, no script needed.
"""

from dataclasses import dataclass
from functools import reduce
from operator import or_

from django.core.paginator import Paginator
from django.db.models import Q, QuerySet
from django.utils.http import urlencode

PER_PAGE = 50
MAX_QUERY = 200


@dataclass(frozen=True)
class Sort:
    label: str
    fields: tuple[str, ...]  # model fields or annotations, ascending


def searched(queryset: QuerySet, q: str, fields: list[str]) -> QuerySet:
    for word in q.split()[:10]:
        queryset = queryset.filter(reduce(or_, (Q(**{f"{f}__icontains": word}) for f in fields)))
    return queryset


def list_page(
    request,
    queryset: QuerySet,
    *,
    search: list[str],
    sorts: dict[str, Sort],
    default: str,
    per_page: int = PER_PAGE,
) -> dict:
    q = request.GET.get("q", "").strip()[:MAX_QUERY]
    sort = request.GET.get("sort", default)
    if sort.removeprefix("-") not in sorts:
        sort = default
    key = sorts[sort.removeprefix("-")]
    prefix = "-" if sort.startswith("-") else ""
    # pk last: pages never repeat or skip a row among equal values.
    order = [prefix + f for f in key.fields] + [f"{prefix}pk"]
    rows = searched(queryset, q, search).order_by(*order) if q else queryset.order_by(*order)
    page = Paginator(rows, per_page).get_page(request.GET.get("page"))
    options = []
    for name, s in sorts.items():
        options += [(name, f"{s.label} ↑"), (f"-{name}", f"{s.label} ↓")]
    kept = {k: v for k, v in (("q", q), ("sort", sort if sort != default else "")) if v}
    return {"page": page, "q": q, "sort": sort, "sort_options": options, "query": urlencode(kept)}
