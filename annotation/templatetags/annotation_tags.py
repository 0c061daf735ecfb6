"""Campaign pieces for other apps' templates, so the catalog's views need not know campaigns.

- ``{% live_campaigns %}``: the home page's "annotate now" section, listing live campaigns
  open to anyone with the link (crowd-platform campaigns are reached on the platform;
  private ones, see annotation/visibility.py, are never listed).
"""

from django import template

from annotation.models import Campaign
from annotation.visibility import public_campaigns

register = template.Library()


@register.inclusion_tag("annotation/_live_campaigns.html")
def live_campaigns():
    campaigns = public_campaigns(
        Campaign.objects.filter(status=Campaign.Status.LIVE, provider=Campaign.Provider.LOCAL)
    ).order_by("title")
    return {"campaigns": campaigns}
