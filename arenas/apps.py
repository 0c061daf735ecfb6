from django.apps import AppConfig


class ArenasConfig(AppConfig):
    """Anonymous side-by-side battles between live models, voted by people: above annotation
    and tournaments (it uses the catalog's systems and the endpoints' streaming client),
    below judging and analysis."""

    name = "arenas"
