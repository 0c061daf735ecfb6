"""Catalog operations shared by the web forms, the REST API, the admin and the commands."""

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction

from .importers.problems import InvalidUpload, Problem
from .importers.prompts import parse_prompts
from .importers.responses import PromptRef, parse_responses
from .models import Prompt, PromptSet, Response, Submission, System


def read_upload(uploaded_file) -> bytes:
    """Read an uploaded file, refusing one over the limit before loading it into memory."""
    limit = settings.EVALHUB_MAX_UPLOAD_BYTES
    if uploaded_file.size is not None and uploaded_file.size > limit:
        raise InvalidUpload(
            [Problem(None, f"The file is {uploaded_file.size:,} bytes; the limit is {limit:,} bytes.")]
        )
    return uploaded_file.read()


def submit_responses(
    *,
    system: System,
    prompt_set: PromptSet,
    data: bytes,
    filename: str,
    fmt: str | None = None,
    baselines=(),
    user=None,
) -> Submission:
    """Validate a whole response file, then store it in one transaction.

    Raises InvalidUpload (nothing written) when the file has any problem. The metrics task
    is queued only once the transaction has committed.
    """
    prompts = list(prompt_set.prompts.order_by("position").values_list("id", "position", "external_id"))
    refs = [PromptRef(position, external_id) for _, position, external_id in prompts]
    texts = parse_responses(data, fmt, filename, refs, settings.EVALHUB_MAX_UPLOAD_BYTES)
    prompt_ids = {position: pk for pk, position, _ in prompts}
    fmt = fmt or filename.rsplit(".", 1)[-1].lower()
    with transaction.atomic():
        submission = Submission(
            system=system,
            prompt_set=prompt_set,
            submitted_by=user if user is not None and user.is_authenticated else None,
            status=Submission.Status.VALIDATED,
            format=fmt,
            original_filename=filename[:255],
        )
        submission.file.save(filename, ContentFile(data), save=False)
        submission.save()
        Response.objects.bulk_create(
            Response(submission=submission, prompt_id=prompt_ids[position], text=text)
            for position, text in texts.items()
        )
        if baselines:
            submission.baselines.set(baselines)
        transaction.on_commit(lambda: queue_metrics(submission.pk))
    return submission


def queue_metrics(submission_id: int) -> None:
    from .tasks import compute_submission_metrics

    compute_submission_metrics.delay(submission_id)


def create_prompt_set(
    *, slug: str, name: str, data: bytes, filename: str, description="", source="", version="1",
    user=None,
) -> PromptSet:
    """Validate a prompt file and store the set with its prompts in one transaction."""
    parsed = parse_prompts(data, filename, settings.EVALHUB_MAX_UPLOAD_BYTES)
    with transaction.atomic():
        prompt_set = PromptSet.objects.create(
            slug=slug,
            name=name,
            description=description,
            source=source,
            version=version,
            created_by=user if user is not None and user.is_authenticated else None,
        )
        Prompt.objects.bulk_create(
            Prompt(
                prompt_set=prompt_set,
                position=position,
                external_id=prompt.external_id,
                context=prompt.context,
                references=prompt.references,
            )
            for position, prompt in enumerate(parsed)
        )
    return prompt_set
