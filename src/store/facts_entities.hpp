// The entities repository of the fact store: entities named by facts (one
// row per scope row and normalised name), their links to facts rows
// (fact_entities), and the typed links between memories that extraction
// proposes (fact_links). Names arrive normalised (memory/facts/fact_text.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"
#include "store/facts_filter_sql.hpp"

namespace engram::store {

// An entity a fact mentions.
struct FactEntity {
  std::string name;  // normalised, not empty
  std::string type;  // "name", "quoted", "identifier" or the model's type
};

// Links fact_id to each entity of the scope row (creating the entities that
// are new; an existing entity keeps its type), as "mentions". REQUIRES:
// inside a write transaction.
Status LinkFactEntities(sql::Db* db, std::int64_t scope_id, std::int64_t fact_id,
                        const std::vector<FactEntity>& entities);

// Gives to_fact_id the entity links of from_fact_id (a new version with the
// same text). REQUIRES: inside a write transaction.
Status CopyFactEntities(sql::Db* db, std::int64_t from_fact_id, std::int64_t to_fact_id);

// A facts row linked to an entity with one of the names looked up.
struct EntityMatch {
  std::int64_t fact_id = 0;
  std::string name;
};
// Up to `limit` links from an entity named in `names` to a row the selector
// sees (any order). Empty when `names` is.
Result<std::vector<EntityMatch>> FindEntityMatches(sql::Db* db, const FactSelector& selector,
                                                   const std::vector<std::string>& names, int limit);

// Records the edge (from_memory, relation, to_memory) in the scope row
// unless it exists. REQUIRES: inside a write transaction.
Status InsertFactLink(sql::Db* db, std::int64_t scope_id, const std::string& from_memory,
                      const std::string& to_memory, const std::string& relation, TimeMs now);

}  // namespace engram::store
