"""EvalHub's Python client: `EvalHub(url, token)` over the REST API, and the `evalhub` CLI."""

from ._transport import EvalHubError, Paginated
from .client import EvalHub

__all__ = ["EvalHub", "EvalHubError", "Paginated"]
__version__ = "0.1.0"
