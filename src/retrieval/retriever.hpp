// Retrieval: every message (each side of a paged or STM exchange) ranked by
// in-memory BM25F with neighbour evidence, fused with vector similarity and
// segment evidence (see ranking.hpp); facts by FTS5 bm25 + vector similarity;
// then context assembly under a token budget. Read-only: the store is only read,
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
#include "retrieval/stm_cache.hpp"

namespace engram::retrieval {

struct RetrievalInput {
  const memory::ScopeRow* scope = nullptr;
  const ScopeIndex* index = nullptr;
  std::string query;
  Vector query_embedding;
  RetrieveOptions options;
  TimeMs now = 0;
  // Optional: embeds STM turns on the fly so that they rank like pages (whose
  // vectors are stored); without it STM turns rank by lexical evidence only.
  Embedder* embedder = nullptr;
  // Optional: the indexed STM turns of earlier retrievals (see stm_cache.hpp).
  StmCache* stm_cache = nullptr;
};

// REQUIRES: db is a connection used by this thread only.
Result<RetrievalResult> Retrieve(sql::Db* db, const RetrievalInput& in, memory::AccessLog* access);

}  // namespace engram::retrieval
