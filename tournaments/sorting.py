"""How tournament lists sort (evalhub/listing.py): the tournaments and leaderboards pages."""

from evalhub.listing import Sort

TOURNAMENT_SORTS = {
    "created": Sort("Created", ("created",)),
    "name": Sort("Name", ("name",)),
    "status": Sort("Status", ("status",)),
}
