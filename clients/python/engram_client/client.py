"""A synchronous client of engram's REST API (``engram serve``, docs/openapi.yaml)."""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
import random
import time
import urllib.parse
import uuid
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

from . import errors
from ._transport import DEFAULT_RETRY_STATUSES, Response, RetryPolicy, Transport
from .errors import EngramError
from .models import (
    AddTurnsResult,
    ChatEvent,
    ChatReply,
    DeleteAllResult,
    DeleteResult,
    ForgetResult,
    HealthReport,
    ImportResult,
    JobList,
    MaintainReport,
    MemoryAddResult,
    MemoryHistory,
    MemoryItem,
    MemoryPage,
    MemorySearchResult,
    Profile,
    PurgeResult,
    Retrieval,
    Stats,
    Turn,
    TurnPage,
    VersionInfo,
)

__all__ = ["EngramClient", "DEFAULT_URL"]

DEFAULT_URL = "http://127.0.0.1:8420"
VERSION = "0.1.0"

Time = Union[str, int]  # ISO-8601 text ("2025-06-01T10:00:00Z") or epoch milliseconds
TurnInput = Mapping[str, Any]  # user_text, assistant_text, time, metadata, source_ref, ...
Message = Mapping[str, Any]  # {"role": "user", "content": "...", "name": "..."}


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def new_idempotency_key() -> str:
    """A fresh idempotency key (random, 32 hex digits)."""
    return uuid.uuid4().hex


def _clean(d: Mapping[str, Any]) -> Dict[str, Any]:
    """The fields that are set (None means "not given")."""
    return {k: v for k, v in d.items() if v is not None}


def _fact_scope(user: Optional[str], agent: Optional[str], run: Optional[str]) -> Dict[str, Any]:
    # At least one of the three is needed; the server says so (400 invalid_argument).
    return _clean({"user": user, "agent": agent, "run": run})


class EngramClient:
    """A synchronous client of the engram REST API.

    ``base_url`` defaults to ``$ENGRAM_URL`` (else http://127.0.0.1:8420) and ``api_key``
    to ``$ENGRAM_API_KEY``; the key is sent as ``Authorization: Bearer <key>``.

    Every call raises :class:`EngramError` on failure. Answers 429 and 503 are retried
    (up to ``max_retries`` times, exponential backoff with jitter, honouring
    ``Retry-After``); connection failures and timeouts are retried only for requests that
    are safe to repeat. Admissions (``add_turn``, ``add_turns``, ``add_memory``,
    ``import_dialogues``) always carry an ``Idempotency-Key`` (yours, or one generated per
    call and reused by its retries), so the server admits them once however often they
    are sent.

    ``timeout`` (seconds) bounds connecting and each read of an answer. The client holds
    no connection state and may be shared between threads.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        retry_after_max: float = 120.0,
        retry_statuses: Sequence[int] = DEFAULT_RETRY_STATUSES,
        retry_connection_errors: bool = True,
        user_agent: Optional[str] = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: Optional[random.Random] = None,
    ) -> None:
        if base_url is None:
            base_url = os.environ.get("ENGRAM_URL") or DEFAULT_URL
        if api_key is None:
            api_key = os.environ.get("ENGRAM_API_KEY") or None
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url: expected http://HOST:PORT or https://HOST:PORT, got {base_url!r}")
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout: must be positive")
        if max_retries < 0:
            raise ValueError("max_retries: must be 0 or more")
        # A base URL may name the API root ("/v1") or the server root.
        base = base_url.rstrip("/")
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        self._retry = RetryPolicy(
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            retry_after_max=retry_after_max,
            statuses=tuple(retry_statuses),
            connection_errors=retry_connection_errors,
        )
        self._t = Transport(
            base,
            api_key,
            timeout=timeout,
            retry=self._retry,
            user_agent=user_agent or f"engram-python/{VERSION}",
            sleep=sleep,
            rng=rng,
        )

    # --- configuration ---------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return self._t.base_url

    @property
    def timeout(self) -> float:
        return self._t.timeout

    @property
    def retry_policy(self) -> RetryPolicy:
        return self._retry

    def with_options(
        self,
        *,
        api_key: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> "EngramClient":
        """A copy of this client with another key, timeout or retry bound."""
        other = object.__new__(EngramClient)
        other._retry = (
            self._retry if max_retries is None else dataclasses.replace(self._retry, max_retries=max_retries)
        )
        other._t = Transport(
            self._t.base_url,
            api_key if api_key is not None else self._t.api_key,
            timeout=timeout if timeout is not None else self._t.timeout,
            retry=other._retry,
            user_agent=self._t.user_agent,
            sleep=self._t.sleep,
            rng=self._t.rng,
        )
        return other

    def __repr__(self) -> str:
        return f"EngramClient(base_url={self.base_url!r}, timeout={self.timeout!r})"

    def __enter__(self) -> "EngramClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release (each request uses its own connection); for `with` blocks."""

    # --- plumbing --------------------------------------------------------------------

    def _json(self, resp: Response) -> Dict[str, Any]:
        data = resp.json()
        if not isinstance(data, dict):
            raise EngramError(
                errors.INVALID_RESPONSE,
                "the server's answer is not a JSON object",
                status=resp.status,
                request_id=resp.request_id,
            )
        return data

    def _get(self, path: str, query: Optional[Mapping[str, Any]] = None, *, auth: bool = True) -> Dict[str, Any]:
        return self._json(self._t.request("GET", path, query=query, auth=auth, safe=True))

    def _post(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        safe: bool = False,
        idempotency_key: Optional[str] = None,
    ) -> Dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._json(self._t.request("POST", path, body=dict(body), headers=headers, safe=safe))

    @staticmethod
    def _memory_path(memory_id: str, suffix: str = "") -> str:
        if not memory_id:
            raise ValueError("memory_id: must not be empty")
        return "/v1/memories/" + urllib.parse.quote(memory_id, safe="") + suffix

    # --- service ---------------------------------------------------------------------

    def healthz(self) -> Dict[str, Any]:
        """``GET /healthz``: liveness (no API key). ``{"status": "ok"}``."""
        return self._get("/healthz", auth=False)

    def readyz(self) -> bool:
        """``GET /readyz``: True once the store is open (no API key, no retries)."""
        try:
            self.with_options(max_retries=0)._get("/readyz", auth=False)
            return True
        except EngramError as e:
            if e.status == 503:
                return False
            raise

    def version(self) -> VersionInfo:
        """``GET /v1/version``: the server's and the API's versions (no API key)."""
        return VersionInfo.from_dict(self._get("/v1/version", auth=False))

    # --- dialogue memory -------------------------------------------------------------

    def add_turn(
        self,
        user: str,
        user_text: Optional[str] = None,
        assistant_text: Optional[str] = None,
        *,
        assistant: Optional[str] = None,
        time: Optional[Time] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        source_ref: Optional[str] = None,
        user_name: Optional[str] = None,
        assistant_name: Optional[str] = None,
        user_source_ref: Optional[str] = None,
        assistant_source_ref: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> AddTurnsResult:
        """``POST /v1/turns``: admits one exchange into the scope ``(user, assistant)``.

        Sent with an ``Idempotency-Key`` (``idempotency_key`` or a generated one), so a
        retry admits nothing twice; a repeat answers ``replayed=True``.
        """
        body = _clean(
            {
                "user": user,
                "assistant": assistant,
                "user_text": user_text,
                "assistant_text": assistant_text,
                "time": time,
                "metadata": dict(metadata) if metadata is not None else None,
                "source_ref": source_ref,
                "user_name": user_name,
                "assistant_name": assistant_name,
                "user_source_ref": user_source_ref,
                "assistant_source_ref": assistant_source_ref,
            }
        )
        key = idempotency_key or new_idempotency_key()
        return AddTurnsResult.from_dict(self._post("/v1/turns", body, safe=True, idempotency_key=key))

    def add_turns(
        self,
        user: str,
        turns: Iterable[TurnInput],
        *,
        assistant: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> AddTurnsResult:
        """``POST /v1/turns`` with a batch: admits every turn or none (one transaction).

        Each turn is a mapping with ``user_text`` and/or ``assistant_text`` and optionally
        ``time``, ``metadata``, ``source_ref``, ``user_name``, ``assistant_name``,
        ``user_source_ref``, ``assistant_source_ref``.
        """
        items = [dict(t) for t in turns]
        body = _clean({"user": user, "assistant": assistant, "turns": items})
        key = idempotency_key or new_idempotency_key()
        return AddTurnsResult.from_dict(self._post("/v1/turns", body, safe=True, idempotency_key=key))

    def list_turns(
        self,
        user: str,
        *,
        assistant: Optional[str] = None,
        after: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> TurnPage:
        """``GET /v1/turns``: a page of the scope's turns in admission order.
        The next page: ``after=page.next_after`` (None on the last page)."""
        q = {"user": user, "assistant": assistant, "after": after, "limit": limit}
        return TurnPage.from_dict(self._get("/v1/turns", q))

    def iter_turns(
        self, user: str, *, assistant: Optional[str] = None, page_size: int = 100
    ) -> Iterator[Turn]:
        """Every turn of the scope, following ``next_after`` page by page."""
        after: Optional[int] = None
        while True:
            page = self.list_turns(user, assistant=assistant, after=after, limit=page_size)
            yield from page.turns
            if page.next_after is None:
                return
            after = page.next_after

    def retrieve(
        self,
        user: str,
        query: str,
        *,
        assistant: Optional[str] = None,
        budget: Optional[int] = None,
        max_pages: Optional[int] = None,
        max_segments: Optional[int] = None,
        max_facts: Optional[int] = None,
        include_stm: Optional[bool] = None,
        include_profile: Optional[bool] = None,
        explain: Optional[bool] = None,
        ranking: Optional[Mapping[str, float]] = None,
    ) -> Retrieval:
        """``POST /v1/retrieve``: the memory context for ``query`` within a token budget.

        ``explain``: each item carries why it was chosen (the item's ``raw["why"]``); ``ranking``:
        the ranking's constants to change for this request (``RankingOptions``, e.g.
        ``{"recent_hours": 0, "stm_share": 0.2}``; an unknown name or a value out of range is
        a 400 naming it)."""
        body = _clean(
            {
                "user": user,
                "assistant": assistant,
                "query": query,
                "budget": budget,
                "max_pages": max_pages,
                "max_segments": max_segments,
                "max_facts": max_facts,
                "include_stm": include_stm,
                "include_profile": include_profile,
                "explain": explain,
                "ranking": dict(ranking) if ranking is not None else None,
            }
        )
        return Retrieval.from_dict(self._post("/v1/retrieve", body, safe=True))

    @staticmethod
    def _chat_body(user: str, message: str, options: Mapping[str, Any]) -> Dict[str, Any]:
        body = {"user": user, "message": message}
        body.update(_clean(options))
        return body

    def chat(
        self,
        user: str,
        message: str,
        *,
        assistant: Optional[str] = None,
        persona: Optional[str] = None,
        language: Optional[str] = None,
        answer_length: Optional[str] = None,
        max_answer_tokens: Optional[int] = None,
        budget: Optional[int] = None,
        admit: Optional[bool] = None,
        user_name: Optional[str] = None,
        assistant_name: Optional[str] = None,
    ) -> ChatReply:
        """``POST /v1/chat``: a memory-grounded answer from the server's language model.

        Unless ``admit=False`` the exchange is admitted. Without a configured model the
        server answers 409 ``failed_precondition``; a failing model is 502
        ``model_unavailable``. Not retried after a connection failure (it may have been
        admitted).
        """
        body = self._chat_body(
            user,
            message,
            {
                "assistant": assistant,
                "persona": persona,
                "language": language,
                "answer_length": answer_length,
                "max_answer_tokens": max_answer_tokens,
                "budget": budget,
                "admit": admit,
                "user_name": user_name,
                "assistant_name": assistant_name,
            },
        )
        return ChatReply.from_dict(self._post("/v1/chat", body, safe=admit is False))

    def chat_stream(
        self,
        user: str,
        message: str,
        *,
        assistant: Optional[str] = None,
        persona: Optional[str] = None,
        language: Optional[str] = None,
        answer_length: Optional[str] = None,
        max_answer_tokens: Optional[int] = None,
        budget: Optional[int] = None,
        admit: Optional[bool] = None,
        user_name: Optional[str] = None,
        assistant_name: Optional[str] = None,
    ) -> Iterator[ChatEvent]:
        """``POST /v1/chat`` with ``stream: true``: yields ``ChatEvent("delta", text=...)``
        for each piece of the answer, then one ``ChatEvent("done", reply=ChatReply)``.
        An ``error`` event raises EngramError (nothing was admitted then)."""
        body = self._chat_body(
            user,
            message,
            {
                "assistant": assistant,
                "persona": persona,
                "language": language,
                "answer_length": answer_length,
                "max_answer_tokens": max_answer_tokens,
                "budget": budget,
                "admit": admit,
                "user_name": user_name,
                "assistant_name": assistant_name,
            },
        )
        body["stream"] = True
        resp = self._t.request(
            "POST", "/v1/chat", body=body, stream=True, safe=admit is False, accept="text/event-stream"
        )
        return self._chat_events(resp)

    def _chat_events(self, resp: Response) -> Iterator[ChatEvent]:
        request_id = resp.request_id
        done = False
        try:
            for name, data in _sse_events(resp.stream):
                try:
                    payload = json.loads(data) if data else {}
                except ValueError:
                    raise EngramError(
                        errors.INVALID_RESPONSE,
                        f"chat stream: an event's data is not JSON: {data[:200]!r}",
                        status=resp.status,
                        request_id=request_id,
                    ) from None
                if name == "delta":
                    yield ChatEvent("delta", text=str(payload.get("text", "")))
                elif name == "done":
                    done = True
                    yield ChatEvent("done", reply=ChatReply.from_dict(payload))
                elif name == "error":
                    err = payload.get("error", {}) if isinstance(payload, dict) else {}
                    raise EngramError(
                        str(err.get("code", "internal")),
                        str(err.get("message", "the chat stream failed")),
                        status=resp.status,
                        field=err.get("field"),
                        request_id=err.get("request_id") or request_id,
                        body=payload,
                    )
        except (OSError, ValueError, http.client.HTTPException) as e:  # a broken stream
            code = errors.TIMEOUT if "timed out" in str(e) else errors.CONNECTION_ERROR
            raise EngramError(
                code, f"chat stream: the connection broke: {e}", status=resp.status, request_id=request_id
            ) from None
        finally:
            resp.stream.close()
        if not done:
            raise EngramError(
                errors.INVALID_RESPONSE,
                "chat stream: ended without a done event",
                status=resp.status,
                request_id=request_id,
            )

    def export(self, *, user: Optional[str] = None, assistant: Optional[str] = None) -> List[Dict[str, Any]]:
        """``GET /v1/export``: every record of the visible scopes (each a dict with a ``type``)."""
        return list(self.iter_export(user=user, assistant=assistant))

    def iter_export(
        self, *, user: Optional[str] = None, assistant: Optional[str] = None
    ) -> Iterator[Dict[str, Any]]:
        """``GET /v1/export`` read as a stream: one record per JSON line."""
        resp = self._t.request(
            "GET",
            "/v1/export",
            query={"user": user, "assistant": assistant},
            safe=True,
            stream=True,
            accept="application/x-ndjson",
        )
        try:
            for raw in resp.stream:
                line = raw.decode("utf-8").strip()
                if not line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    raise EngramError(
                        errors.INVALID_RESPONSE,
                        f"export: a line is not JSON (a cut stream?): {line[:200]!r}",
                        status=resp.status,
                        request_id=resp.request_id,
                    ) from None
                yield record
        except (OSError, ValueError, http.client.HTTPException) as e:  # a broken stream
            raise EngramError(
                errors.CONNECTION_ERROR,
                f"export: the stream broke: {e}",
                status=resp.status,
                request_id=resp.request_id,
            ) from None
        finally:
            resp.stream.close()

    def export_text(self, *, user: Optional[str] = None, assistant: Optional[str] = None) -> str:
        """``GET /v1/export`` as the NDJSON text (what ``import_dialogues`` reads back)."""
        resp = self._t.request(
            "GET",
            "/v1/export",
            query={"user": user, "assistant": assistant},
            safe=True,
            accept="application/x-ndjson",
        )
        return resp.body.decode("utf-8")

    def import_dialogues(
        self,
        user: str,
        data: Union[str, bytes],
        *,
        assistant: Optional[str] = None,
        format: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> ImportResult:
        """``POST /v1/import``: a dialogue file (engram JSONL or an export, MemoryOS or
        LoCoMo JSON; ``format`` auto, jsonl, memoryos or locomo). Sent with an
        ``Idempotency-Key`` (at most 240 bytes), so a retry admits no dialogue twice."""
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        key = idempotency_key or new_idempotency_key()
        resp = self._t.request(
            "POST",
            "/v1/import",
            query={"user": user, "assistant": assistant, "format": format},
            raw_body=raw,
            content_type="application/x-ndjson",
            headers={"Idempotency-Key": key},
            safe=True,
        )
        return ImportResult.from_dict(self._json(resp))

    def maintain(self, *, user: Optional[str] = None, assistant: Optional[str] = None) -> MaintainReport:
        """``POST /v1/maintain``: runs the pending maintenance of the visible scopes now."""
        return MaintainReport.from_dict(
            self._post("/v1/maintain", _clean({"user": user, "assistant": assistant}))
        )

    def forget(self, user: str) -> ForgetResult:
        """``POST /v1/forget`` (admin): erases the user's content everywhere in the tenant."""
        return ForgetResult.from_dict(self._post("/v1/forget", {"user": user}, safe=True))

    # --- fact memory -----------------------------------------------------------------

    def add_memory(
        self,
        text: Optional[str] = None,
        *,
        messages: Optional[Sequence[Message]] = None,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
        infer: Optional[bool] = None,
        procedural: Optional[bool] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        expires_at: Optional[Time] = None,
        event_time: Optional[Time] = None,
        idempotency_key: Optional[str] = None,
    ) -> MemoryAddResult:
        """``POST /v1/memories``: adds memories from ``text`` (one user message) or
        ``messages`` (exactly one of the two). ``infer=False`` stores them verbatim.

        Sent with an ``Idempotency-Key`` (``idempotency_key`` or a generated one), so a
        retry adds nothing twice; a repeat answers ``replayed=True``.
        """
        body = _fact_scope(user, agent, run)
        body.update(
            _clean(
                {
                    "text": text,
                    "messages": [dict(m) for m in messages] if messages is not None else None,
                    "infer": infer,
                    "procedural": procedural,
                    "metadata": dict(metadata) if metadata is not None else None,
                    "expires_at": expires_at,
                    "event_time": event_time,
                }
            )
        )
        key = idempotency_key or new_idempotency_key()
        return MemoryAddResult.from_dict(self._post("/v1/memories", body, safe=True, idempotency_key=key))

    def search_memories(
        self,
        query: str,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
        narrower: Optional[bool] = None,
        top_k: Optional[int] = None,
        threshold: Optional[float] = None,
        filters: Optional[Mapping[str, Any]] = None,
        include_expired: Optional[bool] = None,
        explain: Optional[bool] = None,
    ) -> MemorySearchResult:
        """``POST /v1/memories/search``: the visible memories ranked for ``query``."""
        body = _fact_scope(user, agent, run)
        body.update(
            _clean(
                {
                    "query": query,
                    "narrower": narrower,
                    "top_k": top_k,
                    "threshold": threshold,
                    "filters": dict(filters) if filters is not None else None,
                    "include_expired": include_expired,
                    "explain": explain,
                }
            )
        )
        return MemorySearchResult.from_dict(self._post("/v1/memories/search", body, safe=True))

    def list_memories(
        self,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
        narrower: Optional[bool] = None,
        cursor: Optional[str] = None,
        limit: Optional[int] = None,
        filters: Optional[Mapping[str, Any]] = None,
        include_expired: Optional[bool] = None,
    ) -> MemoryPage:
        """``GET /v1/memories``: a page of live memories, newest first.
        The next page: ``cursor=page.next_cursor`` (None on the last page)."""
        q = _fact_scope(user, agent, run)
        q.update(
            _clean(
                {
                    "narrower": narrower,
                    "cursor": cursor,
                    "limit": limit,
                    "filters": dict(filters) if filters is not None else None,
                    "include_expired": include_expired,
                }
            )
        )
        return MemoryPage.from_dict(self._get("/v1/memories", q))

    def iter_memories(
        self,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
        narrower: Optional[bool] = None,
        filters: Optional[Mapping[str, Any]] = None,
        include_expired: Optional[bool] = None,
        page_size: int = 100,
    ) -> Iterator[MemoryItem]:
        """Every live memory of the scope, following ``next_cursor`` page by page."""
        cursor: Optional[str] = None
        while True:
            page = self.list_memories(
                user=user,
                agent=agent,
                run=run,
                narrower=narrower,
                cursor=cursor,
                limit=page_size,
                filters=filters,
                include_expired=include_expired,
            )
            yield from page.results
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def get_memory(
        self,
        memory_id: str,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
        narrower: Optional[bool] = None,
    ) -> MemoryItem:
        """``GET /v1/memories/{id}``: the current version (404 ``not_found`` when deleted,
        purged, or outside the scope or tenant)."""
        q = _fact_scope(user, agent, run)
        q.update(_clean({"narrower": narrower}))
        return MemoryItem.from_dict(self._get(self._memory_path(memory_id), q))

    def update_memory(
        self,
        memory_id: str,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
        text: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        expires_at: Any = UNSET,
    ) -> MemoryItem:
        """``PATCH /v1/memories/{id}``: a new version with a new ``text``, ``metadata``
        and/or ``expires_at`` (``expires_at=None`` clears the expiry)."""
        body = _fact_scope(user, agent, run)
        body.update(_clean({"text": text, "metadata": dict(metadata) if metadata is not None else None}))
        if expires_at is not UNSET:
            body["expires_at"] = expires_at
        resp = self._t.request("PATCH", self._memory_path(memory_id), body=body)
        return MemoryItem.from_dict(self._json(resp))

    def delete_memory(
        self,
        memory_id: str,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
    ) -> DeleteResult:
        """``DELETE /v1/memories/{id}``: a tombstone (history keeps the text)."""
        q = _fact_scope(user, agent, run)
        return DeleteResult.from_dict(self._json(self._t.request("DELETE", self._memory_path(memory_id), query=q)))

    def delete_all_memories(
        self,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
        narrower: Optional[bool] = None,
    ) -> DeleteAllResult:
        """``DELETE /v1/memories``: tombstones every live memory of exactly the scope
        (and of the narrower scopes with ``narrower=True``)."""
        q = _fact_scope(user, agent, run)
        q.update(_clean({"narrower": narrower}))
        return DeleteAllResult.from_dict(self._json(self._t.request("DELETE", "/v1/memories", query=q, safe=True)))

    def memory_history(
        self,
        memory_id: str,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
        narrower: Optional[bool] = None,
    ) -> MemoryHistory:
        """``GET /v1/memories/{id}/history``: its events oldest first (ADD, UPDATE,
        SUPERSEDE, DELETE, PURGE)."""
        q = _fact_scope(user, agent, run)
        q.update(_clean({"narrower": narrower}))
        return MemoryHistory.from_dict(self._get(self._memory_path(memory_id, "/history"), q))

    def purge_memory(
        self,
        memory_id: str,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
    ) -> PurgeResult:
        """``POST /v1/memories/{id}/purge`` (admin): erases every version's content."""
        body = _fact_scope(user, agent, run)
        return PurgeResult.from_dict(self._post(self._memory_path(memory_id, "/purge"), body, safe=True))

    def purge_memories(
        self,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        run: Optional[str] = None,
        narrower: Optional[bool] = None,
    ) -> PurgeResult:
        """``POST /v1/memories/purge`` (admin): erases the content of every memory of the scope."""
        body = _fact_scope(user, agent, run)
        body.update(_clean({"narrower": narrower}))
        return PurgeResult.from_dict(self._post("/v1/memories/purge", body, safe=True))

    # --- inspection ------------------------------------------------------------------

    def profile(self, user: str, *, assistant: Optional[str] = None) -> Profile:
        """``GET /v1/profile``: profile slots, profile text and consolidated facts."""
        return Profile.from_dict(self._get("/v1/profile", {"user": user, "assistant": assistant}))

    def stats(self, *, user: Optional[str] = None, assistant: Optional[str] = None) -> Stats:
        """``GET /v1/stats``: counts over the visible dialogue scopes."""
        return Stats.from_dict(self._get("/v1/stats", {"user": user, "assistant": assistant}))

    def health(self, *, user: Optional[str] = None, max_findings: Optional[int] = None) -> HealthReport:
        """``GET /v1/health``: the lineage health of the tenant (or of one user)."""
        return HealthReport.from_dict(self._get("/v1/health", {"user": user, "max_findings": max_findings}))

    def jobs(
        self, *, user: Optional[str] = None, status: Optional[str] = None, limit: Optional[int] = None
    ) -> JobList:
        """``GET /v1/jobs``: pending and failed maintenance jobs."""
        return JobList.from_dict(self._get("/v1/jobs", {"user": user, "status": status, "limit": limit}))


def _sse_events(stream: Any) -> Iterator[tuple]:
    """(event name, data) of a text/event-stream, read line by line."""
    name = "message"
    data: List[str] = []
    for raw in stream:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data or name != "message":
                yield name, "\n".join(data)
            name, data = "message", []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if key == "event":
            name = value
        elif key == "data":
            data.append(value)
    if data:
        yield name, "\n".join(data)
