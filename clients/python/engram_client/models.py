"""Typed results of the engram REST API (docs/openapi.yaml).

Every result is a dataclass built from the response's JSON object. Fields the API
marks optional are None when absent; fields a newer server adds are not lost: the
whole object stays in ``raw`` (and ``result["key"]`` reads it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, ClassVar, Dict, Iterator, List, Mapping, Optional, Type, TypeVar

T = TypeVar("T", bound="Model")


@dataclass
class Model:
    """Base of the typed results: ``raw`` is the JSON object the result was built from."""

    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # Converters of nested fields (name -> function of the JSON value).
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {}

    @classmethod
    def from_dict(cls: Type[T], data: Mapping[str, Any]) -> T:
        if not isinstance(data, Mapping):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        kwargs: Dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "raw" or f.name not in data:
                continue
            value = data[f.name]
            convert = cls._nested.get(f.name)
            if convert is not None and value is not None:
                value = convert(value)
            kwargs[f.name] = value
        return cls(raw=dict(data), **kwargs)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object as the server sent it."""
        return dict(self.raw)


def _list_of(cls: Type[T]) -> Callable[[Any], List[T]]:
    return lambda items: [cls.from_dict(i) for i in items]


# --- service ---------------------------------------------------------------------------


@dataclass
class VersionInfo(Model):
    version: str = ""
    api: str = ""
    embedder: Optional[str] = None
    maintainer: Optional[str] = None


# --- turns ------------------------------------------------------------------------------


@dataclass
class AdmittedTurn(Model):
    turn_id: int = 0
    seq: int = 0
    promotion_pending: bool = False


@dataclass
class AddTurnsResult(Model):
    user: str = ""
    assistant: str = ""
    admitted: List[AdmittedTurn] = field(default_factory=list)
    replayed: bool = False
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"admitted": _list_of(AdmittedTurn)}

    @property
    def turn_ids(self) -> List[int]:
        return [t.turn_id for t in self.admitted]


@dataclass
class Turn(Model):
    id: int = 0
    seq: int = 0
    user_text: str = ""
    assistant_text: str = ""
    event_time: str = ""
    ingest_time: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)
    source_ref: str = ""
    tier: str = ""
    page_id: Optional[int] = None
    user_name: Optional[str] = None
    assistant_name: Optional[str] = None
    user_source_ref: Optional[str] = None
    assistant_source_ref: Optional[str] = None


@dataclass
class TurnPage(Model):
    user: str = ""
    assistant: str = ""
    turns: List[Turn] = field(default_factory=list)
    next_after: Optional[int] = None
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"turns": _list_of(Turn)}

    def __iter__(self) -> Iterator[Turn]:
        return iter(self.turns)

    def __len__(self) -> int:
        return len(self.turns)


# --- retrieval and chat -----------------------------------------------------------------


@dataclass
class RetrievedItem(Model):
    kind: str = ""
    tier: str = ""
    id: int = 0
    version: int = 0
    score: float = 0.0
    tokens: int = 0
    text: str = ""
    turn_id: Optional[int] = None
    segment_id: Optional[int] = None
    event_time: Optional[str] = None
    source_ref: Optional[str] = None


@dataclass
class Retrieval(Model):
    query: str = ""
    budget: int = 0
    context_tokens: int = 0
    truncated: bool = False
    items: List[RetrievedItem] = field(default_factory=list)
    context: str = ""
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"items": _list_of(RetrievedItem)}


@dataclass
class ChatReply(Model):
    answer: str = ""
    turn_id: Optional[int] = None
    run_id: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0
    used: List[RetrievedItem] = field(default_factory=list)
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"used": _list_of(RetrievedItem)}


@dataclass
class ChatEvent:
    """One event of a streamed chat: ``delta`` (``text`` is a piece of the answer) or
    ``done`` (``reply`` is the whole ChatReply). An ``error`` event raises EngramError."""

    event: str
    text: Optional[str] = None
    reply: Optional[ChatReply] = None


# --- fact memory ------------------------------------------------------------------------


@dataclass
class MemoryEvent(Model):
    """One outcome of an add: ADD, UPDATE (of an existing memory) or NOOP."""

    id: str = ""
    memory: str = ""
    event: str = ""
    version: int = 0
    previous_memory: Optional[str] = None
    superseded_version: Optional[int] = None


@dataclass
class MemoryAddResult(Model):
    results: List[MemoryEvent] = field(default_factory=list)
    degraded: bool = False
    model_calls: int = 0
    replayed: bool = False
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"results": _list_of(MemoryEvent)}

    @property
    def ids(self) -> List[str]:
        return [r.id for r in self.results]


@dataclass
class MemoryItem(Model):
    id: str = ""
    memory: str = ""
    hash: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""
    event_time: str = ""
    version: int = 0
    kind: str = ""
    status: str = ""
    expired: bool = False
    degraded: bool = False
    user_id: Optional[str] = None
    agent_id: Optional[str] = None
    run_id: Optional[str] = None
    actor_id: Optional[str] = None
    role: Optional[str] = None
    attributed_to: Optional[str] = None
    expiration_date: Optional[str] = None
    score: Optional[float] = None
    score_details: Optional[Dict[str, Any]] = None


@dataclass
class MemorySearchResult(Model):
    results: List[MemoryItem] = field(default_factory=list)
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"results": _list_of(MemoryItem)}

    def __iter__(self) -> Iterator[MemoryItem]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


@dataclass
class MemoryPage(Model):
    results: List[MemoryItem] = field(default_factory=list)
    next_cursor: Optional[str] = None
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"results": _list_of(MemoryItem)}

    def __iter__(self) -> Iterator[MemoryItem]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


@dataclass
class DeleteResult(Model):
    id: str = ""
    deleted: bool = False


@dataclass
class DeleteAllResult(Model):
    deleted: int = 0


@dataclass
class PurgeResult(Model):
    memories: int = 0
    versions: int = 0


@dataclass
class MemoryHistoryEvent(Model):
    id: str = ""
    version: int = 0
    event: str = ""
    old_memory: Optional[str] = None
    new_memory: Optional[str] = None
    actor: str = ""
    role: str = ""
    at: str = ""


@dataclass
class MemoryHistory(Model):
    id: str = ""
    results: List[MemoryHistoryEvent] = field(default_factory=list)
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"results": _list_of(MemoryHistoryEvent)}

    def __iter__(self) -> Iterator[MemoryHistoryEvent]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


# --- inspection -------------------------------------------------------------------------


@dataclass
class Fact(Model):
    id: int = 0
    version: int = 0
    kind: str = ""
    text: str = ""
    source_pages: List[int] = field(default_factory=list)
    event_time: str = ""
    record_time: str = ""
    degraded: bool = False


@dataclass
class ProfileSlot(Model):
    dimension: str = ""
    value: str = ""
    evidence_pages: List[int] = field(default_factory=list)
    updated_at: str = ""


@dataclass
class Profile(Model):
    user: str = ""
    assistant: str = ""
    profile: List[ProfileSlot] = field(default_factory=list)
    profile_text: str = ""
    user_facts: List[Fact] = field(default_factory=list)
    assistant_facts: List[Fact] = field(default_factory=list)
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {
        "profile": _list_of(ProfileSlot),
        "user_facts": _list_of(Fact),
        "assistant_facts": _list_of(Fact),
    }


@dataclass
class Stats(Model):
    stm_turns: int = 0
    mtm_pages: int = 0
    mtm_segments: int = 0
    archived_pages: int = 0
    archived_segments: int = 0
    user_facts: int = 0
    assistant_facts: int = 0
    profile_slots: int = 0
    pending_jobs: int = 0
    failed_jobs: int = 0
    turns_admitted: int = 0
    degraded_items: int = 0
    scopes: int = 0
    tenant: str = ""
    user: Optional[str] = None
    assistant: Optional[str] = None


@dataclass
class HealthItem(Model):
    kind: str = ""
    id: int = 0
    tenant: str = ""
    user: str = ""
    assistant: str = ""
    state: str = ""
    reason: str = ""
    run_ids: List[str] = field(default_factory=list)
    degraded: bool = False
    since: Optional[str] = None


@dataclass
class HealthScope(Model):
    tenant: str = ""
    user: str = ""
    assistant: str = ""
    state: str = ""
    counts: Dict[str, int] = field(default_factory=dict)


@dataclass
class HealthReport(Model):
    overall: str = ""
    green: bool = False
    now: str = ""
    horizon_hours: float = 0.0
    items: int = 0
    counts: Dict[str, int] = field(default_factory=dict)
    degraded_items: int = 0
    degraded_share: float = 0.0
    receipts_read: int = 0
    scopes: List[HealthScope] = field(default_factory=list)
    findings_total: int = 0
    findings: List[HealthItem] = field(default_factory=list)
    oldest_waiting: Optional[HealthItem] = None
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {
        "scopes": _list_of(HealthScope),
        "findings": _list_of(HealthItem),
        "oldest_waiting": HealthItem.from_dict,
    }


@dataclass
class Job(Model):
    id: int = 0
    tenant: str = ""
    user: str = ""
    assistant: str = ""
    kind: str = ""
    status: str = ""
    attempts: int = 0
    last_error: str = ""
    lease_expires: Optional[str] = None
    created_at: str = ""
    updated_at: str = ""


@dataclass
class JobList(Model):
    jobs: List[Job] = field(default_factory=list)
    pending: int = 0
    failed: int = 0
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"jobs": _list_of(Job)}


# --- operations -------------------------------------------------------------------------


@dataclass
class MaintainReport(Model):
    promotions: int = 0
    pages_created: int = 0
    segments_created: int = 0
    segments_merged: int = 0
    segments_archived: int = 0
    consolidations: int = 0
    facts_added: int = 0
    profile_slots_updated: int = 0
    jobs_failed: int = 0
    model_calls: int = 0
    degraded: bool = False


@dataclass
class ForgetResult(Model):
    user: str = ""
    turns_erased: int = 0


@dataclass
class ImportedScope(Model):
    user: str = ""
    assistant: str = ""
    turns: int = 0
    source_utterances: int = 0
    replayed: bool = False


@dataclass
class ImportResult(Model):
    scopes: List[ImportedScope] = field(default_factory=list)
    turns: int = 0
    memories_added: int = 0
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {"scopes": _list_of(ImportedScope)}
