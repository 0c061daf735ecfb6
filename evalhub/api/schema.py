"""The one error shape in the OpenAPI schema: every operation lists the errors it may answer,
each referring to the one `Error` component (`InputErrorsSerializer`).

A drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]) rather
than an `extend_schema` on each view: which errors an operation may answer follows from its
shape, the same way for all of them, and a view added tomorrow gets them too. A response a
view declares itself (a 400 with examples) is kept.
"""

ERROR_REF = {"$ref": "#/components/schemas/Error"}

WHY = {
    "400": "Input to fix: each problem names its field, or its line of the uploaded file.",
    "401": "No credentials, or wrong ones.",
    "403": "Not allowed to do this.",
    "404": "No such object, or one the user may not see.",
    "405": "The method is not allowed here.",
    "413": "The JSON body is larger than the API reads (EVALHUB_MAX_JSON_BODY_BYTES).",
    "415": "The body's content type is not accepted.",
    "429": "Too many requests; the Retry-After header says when to try again.",
}


def statuses(path: str, method: str, operation: dict) -> list[str]:
    """The errors `operation` may answer, from its shape alone."""
    codes = ["401", "403", "405", "429"]
    if "{" in path:
        codes.append("404")
    if "requestBody" in operation:
        codes += ["400", "413", "415"]
    return sorted(codes)


def add_error_responses(result, generator, request, public):
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            for code in statuses(path, method, operation):
                answer = responses.setdefault(code, {"description": WHY[code]})
                if not answer.get("content"):
                    answer["content"] = {"application/json": {"schema": ERROR_REF}}
    return result
