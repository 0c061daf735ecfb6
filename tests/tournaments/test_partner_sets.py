"""A partner set a tournament used never changes: a revision is a new version."""

import pytest
from django.db import transaction

from tests import factories
from tournaments.models import PartnerSet, Tournament
from tournaments.partner_sets import PartnerSetFrozen, revise

pytestmark = pytest.mark.django_db


def used_set():
    alpha, beta = factories.system(None, slug="alpha"), factories.system(None, slug="beta")
    partners = PartnerSet.objects.create(slug="chat-partners", name="Chat partners")
    partners.systems.set([alpha])
    Tournament.objects.create(
        slug="cup",
        name="Cup",
        kind="spot_the_bot",
        schedule="bipartite-play",
        partner_set=partners,
    )
    return partners, alpha, beta


def test_revising_a_used_set_makes_the_next_version():
    partners, alpha, beta = used_set()
    revised = revise(partners, systems=[alpha, beta], description="with beta")
    assert (revised.slug, revised.version) == ("chat-partners", 2) and revised.pk != partners.pk
    assert sorted(revised.systems.values_list("slug", flat=True)) == ["alpha", "beta"]
    partners.refresh_from_db()
    assert list(partners.systems.values_list("slug", flat=True)) == ["alpha"]
    assert partners.description == "" and partners.version == 1


def test_revising_an_unused_set_changes_it_in_place():
    alpha = factories.system(None, slug="alpha")
    spare = PartnerSet.objects.create(slug="spare", name="Spare")
    assert revise(spare, systems=[alpha], name="Spare set").pk == spare.pk
    assert PartnerSet.objects.get().name == "Spare set"


def test_a_used_set_refuses_direct_changes():
    partners, alpha, beta = used_set()
    # Each attempt in its own savepoint: Django's m2m writes do not make one.
    with pytest.raises(PartnerSetFrozen, match="used by a tournament"), transaction.atomic():
        partners.systems.add(beta)
    with pytest.raises(PartnerSetFrozen), transaction.atomic():
        partners.systems.remove(alpha)
    with pytest.raises(PartnerSetFrozen), transaction.atomic():
        beta.partner_sets.add(partners)
    partners.version = 7
    with pytest.raises(PartnerSetFrozen), transaction.atomic():
        partners.save()
    assert list(PartnerSet.objects.get().systems.values_list("slug", flat=True)) == ["alpha"]
