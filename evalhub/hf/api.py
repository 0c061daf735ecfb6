"""What the API's dataset downloads share: the renderer that lets `Accept: application/zip`
reach them, and their query parameters in the schema."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework.renderers import JSONRenderer

from .card import CITATION_CHARS, LICENSES


class ZipRenderer(JSONRenderer):
    """Errors still answer JSON; a success is the view's own FileResponse."""

    media_type = "application/zip"
    format = "zip"


RENDERERS = [JSONRenderer, ZipRenderer]

PARAMETERS = [
    OpenApiParameter(
        "license",
        str,
        enum=list(LICENSES),
        description="The dataset card's licence (a Hugging Face Hub identifier); default unknown.",
    ),
    OpenApiParameter(
        "citation",
        str,
        description=f"BibTeX for the card's Citation section (at most {CITATION_CHARS} "
        "characters).",
    ),
]

RESPONSES = {
    (200, "application/zip"): OpenApiResponse(
        OpenApiTypes.BINARY,
        description="A zip of data/<table>.parquet files and README.md, the dataset card.",
        examples=[
            OpenApiExample(
                "The zip's entries",
                value="README.md\ndata/judgments.parquet\n",
                description="Binary; these are the names of its entries (`unzip -l`).",
            )
        ],
    )
}
