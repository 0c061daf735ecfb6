"""The HTTP layer under every resource: one httpx.Client, the token header, the API's one
error shape turned into `EvalHubError`, page-by-page iteration, and retries.

Retries: a 429 is retried whatever the method (the server refused before doing anything)
when its Retry-After is short enough to wait for; a 5xx or a lost connection only for
methods that may be repeated safely (GET, PUT, DELETE), never for a POST or PATCH that may
have taken effect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar
from urllib.parse import quote, urlsplit

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

T = TypeVar("T")

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE"})
RETRIED_STATUSES = frozenset({500, 502, 503, 504})
# A Retry-After longer than this (a day's upload quota says hours) is not waited for: the
# caller gets the 429 at once, with `retry_after` to decide.
MAX_RETRY_AFTER_SECONDS = 60.0


class EvalHubError(Exception):
    """An answer of the API that is not a success, in the API's one error shape, or a
    connection that failed (`status` None).

    `errors` is the list the API sent: each a dict with "message" and either "field" (an
    input field) or "line" (a line of an uploaded file; None for the request as a whole).
    """

    def __init__(
        self,
        status: int | None,
        errors: list[dict[str, Any]],
        *,
        error_count: int | None = None,
        retry_after: float | None = None,
        method: str = "",
        url: str = "",
    ):
        self.status = status
        self.errors = errors
        self.error_count = len(errors) if error_count is None else error_count
        self.retry_after = retry_after
        self.method = method
        self.url = url
        super().__init__(self._summary())

    @property
    def messages(self) -> list[str]:
        return [error.get("message", "") for error in self.errors]

    def _summary(self) -> str:
        parts = []
        for error in self.errors:
            if error.get("field"):
                parts.append(f"{error['field']}: {error.get('message', '')}")
            elif error.get("line") is not None:
                parts.append(f"line {error['line']}: {error.get('message', '')}")
            else:
                parts.append(str(error.get("message", "")))
        if self.error_count > len(self.errors):
            parts.append(f"({self.error_count} errors in all)")
        where = f"{self.method} {self.url}".strip()
        status = f"HTTP {self.status}" if self.status is not None else "no answer"
        return f"{status} from {where}: " + "; ".join(parts)

    @classmethod
    def from_response(cls, response: httpx.Response) -> EvalHubError:
        errors: list[dict[str, Any]] = []
        count = None
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("errors"), list):
            errors = [e for e in body["errors"] if isinstance(e, dict)]
            count = body.get("error_count") if isinstance(body.get("error_count"), int) else None
        if not errors:
            # Not EvalHub's shape: a proxy's page in front of it, say. Its first words.
            text = response.text.strip()[:200] or response.reason_phrase
            errors = [{"line": None, "message": text}]
        return cls(
            response.status_code,
            errors,
            error_count=count,
            retry_after=_retry_after(response),
            method=response.request.method,
            url=str(response.request.url),
        )


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: EvalHub sends seconds, so this is not ours


class _Retry(Exception):
    """Raised inside one attempt to ask tenacity for another."""

    def __init__(self, error: EvalHubError):
        self.error = error


def path_of(template: str, params: dict[str, Any]) -> str:
    """`/api/systems/{slug}/` with `slug` filled in, each value quoted as one segment."""
    return template.format(**{name: quote(str(value), safe="") for name, value in params.items()})


class Transport:
    """Sends one request to the API and returns its decoded answer, or raises."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        http: httpx.Client | None = None,
    ):
        if not 0 <= retries <= 10:
            raise ValueError("retries is between 0 and 10")
        if not 0 < timeout <= 3600:
            raise ValueError("timeout is more than 0 and at most 3600 seconds")
        if not 0 <= backoff <= 60:
            raise ValueError("backoff is between 0 and 60 seconds")
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        headers = {"Accept": "application/json", "User-Agent": "evalhub-client"}
        if token:
            headers["Authorization"] = f"Token {token}"
        self.http = http or httpx.Client(timeout=timeout)
        self.http.headers.update(headers)

    def close(self) -> None:
        self.http.close()

    def url(self, path: str) -> str:
        return self.base_url + path

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, _Retry) and error.error.retry_after is not None:
            return error.error.retry_after
        return wait_exponential(multiplier=self.backoff, max=8.0)(state)

    def send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """The successful response of `method url`, after the retries it deserves."""
        method = method.upper()
        retrying = Retrying(
            retry=retry_if_exception(lambda e: isinstance(e, _Retry)),
            stop=stop_after_attempt(self.retries + 1),
            wait=self._wait,
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._attempt(method, url, kwargs)
        except _Retry as last:
            raise last.error from None
        raise AssertionError("tenacity returned without an outcome")  # pragma: no cover

    def _attempt(self, method: str, url: str, kwargs: dict[str, Any]) -> httpx.Response:
        try:
            response = self.http.request(method, url, **kwargs)
        except httpx.TransportError as exc:
            error = EvalHubError(
                None,
                [{"line": None, "message": str(exc) or type(exc).__name__}],
                method=method,
                url=url,
            )
            if method in IDEMPOTENT:
                raise _Retry(error) from exc
            raise error from exc
        if response.is_success:
            return response
        error = EvalHubError.from_response(response)
        short_wait = error.retry_after is None or error.retry_after <= MAX_RETRY_AFTER_SECONDS
        if response.status_code == 429 and short_wait:
            raise _Retry(error)
        if response.status_code in RETRIED_STATUSES and method in IDEMPOTENT:
            raise _Retry(error)
        raise error

    def call(
        self,
        method: str,
        template: str,
        path: dict[str, Any] | None = None,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        data: dict[str, Any] | None = None,
        files: dict[str, tuple[str, bytes, str]] | None = None,
    ) -> Any:
        """The JSON answer of one operation (None for a 204). `template` is the operation's
        path as the OpenAPI schema names it: the test of the client reads these calls."""
        response = self.send(
            method,
            self.url(path_of(template, path or {})),
            params=_query(params),
            json=json,
            data=data,
            files=files,
        )
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def paginate(
        self,
        template: str,
        path: dict[str, Any] | None = None,
        *,
        params: dict[str, Any] | None = None,
        item: Callable[[dict[str, Any]], T],
    ) -> Paginated[T]:
        """Every item of a paginated list (`?page=`, `count`/`next`/`previous`)."""
        return Paginated(self, self.url(path_of(template, path or {})), _query(params), item)

    def download(
        self,
        template: str,
        path: dict[str, Any] | None = None,
        *,
        params: dict[str, Any] | None = None,
        to: Any,
    ) -> int:
        """Streams a file the API answers (an export) into the binary file `to`; the bytes
        written. The body is streamed: an export of any size holds one chunk in memory."""
        url = self.url(path_of(template, path or {}))
        # Any type: the export's own (text/csv, JSON lines); an error still answers JSON.
        request = self.http.build_request(
            "GET", url, params=_query(params), headers={"Accept": "*/*"}
        )
        try:
            response = self.http.send(request, stream=True)
            try:
                if not response.is_success:
                    response.read()
                    raise EvalHubError.from_response(response)
                written = 0
                for chunk in response.iter_bytes():
                    to.write(chunk)
                    written += len(chunk)
                return written
            finally:
                response.close()
        except httpx.TransportError as exc:
            # Not retried: part of the file may be written already; the caller starts over.
            message = str(exc) or type(exc).__name__
            raise EvalHubError(
                None, [{"line": None, "message": message}], method="GET", url=url
            ) from exc


def _query(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """The query without the parameters left unset; booleans as the API reads them."""
    if not params:
        return None
    query: dict[str, Any] = {}
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        query[name] = value
    return query or None


class Paginated(Generic[T]):
    """The items of a paginated list, fetched a page at a time as the iteration reaches
    them. `count` is the total the server reports (fetching the first page if needed)."""

    def __init__(
        self,
        transport: Transport,
        url: str,
        params: dict[str, Any] | None,
        item: Callable[[dict[str, Any]], T],
    ):
        self._transport = transport
        self._url = url
        self._params = params
        self._item = item
        self._first: dict[str, Any] | None = None

    def _page(self, url: str, params: dict[str, Any] | None) -> dict[str, Any]:
        return self._transport.send("GET", url, params=params).json()

    def _first_page(self) -> dict[str, Any]:
        if self._first is None:
            self._first = self._page(self._url, self._params)
        return self._first

    @property
    def count(self) -> int:
        return int(self._first_page()["count"])

    def pages(self) -> Iterator[list[T]]:
        page = self._first_page()
        while True:
            yield [self._item(row) for row in page["results"]]
            following = page.get("next")
            if not following:
                return
            # The server writes `next` with the host it believes it has; behind a proxy
            # that may not be the one we reach it by, so only its path and query are kept.
            base, parts = urlsplit(self._url), urlsplit(following)
            page = self._page(f"{base.scheme}://{base.netloc}{parts.path}?{parts.query}", None)

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page

    def all(self) -> list[T]:
        return list(self)
