// engram public API: the fact memory (docs/MEMORY_API.md). Mem0-compatible
// add / search / get / list / update / delete / delete_all / purge / history
// on versioned, scoped facts. The long-term facts written by consolidation
// (kinds "user" and "assistant") and the memories added here (kinds "memory"
// and "procedural") are one store: the operations see both.
//
// Ids: every memory has a stable public id ("m_" + 16 hex digits) kept by all
// its versions. Times are milliseconds since the Unix epoch, UTC. Metadata
// and filters are JSON text. Only std types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/types.hpp"

namespace engram {

// Whose memories: a tenant, then at least one of user, agent and run ("" =
// none). Operations see EXACTLY this scope: {user: "u"} does not see the
// memories of {user: "u", run: "r"}. include_narrower = true also sees the
// narrower scopes (other agent and run ids under the same user); the user id
// is never widened, so one user's memories are never visible to another user
// or to a user-less scope. add() refuses include_narrower.
struct MemoryScope {
  std::string tenant = "default";
  std::string user;
  std::string agent;  // the assistant / agent id
  std::string run;
  bool include_narrower = false;
};

// One message offered to add(). Roles: "user", "assistant", "system", "tool".
struct MemoryMessage {
  std::string role = "user";
  std::string content;
  std::string name;  // the actor (speaker name); "" = none
};

struct MemoryAddOptions {
  std::string metadata;         // JSON object text ("" = {}); identity keys refused
  // true: facts are extracted (configured LLM, else the built-in extractive
  // engine, marked degraded); false: each non-system message is stored
  // verbatim with its role and actor.
  bool infer = true;
  // Procedural memory (agent scope required, LLM only): the messages are an
  // agent's execution history, summarised into ONE procedural fact that keeps
  // every action and its output.
  bool procedural = false;
  std::string idempotency_key;  // a retry with the same key returns the first outcome
  // Only a retry may pass (AdmitOptions::replay_only): a key seen before
  // returns the first outcome; anything else is ResourceExhausted.
  bool replay_only = false;
  std::optional<TimeMs> expires_at;
  std::optional<TimeMs> event_time;  // when it was observed (now when absent)
  std::string actor;                 // who performs the operation (history); "" = "api"
  // With infer = false: the text was extracted by the built-in engine before
  // (an import restoring an export), so the memory keeps its degraded mark.
  bool degraded = false;
  // With infer = false and one message: an import restoring an export. The
  // memory keeps its own kind ("memory" or "procedural"), role ("" for an
  // extracted memory, else user, assistant or tool) and attribution ("",
  // "user" or "assistant") instead of taking them from the message's role.
  struct Restored {
    std::string kind = "memory";
    std::string role;
    std::string attributed_to;
  };
  std::optional<Restored> restored;
};

// One outcome of add(): "ADD" (new memory), "UPDATE" (a new version of an
// existing memory superseded the old one: previous_memory / superseded_version)
// or "NOOP" (an exact or near duplicate of a live memory, whose id is given).
struct MemoryEventResult {
  std::string id;
  std::string memory;
  std::string event;
  std::int64_t version = 1;
  std::string previous_memory;          // UPDATE only
  std::int64_t superseded_version = 0;  // UPDATE only
};

struct MemoryAddResult {
  std::vector<MemoryEventResult> results;
  bool degraded = false;   // extracted by the built-in engine
  int model_calls = 0;
  bool replayed = false;   // the idempotency key was seen: first outcome returned
  // Built-in inference only: what was not turned into a fact, in plain words
  // (statements kept verbatim, or why nothing was stored); "" otherwise.
  std::string note;
};

// Components of a search score (explain).
struct MemoryScoreDetails {
  double vector = 0;    // cosine similarity of query and memory, clamped to [0, 1]
  double semantic = 0;  // built-in embedder only: WordNet word vectors (the memory's words the query lacks), [0, 1]
  double lexical = 0;   // share of the query's index terms the memory contains, [0, 1]
  double bm25 = 0;      // raw FTS5 bm25 (higher is better; 0 when not a lexical candidate)
  double entity = 0;    // share of the query's entities the memory is linked to
  bool from_vector = false, from_lexical = false, from_entity = false, from_semantic = false;  // candidate sources
  std::vector<std::string> entities;  // matched entity names
};

struct MemoryItem {
  std::string id;
  std::string memory;         // the text ("" once purged)
  std::string hash;           // 16 hex digits of the normalised-text hash
  std::string metadata;       // JSON object text
  std::string tenant, user, agent, run;
  std::string kind;           // "user", "assistant", "memory", "procedural"
  std::string role, actor, attributed_to;
  std::string status;         // "live", "deleted", "purged" (get/history only)
  std::int64_t version = 1;
  TimeMs created_at = 0, updated_at = 0, event_time = 0;
  std::optional<TimeMs> expires_at;
  bool expired = false;
  bool degraded = false;
  double score = 0;           // search only: calibrated, in [0, 1]
  std::optional<MemoryScoreDetails> score_details;  // search with explain
};

// Filters are JSON text (Mem0 syntax), evaluated inside the query:
//   {"category": "food"}                         equality (metadata key)
//   {"rating": {"gte": 4}}                       eq ne gt gte lt lte in nin contains icontains
//   {"AND": [f, f]}, {"OR": [f, f]}, {"NOT": f}  nesting
// Keys: built-in fields kind, role, actor, attributed_to, created_at,
// updated_at, event_time, expires_at, version (times compare as ISO-8601 text
// or epoch ms), "metadata.<key>" or a bare key for metadata. Identity keys
// (user_id, agent_id, run_id, tenant, ...) are refused: the scope decides.
struct MemorySearchOptions {
  int top_k = 20;            // 1..1000
  double threshold = 0.0;    // minimum returned score, in [0, 1]
  std::string filters;
  bool include_expired = false;
  bool explain = false;
};

struct MemoryListOptions {
  std::string filters;
  std::string cursor;        // from the previous page's next_cursor ("" = first page)
  int limit = 100;           // 1..1000
  bool include_expired = false;
};

// Newest first (created_at, then id); next_cursor is "" on the last page.
struct MemoryPage {
  std::vector<MemoryItem> items;
  std::string next_cursor;
};

// Fields left empty are kept. A text change makes a new version.
struct MemoryUpdate {
  std::optional<std::string> text;
  std::optional<std::string> metadata;  // replaces the metadata (JSON object text)
  std::optional<TimeMs> expires_at;
  bool clear_expiry = false;
  std::string actor;
};

// One change of a batch (Engine::ChangeMemories): `update` applied to the
// memory, or the memory deleted (`remove`; the actor is update.actor).
struct MemoryChange {
  MemoryScope scope;
  std::string id;
  MemoryUpdate update;
  bool remove = false;
};

struct MemoryHistoryEvent {
  std::string id;
  std::int64_t version = 1;
  std::string event;         // ADD, UPDATE, SUPERSEDE, DELETE, PURGE
  std::optional<std::string> old_text, new_text;  // absent when none or purged
  std::string actor, role;
  TimeMs at = 0;
};

// A user, agent or run id that holds live memories (tenant-wide listing).
struct MemoryEntity {
  std::string type;  // "user", "agent" or "run"
  std::string name;
  std::int64_t memories = 0;
  TimeMs first_at = 0, last_at = 0;  // oldest creation, newest update of its memories
};

struct MemoryPurgeResult {
  std::int64_t memories = 0;  // memories erased
  std::int64_t rows = 0;      // versions erased
};

}  // namespace engram
