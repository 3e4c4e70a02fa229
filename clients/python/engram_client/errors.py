"""The one exception type of the client."""

from __future__ import annotations

from typing import Any, Dict, Optional

# Codes the client itself uses (the server's codes are listed in docs/openapi.yaml:
# invalid_argument, invalid_json, bad_request, unauthorized, forbidden, not_found,
# no_route, method_not_allowed, conflict, failed_precondition, aborted,
# payload_too_large, internal, model_unavailable, not_ready).
CONNECTION_ERROR = "connection_error"  # the server could not be reached, or the connection broke
TIMEOUT = "timeout"  # no answer within the configured timeout
INVALID_RESPONSE = "invalid_response"  # an answer that is not what the API promises
HTTP_ERROR = "http_error"  # an error status without the API's error envelope (e.g. from a proxy)


class EngramError(Exception):
    """An error answered by the server (its error envelope), or a failure to reach it.

    Attributes:
        code: the envelope's ``code`` (``not_found``, ``unauthorized``, ...) or one of the
            client's own codes: ``connection_error``, ``timeout``, ``invalid_response``,
            ``http_error``.
        message: the envelope's message, or a description of the failure.
        status: the HTTP status, or None when no response was received.
        field: the field or parameter at fault, when the server named one.
        request_id: the request's ``X-Request-Id`` (from the envelope or the header).
        retry_after: the ``Retry-After`` of the response in seconds, if it had one.
        attempts: how many attempts were made before giving up.
        body: the parsed error body (a dict) or its text, when there was one.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: Optional[int] = None,
        field: Optional[str] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        attempts: int = 1,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.field = field
        self.request_id = request_id
        self.retry_after = retry_after
        self.attempts = attempts
        self.body = body

    @property
    def is_connection_error(self) -> bool:
        """True when no HTTP response was received (connection failure or timeout)."""
        return self.status is None

    def __str__(self) -> str:
        parts = [self.code]
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        text = f"[{', '.join(parts)}] {self.message}"
        if self.field:
            text += f" (field: {self.field})"
        if self.request_id:
            text += f" (request id: {self.request_id})"
        return text

    def __repr__(self) -> str:
        return (
            f"EngramError(code={self.code!r}, message={self.message!r}, status={self.status!r}, "
            f"field={self.field!r}, request_id={self.request_id!r})"
        )

    @classmethod
    def from_response(
        cls,
        status: int,
        body: bytes,
        headers: Dict[str, str],
        *,
        retry_after: Optional[float] = None,
        attempts: int = 1,
    ) -> "EngramError":
        """Builds the error of a non-2xx response from its envelope (or its text)."""
        import json

        request_id = headers.get("x-request-id") or None
        text = body.decode("utf-8", errors="replace")
        parsed: Any = None
        try:
            parsed = json.loads(text) if text.strip() else None
        except ValueError:
            parsed = None
        err = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(err, dict) and isinstance(err.get("code"), str):
            return cls(
                err["code"],
                str(err.get("message", "")),
                status=status,
                field=err.get("field") or None,
                request_id=err.get("request_id") or request_id,
                retry_after=retry_after,
                attempts=attempts,
                body=parsed,
            )
        snippet = text.strip()[:200]
        return cls(
            HTTP_ERROR,
            f"HTTP {status} without an engram error body" + (f": {snippet}" if snippet else ""),
            status=status,
            request_id=request_id,
            retry_after=retry_after,
            attempts=attempts,
            body=parsed if parsed is not None else text,
        )
