"""HTTP transport: one request with bounded retries (urllib only)."""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from . import errors
from .errors import EngramError

# Statuses retried by default: 429 (rate limited) and 503 (not ready / unavailable).
# The server writes nothing when it answers either, so every request may be retried.
DEFAULT_RETRY_STATUSES = (429, 503)

# Failures before a complete answer was received.
_NET_ERRORS = (urllib.error.URLError, OSError, http.client.HTTPException)


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before another attempt.

    max_retries: retries after the first attempt (0 disables retrying).
    backoff_base: the first backoff in seconds; attempt n waits about base * 2**n.
    backoff_max: the largest backoff in seconds.
    retry_after_max: the longest ``Retry-After`` honoured; a server asking for a longer
        wait makes the call fail at once instead (with ``retry_after`` on the error).
    statuses: HTTP statuses that are retried.
    connection_errors: also retry connection failures and timeouts of requests that are
        safe to repeat (reads, and admissions carrying an Idempotency-Key).
    """

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    retry_after_max: float = 120.0
    statuses: Tuple[int, ...] = DEFAULT_RETRY_STATUSES
    connection_errors: bool = True

    def backoff(self, retry: int, rng: random.Random) -> float:
        """Exponential backoff with jitter for the given retry (0 = the first retry):
        a random wait between half and all of min(backoff_max, base * 2**retry)."""
        cap = min(self.backoff_max, self.backoff_base * (2 ** retry))
        return cap / 2 + rng.uniform(0, cap / 2)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
        return max(0.0, seconds) if seconds == seconds else None  # NaN is no value
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


@dataclass
class Response:
    status: int
    headers: Dict[str, str]  # lower-case names
    body: bytes
    stream: Any = None  # the open response, when streaming (body is then empty)

    @property
    def request_id(self) -> Optional[str]:
        return self.headers.get("x-request-id")

    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise EngramError(
                errors.INVALID_RESPONSE,
                f"the server's answer is not JSON: {e}",
                status=self.status,
                request_id=self.request_id,
            ) from None


def _lower_headers(headers: Any) -> Dict[str, str]:
    out: Dict[str, str] = {}
    if headers is None:
        return out
    for k, v in headers.items():
        out[k.lower()] = v
    return out


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The API never redirects; following one would resend the API key elsewhere."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D401
        return None


class Transport:
    def __init__(
        self,
        base_url: str,
        api_key: Optional[str],
        *,
        timeout: float,
        retry: RetryPolicy,
        user_agent: str,
        sleep: Callable[[float], None] = time.sleep,
        rng: Optional[random.Random] = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retry = retry
        self.user_agent = user_agent
        self.sleep = sleep
        self.rng = rng or random.Random()
        self._opener = urllib.request.build_opener(_NoRedirect())

    def url(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        url = self.base_url + path
        if query:
            pairs = []
            for k, v in query.items():
                if v is None:
                    continue
                if isinstance(v, bool):
                    v = "true" if v else "false"
                elif isinstance(v, (dict, list)):
                    v = json.dumps(v, separators=(",", ":"))
                pairs.append((k, str(v)))
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        return url

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        raw_body: Optional[bytes] = None,
        content_type: str = "application/json",
        headers: Optional[Mapping[str, str]] = None,
        auth: bool = True,
        safe: bool = False,
        stream: bool = False,
        accept: str = "application/json",
    ) -> Response:
        """Sends a request, retrying per the policy; answers a 2xx Response or raises.

        ``safe``: the request may be repeated after a connection failure or timeout (its
        effect, if any, happens once): reads, and admissions with an Idempotency-Key.
        """
        url = self.url(path, query)
        data: Optional[bytes] = None
        if raw_body is not None:
            data = raw_body
        elif body is not None:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        hdrs = {"Accept": accept, "User-Agent": self.user_agent}
        if data is not None:
            hdrs["Content-Type"] = content_type
        if auth and self.api_key:
            hdrs["Authorization"] = "Bearer " + self.api_key
        if headers:
            hdrs.update(headers)

        policy = self.retry
        attempts = 0
        while True:
            attempts += 1
            final = attempts > policy.max_retries
            req = urllib.request.Request(url, data=data, headers=hdrs, method=method)
            try:
                resp = self._opener.open(req, timeout=self.timeout)
            except urllib.error.HTTPError as e:
                status = e.code
                resp_headers = _lower_headers(e.headers)
                try:
                    err_body = e.read()
                except _NET_ERRORS:
                    err_body = b""
                finally:
                    e.close()
                retry_after = parse_retry_after(resp_headers.get("retry-after"))
                if status in policy.statuses and not final:
                    if retry_after is not None and retry_after > policy.retry_after_max:
                        raise EngramError.from_response(
                            status, err_body, resp_headers, retry_after=retry_after, attempts=attempts
                        ) from None
                    wait = retry_after if retry_after is not None else policy.backoff(attempts - 1, self.rng)
                    self.sleep(wait)
                    continue
                raise EngramError.from_response(
                    status, err_body, resp_headers, retry_after=retry_after, attempts=attempts
                ) from None
            except _NET_ERRORS as e:
                err = _connection_error(e, url, attempts)
                if safe and policy.connection_errors and not final:
                    self.sleep(policy.backoff(attempts - 1, self.rng))
                    continue
                raise err from e

            resp_headers = _lower_headers(resp.headers)
            if stream:
                return Response(resp.status, resp_headers, b"", stream=resp)
            try:
                payload = resp.read()
            except _NET_ERRORS as e:
                resp.close()
                err = _connection_error(e, url, attempts)
                if safe and policy.connection_errors and not final:
                    self.sleep(policy.backoff(attempts - 1, self.rng))
                    continue
                raise err from e
            resp.close()
            return Response(resp.status, resp_headers, payload)


def _connection_error(e: BaseException, url: str, attempts: int) -> EngramError:
    reason: Any = e.reason if isinstance(e, urllib.error.URLError) else e
    if isinstance(reason, (socket.timeout, TimeoutError)) or "timed out" in str(reason):
        return EngramError(
            errors.TIMEOUT, f"no answer from {url} in time: {reason}", attempts=attempts
        )
    return EngramError(
        errors.CONNECTION_ERROR, f"connection to {url} failed: {reason}", attempts=attempts
    )
