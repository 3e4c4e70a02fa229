#include "store/reembed.hpp"

namespace engram::store {

namespace {

const char* TableName(VectorTable t) { return t == VectorTable::kPages ? "pages" : "facts"; }

int Bytes(const std::vector<float>& v) { return static_cast<int>(v.size() * sizeof(float)); }

// One integer from a statement without parameters (0 when it gives no row).
Result<std::int64_t> CountOf(sql::Db* db, const std::string& sql) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(sql));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  const std::int64_t n = row ? st->Int(0) : 0;
  st->Reset();
  return n;
}

// Calls `each` with the statement at every row of its result; stops at the
// first failure (of a step or of `each`). The statement is reset either way.
template <typename Each>
Status ForEachRow(sql::Stmt* st, const Each& each) {
  Status status = Status::Ok();
  for (;;) {
    auto more = st->Step();
    if (!more.ok()) {
      status = more.status();
      break;
    }
    if (!*more) break;
    status = each(st);
    if (!status.ok()) break;
  }
  st->Reset();
  return status;
}

// Every row of a bound statement, read by `read`.
template <typename Row, typename Read>
Result<std::vector<Row>> CollectRows(sql::Stmt* st, const Read& read) {
  std::vector<Row> out;
  ENGRAM_RETURN_IF_ERROR(ForEachRow(st, [&](sql::Stmt* r) {
    out.push_back(read(r));
    return Status::Ok();
  }));
  return out;
}

}  // namespace

Result<bool> HasShadowColumn(sql::Db* db, VectorTable table) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->dialect() == sql::Dialect::kSqlite
          ? db->Prepare("SELECT count(*) FROM pragma_table_info(?1) WHERE name = 'embedding_next'")
          : db->Prepare("SELECT count(*) FROM information_schema.columns "
                        "WHERE table_schema = current_schema() AND table_name = ?1 "
                        "AND column_name = 'embedding_next'"));
  st->Bind(1, TableName(table));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  const bool has = row && st->Int(0) > 0;
  st->Reset();
  return has;
}

Status AddShadowColumns(sql::Db* db) {
  const char* type = db->dialect() == sql::Dialect::kSqlite ? "BLOB" : "BYTEA";
  for (VectorTable t : kVectorTables) {
    ENGRAM_ASSIGN_OR_RETURN(bool has, HasShadowColumn(db, t));
    if (!has) {
      ENGRAM_RETURN_IF_ERROR(db->Exec(std::string("ALTER TABLE ") + TableName(t) +
                                      " ADD COLUMN embedding_next " + type));
    }
  }
  return Status::Ok();
}

Status DropShadowColumns(sql::Db* db) {
  for (VectorTable t : kVectorTables) {
    ENGRAM_ASSIGN_OR_RETURN(bool has, HasShadowColumn(db, t));
    if (has)
      ENGRAM_RETURN_IF_ERROR(
          db->Exec(std::string("ALTER TABLE ") + TableName(t) + " DROP COLUMN embedding_next"));
  }
  return Status::Ok();
}

Result<ShadowProgress> CountShadowProgress(sql::Db* db) {
  ShadowProgress p;
  for (VectorTable t : kVectorTables) {
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t all,
                            CountOf(db, std::string("SELECT count(*) FROM ") + TableName(t)));
    p.total += all;
    ENGRAM_ASSIGN_OR_RETURN(bool has, HasShadowColumn(db, t));
    if (!has) continue;
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t done,
                            CountOf(db, std::string("SELECT count(*) FROM ") + TableName(t) +
                                            " WHERE embedding_next IS NOT NULL"));
    p.done += done;
  }
  return p;
}

Result<std::int64_t> CountMissingShadow(sql::Db* db) {
  return CountOf(db,
                 "SELECT (SELECT count(*) FROM pages WHERE embedding_next IS NULL) + "
                 "(SELECT count(*) FROM facts WHERE embedding_next IS NULL)");
}

Result<std::vector<PageExchangeRow>> PagesWithoutShadow(sql::Db* db, std::int64_t after_id,
                                                        int limit) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(
          "SELECT p.id, t.user_name, t.user_text, t.assistant_name, t.assistant_text, p.tenant FROM pages p "
          "JOIN turns t ON t.id = p.turn_id AND t.tenant = p.tenant WHERE p.embedding_next IS NULL AND p.id > ? "
          "ORDER BY p.id LIMIT ?"));
  st->Bind(1, after_id).Bind(2, limit);
  return CollectRows<PageExchangeRow>(st, [](sql::Stmt* r) {
    return PageExchangeRow{r->Int(0), r->Text(1), r->Text(2), r->Text(3), r->Text(4), r->Text(5)};
  });
}

Result<std::vector<FactTextRow>> FactsWithoutShadow(sql::Db* db, std::int64_t after_id, int limit) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT id, text, tenant FROM facts "
                                      "WHERE embedding_next IS NULL AND id > ? ORDER BY id LIMIT ?"));
  st->Bind(1, after_id).Bind(2, limit);
  return CollectRows<FactTextRow>(st, [](sql::Stmt* r) {
    return FactTextRow{r->Int(0), r->Text(1), r->Text(2)};
  });
}

Result<std::int64_t> WriteShadowVector(sql::Db* db, VectorTable table, std::int64_t id,
                                       const std::vector<float>& vector) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * up,
      db->Prepare(std::string("UPDATE ") + TableName(table) +
                  " SET embedding_next = ? WHERE id = ? AND embedding_next IS NULL"));
  ENGRAM_RETURN_IF_ERROR(up->BindBlob(1, vector.data(), Bytes(vector)).Bind(2, id).Run());
  return static_cast<std::int64_t>(db->Changes());
}

Status CopyShadowVectors(sql::Db* db) {
  ENGRAM_RETURN_IF_ERROR(db->Exec("UPDATE pages SET embedding = embedding_next"));
  return db->Exec("UPDATE facts SET embedding = embedding_next");
}

Status ScanPageVectorsBySegment(sql::Db* db, const PageVectorSink& sink) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare("SELECT segment_id, embedding FROM pages ORDER BY segment_id"));
  return ForEachRow(st, [&](sql::Stmt* r) { return sink(r->Int(0), r->Floats(1)); });
}

Result<std::int64_t> SetSegmentVectors(sql::Db* db, std::int64_t segment_id,
                                       const std::vector<float>& centroid,
                                       const std::vector<float>& sum) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * up, db->Prepare("UPDATE segments SET embedding = ?, emb_sum = ? WHERE id = ?"));
  ENGRAM_RETURN_IF_ERROR(up->BindBlob(1, centroid.data(), Bytes(centroid))
                             .BindBlob(2, sum.data(), Bytes(sum))
                             .Bind(3, segment_id)
                             .Run());
  return static_cast<std::int64_t>(db->Changes());
}

Result<std::int64_t> ResetEmptySegmentVectors(sql::Db* db, const std::vector<float>& zero) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * up,
                          db->Prepare("UPDATE segments SET embedding = ?1, emb_sum = ?1 "
                                      "WHERE id NOT IN (SELECT segment_id FROM pages)"));
  ENGRAM_RETURN_IF_ERROR(up->BindBlob(1, zero.data(), Bytes(zero)).Run());
  return static_cast<std::int64_t>(db->Changes());
}

Status DeleteMeta(sql::Db* db, std::string_view key) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * del, db->Prepare("DELETE FROM meta WHERE key = ?"));
  return del->Bind(1, key).Run();
}

}  // namespace engram::store
