// An immutable in-memory snapshot of one scope's vectors (pages, segments,
// facts), keyed by the scope's data_version so readers share it until the
// next commit changes the scope.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "engram/result.hpp"
#include "index/flat_index.hpp"
#include "store/sqlite.hpp"

namespace engram::retrieval {

struct PageRef {
  std::int64_t turn_id = 0;
  std::int64_t segment_id = 0;
  std::int64_t prev_page = 0;
  std::int64_t next_page = 0;
};

struct ScopeIndex {
  std::int64_t scope_id = 0;
  std::int64_t data_version = -1;
  FlatIndex pages;
  std::unordered_map<std::int64_t, PageRef> page_refs;       // page id -> refs
  std::unordered_map<std::int64_t, std::int64_t> turn_page;  // turn id -> page id
  FlatIndex segments;                                         // live and archived
  std::unordered_map<std::int64_t, bool> segment_archived;
  FlatIndex user_facts;
  FlatIndex assistant_facts;

  std::size_t MemoryBytes() const;
};

// Loads the snapshot of a scope at its current data_version.
Result<std::shared_ptr<const ScopeIndex>> LoadScopeIndex(sql::Db* db, std::int64_t scope_id,
                                                         std::int64_t data_version);

}  // namespace engram::retrieval
