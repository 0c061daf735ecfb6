"""The owner's pages: create and edit an arena, enter systems and set their weights.

Only the arena's owner and staff change an arena (`Arena.is_managed_by`); others who can
see it get 403, those who cannot see it 404, anonymous visitors the login page.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from endpoints.budget import used_today
from evalhub.errors import UserInputError, show_on_page
from evalhub.uniqueness import SlugTaken, unique_slug

from .. import entries
from ..forms import ArenaForm, CategoryForm, EntryForm, WeightForm
from ..leaderboard_queue import ask_for
from ..models import Arena, ArenaCategory, ArenaSystem
from .lookup import managed_arena


@login_required
@require_http_methods(["GET", "POST"])
def arena_create(request):
    form = ArenaForm(request.POST or None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            with unique_slug(Arena, form.cleaned_data.get("slug", "")):
                arena = form.save()
        except SlugTaken as taken:
            form.add_error("slug", str(taken))
        else:
            messages.success(request, f"Created {arena.name}. Now enter its systems.")
            return redirect("arenas:systems", slug=arena.slug)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "title": "New arena"}
    return render(request, "arenas/arena_form.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def arena_edit(request, slug):
    arena = managed_arena(request, slug)
    form = ArenaForm(request.POST or None, instance=arena, owner=arena.owner)
    if request.method == "POST" and form.is_valid():
        form.save()
        if {"provisional_battles", "provisional_width", "exclude_flagged"} & set(form.changed_data):
            ask_for(arena)  # what the leaderboard shows changed
        messages.success(request, f"Saved {arena.name}.")
        return redirect(arena)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "arena": arena, "title": f"Edit {arena.name}"}
    return render(request, "arenas/arena_form.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def arena_systems(request, slug):
    arena = managed_arena(request, slug)
    form = EntryForm(request.POST or None, arena=arena)
    if request.method == "POST" and form.is_valid():
        try:
            entry = entries.enter(arena, form.cleaned_data["system"], form.cleaned_data["weight"])
        except UserInputError as refused:
            show_on_page(request, refused, form)
        else:
            messages.success(request, f"Entered {entry.system.name}.")
            return redirect("arenas:systems", slug=arena.slug)
    rows = [
        {
            "entry": entry,
            "used_today": used_today(entry.endpoint_id) if entry.endpoint_id else None,
        }
        for entry in arena.entries.select_related("system", "system__owner", "endpoint")
    ]
    status = 400 if request.method == "POST" else 200
    context = {"arena": arena, "form": form, "rows": rows}
    return render(request, "arenas/systems.html", context, status=status)


def _entry(request, slug, system_slug) -> ArenaSystem:
    arena = managed_arena(request, slug)
    return get_object_or_404(
        ArenaSystem.objects.select_related("system", "arena"),
        arena=arena,
        system__slug=system_slug,
    )


@login_required
@require_POST
def entry_weight(request, slug, system_slug):
    entry = _entry(request, slug, system_slug)
    form = WeightForm(request.POST)
    if form.is_valid():
        entries.set_weight(entry, form.cleaned_data["weight"])
        messages.success(request, f"{entry.system.name} now has weight {entry.weight:g}.")
    else:
        show_on_page(request, "A weight is a number from 0 to 100.", about=entry.system.name)
    return redirect("arenas:systems", slug=entry.arena.slug)


@login_required
@require_POST
def entry_remove(request, slug, system_slug):
    entry = _entry(request, slug, system_slug)
    entries.remove(entry)
    messages.success(request, f"Took {entry.system.name} out of new battles.")
    return redirect("arenas:systems", slug=entry.arena.slug)


@login_required
@require_http_methods(["GET", "POST"])
def arena_categories(request, slug):
    """The owner's leaderboard categories: each a name and rules (arenas/categories.py)."""
    arena = managed_arena(request, slug)
    form = CategoryForm(request.POST or None, arena=arena)
    if request.method == "POST" and form.is_valid():
        category = form.save()
        ask_for(arena)
        messages.success(request, f"Added the category {category.name}: being computed.")
        return redirect("arenas:categories", slug=arena.slug)
    status = 400 if request.method == "POST" else 200
    context = {"arena": arena, "form": form, "categories": arena.categories.all()}
    return render(request, "arenas/categories.html", context, status=status)


@login_required
@require_POST
def category_remove(request, slug, name):
    arena = managed_arena(request, slug)
    category = get_object_or_404(ArenaCategory, arena=arena, name=name)
    category.delete()
    ask_for(arena)
    messages.success(request, f"Removed the category {name}.")
    return redirect("arenas:categories", slug=arena.slug)
