"""engram_client: a synchronous Python client of engram's REST API (``engram serve``).

    from engram_client import EngramClient, EngramError

    client = EngramClient("http://127.0.0.1:8420", api_key="...")   # or $ENGRAM_URL, $ENGRAM_API_KEY
    client.add_turn("alice", "I moved to Lisbon in May.", "Nice!")
    context = client.retrieve("alice", "where does the user live?")

Standard library only. See clients/python/README.md and docs/openapi.yaml.
"""

from ._transport import RetryPolicy, parse_retry_after
from .client import DEFAULT_URL, UNSET, VERSION, EngramClient, new_idempotency_key
from .errors import CONNECTION_ERROR, HTTP_ERROR, INVALID_RESPONSE, TIMEOUT, EngramError
from .models import (
    AddTurnsResult,
    AdmittedTurn,
    ChatEvent,
    ChatReply,
    DeleteAllResult,
    DeleteResult,
    Fact,
    ForgetResult,
    HealthItem,
    HealthReport,
    HealthScope,
    ImportedScope,
    ImportResult,
    Job,
    JobList,
    MaintainReport,
    MemoryAddResult,
    MemoryEvent,
    MemoryHistory,
    MemoryHistoryEvent,
    MemoryItem,
    MemoryPage,
    MemorySearchResult,
    Model,
    Profile,
    ProfileSlot,
    PurgeResult,
    RetrievedItem,
    Retrieval,
    Stats,
    Turn,
    TurnPage,
    VersionInfo,
)

__version__ = VERSION

__all__ = [
    "EngramClient",
    "EngramError",
    "RetryPolicy",
    "parse_retry_after",
    "new_idempotency_key",
    "DEFAULT_URL",
    "UNSET",
    "CONNECTION_ERROR",
    "TIMEOUT",
    "INVALID_RESPONSE",
    "HTTP_ERROR",
    "Model",
    "VersionInfo",
    "AdmittedTurn",
    "AddTurnsResult",
    "Turn",
    "TurnPage",
    "RetrievedItem",
    "Retrieval",
    "ChatReply",
    "ChatEvent",
    "MemoryEvent",
    "MemoryAddResult",
    "MemoryItem",
    "MemorySearchResult",
    "MemoryPage",
    "DeleteResult",
    "DeleteAllResult",
    "PurgeResult",
    "MemoryHistoryEvent",
    "MemoryHistory",
    "Fact",
    "ProfileSlot",
    "Profile",
    "Stats",
    "HealthItem",
    "HealthScope",
    "HealthReport",
    "Job",
    "JobList",
    "MaintainReport",
    "ForgetResult",
    "ImportedScope",
    "ImportResult",
]
