// Retrieval: candidates from lexical search (FTS5 bm25 over turns, segment
// summaries and facts) and vector similarity (pages, segments, facts);
// segment -> page two-stage ranking plus direct page hits; rank fusion; then
// context assembly under a token budget. Read-only: the store is only read,
// segment hits are reported to the caller's AccessLog.
#pragma once

#include <map>
#include <string>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "memory/jobs.hpp"
#include "memory/scope_store.hpp"
#include "models/embedder.hpp"
#include "retrieval/scope_index.hpp"

namespace engram::retrieval {

struct RetrievalInput {
  const memory::ScopeRow* scope = nullptr;
  const ScopeIndex* index = nullptr;
  std::string query;
  Vector query_embedding;
  RetrieveOptions options;
  TimeMs now = 0;
};

// REQUIRES: db is a connection used by this thread only.
Result<RetrievalResult> Retrieve(sql::Db* db, const RetrievalInput& in, memory::AccessLog* access);

}  // namespace engram::retrieval
