from django.apps import AppConfig


class ArenasConfig(AppConfig):
    """Anonymous side-by-side battles between live models, voted by people: above annotation
    and tournaments (it uses the catalog's systems and the endpoints' streaming client),
    below judging and analysis."""

    name = "arenas"

    def ready(self):
        # arenacrowd: a crowd voter's battle slots are fought on the arena's battle pages.
        from annotation.kinds.base import serve_elsewhere

        from .crowd_slots import battle_page_of

        serve_elsewhere("arena", battle_page_of)
