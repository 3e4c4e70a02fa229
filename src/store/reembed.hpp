// The reads and writes of `engram reembed` (engine/engine_reembed.cpp): the
// nullable shadow columns pages.embedding_next and facts.embedding_next that
// hold the new embedder's vectors while a migration runs, the batches that
// fill them, and the switch that makes them the vectors of the store.
//
// The shadow columns are added and dropped at run time (SQLite: BLOB, found
// through pragma_table_info; PostgreSQL: BYTEA, found in
// information_schema.columns of the current schema). Vectors are float32
// arrays stored as bytes, as everywhere in the store. The functions that name
// embedding_next require the column to exist (HasShadowColumn) unless said
// otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engram/result.hpp"
#include "store/db.hpp"

namespace engram::store {

// The tables whose rows carry a vector of the store's embedder.
enum class VectorTable { kPages, kFacts };
inline constexpr VectorTable kVectorTables[] = {VectorTable::kPages, VectorTable::kFacts};

// Whether the table has its embedding_next column now.
Result<bool> HasShadowColumn(sql::Db* db, VectorTable table);
// Adds embedding_next (NULL everywhere) to the tables that lack it.
// REQUIRES: inside a write transaction.
Status AddShadowColumns(sql::Db* db);
// Drops embedding_next (and the vectors in it) from the tables that have it.
// REQUIRES: inside a write transaction.
Status DropShadowColumns(sql::Db* db);

// Vectors of the migration written so far (rows with embedding_next; 0 for a
// table without the column) and rows with a vector in all.
struct ShadowProgress {
  std::int64_t done = 0;
  std::int64_t total = 0;
};
Result<ShadowProgress> CountShadowProgress(sql::Db* db);
// Rows of both tables whose embedding_next is still NULL.
Result<std::int64_t> CountMissingShadow(sql::Db* db);

// A page without embedding_next and the texts of its turn (the page's text is
// the rendered exchange, as promotion embeds it), with its tenant (the
// embedding cache is kept per tenant).
struct PageExchangeRow {
  std::int64_t id = 0;
  std::string user_name, user_text, assistant_name, assistant_text;
  std::string tenant;
};
// Up to `limit` pages without embedding_next whose id is above `after_id`, by id.
Result<std::vector<PageExchangeRow>> PagesWithoutShadow(sql::Db* db, std::int64_t after_id,
                                                        int limit);

// A fact without embedding_next, its text and its tenant.
struct FactTextRow {
  std::int64_t id = 0;
  std::string text;
  std::string tenant;
};
// Up to `limit` facts (any status) without embedding_next whose id is above
// `after_id`, by id.
Result<std::vector<FactTextRow>> FactsWithoutShadow(sql::Db* db, std::int64_t after_id, int limit);

// Writes a row's embedding_next where it is still NULL; returns the rows
// changed (0 when the row was erased meanwhile or already has one).
// REQUIRES: inside a write transaction.
Result<std::int64_t> WriteShadowVector(sql::Db* db, VectorTable table, std::int64_t id,
                                       const std::vector<float>& vector);

// embedding = embedding_next on every page and fact.
// REQUIRES: inside a write transaction, no NULL embedding_next.
Status CopyShadowVectors(sql::Db* db);

// Calls `sink` with every page's segment id and vector, in segment order
// (pages of one segment in a row); a failed sink stops the scan and is
// returned. The sink may write through the same connection (the segment
// updates below) but must not read pages.
using PageVectorSink =
    std::function<Status(std::int64_t segment_id, const std::vector<float>& embedding)>;
Status ScanPageVectorsBySegment(sql::Db* db, const PageVectorSink& sink);
// Sets a segment's centroid and vector sum; returns the rows changed (0 or 1).
// REQUIRES: inside a write transaction.
Result<std::int64_t> SetSegmentVectors(sql::Db* db, std::int64_t segment_id,
                                       const std::vector<float>& centroid,
                                       const std::vector<float>& sum);
// Sets centroid and sum of every segment without pages to `zero`; returns
// how many. REQUIRES: inside a write transaction.
Result<std::int64_t> ResetEmptySegmentVectors(sql::Db* db, const std::vector<float>& zero);

// Removes a meta key (meta values are read and written by store::GetMeta and
// store::SetMeta, store/schema.hpp). REQUIRES: inside a write transaction.
Status DeleteMeta(sql::Db* db, std::string_view key);

}  // namespace engram::store
