#include "retrieval/scope_index.hpp"

namespace engram::retrieval {

std::size_t ScopeIndex::MemoryBytes() const {
  return pages.MemoryBytes() + segments.MemoryBytes() + user_facts.MemoryBytes() +
         assistant_facts.MemoryBytes() + page_refs.size() * 64 + turn_page.size() * 32;
}

Result<std::shared_ptr<const ScopeIndex>> LoadScopeIndex(sql::Db* db, std::int64_t scope_id,
                                                         std::int64_t data_version) {
  auto idx = std::make_shared<ScopeIndex>();
  idx->scope_id = scope_id;
  idx->data_version = data_version;
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * p,
      db->Prepare("SELECT id, turn_id, segment_id, prev_page, next_page, embedding FROM pages "
                  "WHERE scope_id = ? ORDER BY id"));
  p->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, p->Step());
    if (!row) break;
    std::int64_t id = p->Int(0);
    PageRef ref{p->Int(1), p->Int(2), p->IsNull(3) ? 0 : p->Int(3), p->IsNull(4) ? 0 : p->Int(4)};
    idx->pages.Add(id, p->Floats(5));
    idx->page_refs[id] = ref;
    idx->turn_page[ref.turn_id] = id;
  }
  p->Reset();
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * s,
      db->Prepare("SELECT id, embedding, archived_at IS NOT NULL FROM segments WHERE scope_id = ? "
                  "ORDER BY id"));
  s->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    idx->segments.Add(s->Int(0), s->Floats(1));
    idx->segment_archived[s->Int(0)] = s->Int(2) != 0;
  }
  s->Reset();
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * f,
      db->Prepare("SELECT id, kind, embedding FROM facts WHERE scope_id = ? AND status = 'live' "
                  "ORDER BY id"));
  f->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, f->Step());
    if (!row) break;
    (f->Text(1) == "user" ? idx->user_facts : idx->assistant_facts).Add(f->Int(0), f->Floats(2));
  }
  f->Reset();
  return std::shared_ptr<const ScopeIndex>(std::move(idx));
}

}  // namespace engram::retrieval
