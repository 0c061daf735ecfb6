"""Finding an arena for a page: 404 for whoever may not see it, 403 for a visitor who
sees it but may not change it."""

from django.shortcuts import get_object_or_404

from evalhub.permissions import manageable_or_403

from ..models import Arena


def visible_arena_or_404(request, slug) -> Arena:
    return get_object_or_404(
        Arena.objects.visible_to(request.user).select_related("owner"), slug=slug
    )


def managed_arena(request, slug) -> Arena:
    arena = visible_arena_or_404(request, slug)
    return manageable_or_403(
        request.user, arena, "Only the owner of an arena and staff can change it."
    )
