#include "memory/facts/fact_store.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "core/text.hpp"
#include "lineage/receipts.hpp"
#include "memory/facts/fact_sql.hpp"
#include "memory/facts/fact_text.hpp"
#include "memory/scope_store.hpp"
#include "store/facts_entities.hpp"
#include "store/facts_fts.hpp"
#include "store/facts_history.hpp"
#include "store/fulltext.hpp"

namespace engram::memory::facts {

namespace {

store::FactIds IdsOf(const WriteContext& c) { return store::FactIds{c.ids.user, c.ids.agent, c.ids.run}; }

// Marks the snapshots that read the written row as changed (FactReaders).
Status BumpReaders(const WriteContext& c) {
  ENGRAM_ASSIGN_OR_RETURN(std::vector<std::int64_t> readers, FactReaders(c.db, c.scope_id, c.row_scope));
  for (std::int64_t id : readers) ENGRAM_RETURN_IF_ERROR(BumpDataVersion(c.db, id));
  return Status::Ok();
}

// The receipt of one fact transition (content-free: ids, versions, tiers).
Status WriteReceipt(const WriteContext& c, std::int64_t fact_id, std::int64_t version, bool degraded,
                    const char* from_tier = nullptr, const char* to_tier = "lpm") {
  lineage::Receipt r;
  r.run_id = c.op_id;
  r.tenant = c.row_scope.tenant;
  r.user_scope = c.row_scope.user;
  r.assistant_scope = c.row_scope.assistant;
  r.memory_kind = "fact";
  r.memory_id = fact_id;
  r.version = version;
  r.source_version = c.source_version;
  r.from_tier = from_tier ? from_tier : c.from_tier;
  r.to_tier = to_tier;
  r.status = degraded ? "degraded" : "committed";
  r.at_utc = c.now;
  r.outcome_receipt = "facts.id=" + std::to_string(fact_id);
  return lineage::Write(c.db, r);
}

Status History(const WriteContext& c, const std::string& memory_id, std::int64_t fact_id,
               std::int64_t version, const char* event, const std::string* old_text,
               const std::string* new_text, const std::string& role) {
  store::FactHistoryRow h;
  h.scope_id = c.scope_id;
  h.memory_id = memory_id;
  h.fact_id = fact_id;
  h.version = version;
  h.event = event;
  if (old_text) h.old_text = *old_text;
  if (new_text) h.new_text = *new_text;
  h.actor = c.actor;
  h.role = role;
  h.at = c.now;
  h.op_id = c.op_id;
  return store::InsertFactHistory(c.db, h);
}

Status IndexText(const WriteContext& c, std::int64_t fact_id, const std::string& text) {
  return store::IndexText(c.db, store::FullText::kFacts, fact_id, c.scope_id, LexicalDocument(text));
}

Status LinkEntities(const WriteContext& c, std::int64_t fact_id, const std::vector<EntityRef>& refs) {
  std::vector<store::FactEntity> entities;
  for (const auto& e : refs) {
    std::string name = NormalizeEntity(e.name);
    if (!name.empty()) entities.push_back(store::FactEntity{std::move(name), e.type});
  }
  return store::LinkFactEntities(c.db, c.scope_id, fact_id, entities);
}

// The live row of exactly ctx.ids with this hash, if any.
Result<std::optional<FactRow>> LiveByHash(const WriteContext& c, std::uint64_t hash) {
  return store::FindLiveFactByHash(c.db, c.scope_id, IdsOf(c), hash, c.now);
}

void RecordAdd(const WriteContext& c, std::int64_t id, const std::string& memory_id,
               std::optional<TimeMs> expires_at, const Vector& emb, const std::string& text) {
  if (!c.changes) return;
  auto a = std::make_shared<AddedFactVec>();
  a->row = FactVecRow{id, memory_id, expires_at ? *expires_at : kNoExpiry};
  a->identity = FactIdentity{c.ids.user, c.ids.agent, c.ids.run};
  a->embedding = emb;
  if (c.vectors && c.vectors->words) {
    // Its meaning: "User likes jazz" holds no word "user"; "Raspberry Pi" is one name.
    const std::string meant = c.vectors->words->Meant(text);
    a->semantic = wordvec::Quantize(c.vectors->words->TextVector(meant));
    a->terms = DistinctTerms(text);
    a->known = c.vectors->words->KnownWords(meant == text ? a->terms : DistinctTerms(meant));
    a->shape = TextShape(text);
  }
  c.changes->added.push_back(std::move(a));
}

void RecordRemove(const WriteContext& c, std::int64_t id) {
  if (c.changes) c.changes->removed.push_back(id);
}

// Paraphrase candidates (SameShape): rows of the new text's shape whose
// word-vector means are closer than this to its own (a synonym for a word
// moves the mean by little: 0.73-1.0 for "sofa"/"couch", "kids"/"children",
// "lawyer"/"attorney"; about 0.2 between unrelated texts), at most this many.
// The check itself (SameInOtherWords, as ParaphraseCheck) is exact.
constexpr float kParaphraseFloor = 0.5f;
constexpr std::size_t kParaphraseCandidates = 8;
// Rows whose embedding reaches the near-duplicate cosine that are read when
// the nearest of them does not say the same as the new text (SayTheSame).
constexpr std::size_t kNearCandidates = 4;

// The live memory a new fact duplicates: its id, text and version (id ""
// when none; version 0 when the scan that found it does not read versions).
struct Duplicate {
  std::string id, text;
  std::int64_t version = 0;
};

// The unexpired live row of exactly ctx.ids that duplicates the new text:
// its embedding reaches the near-duplicate cosine and it says the same
// (SayTheSame: an embedding, above all a bag of hashed words, puts "I am not
// allergic to peanuts" next to "I am allergic to peanuts", and "Call me
// after lunch" next to "Call me before lunch"), or (ctx.wordnet set) it says
// the same in other words.
// Candidates from the snapshot plus this operation's own changes (the
// nearest row by embedding; the rows of the text's shape), their texts read
// from the store; else from a scan of the scope's rows.
Result<Duplicate> NearDuplicate(const WriteContext& c, const Vector& emb, std::string_view text) {
  const wordnet::WordNet* wn = c.wordnet;
  const auto threshold = static_cast<float>(c.near_duplicate);
  if (c.vectors && c.vectors->scope_id == c.scope_id) {
    const FactIdentity identity{c.ids.user, c.ids.agent, c.ids.run};
    auto best = NearestAbove(*c.vectors, identity, emb, threshold, c.now, c.changes);
    std::vector<std::int64_t> alike;  // (paraphrase candidates)
    if (wn && c.vectors->words) {
      if (const std::uint64_t shape = TextShape(text); shape != 0) {
        for (const auto& [id, score] : SameShape(*c.vectors, identity, shape, c.vectors->words->TextVector(text),
                                                 kParaphraseFloor, kParaphraseCandidates, c.now, c.changes)) {
          alike.push_back(id);
        }
      }
    }
    if (!best && alike.empty()) return Duplicate{};
    std::vector<std::int64_t> ids = alike;
    if (best) ids.push_back(best->first);
    // Visible rows only: a row this operation deleted is not read.
    const store::FactSelector visible = Selector(c.ids, store::FactStates::kVisible, c.now);
    ENGRAM_ASSIGN_OR_RETURN(auto rows, store::FetchFactRows(c.db, visible, ids));
    auto row_of = [&](std::int64_t id) -> const FactRow* {
      for (const auto& r : rows) {
        if (r.id == id) return &r;
      }
      return nullptr;
    };
    if (best) {
      if (const FactRow* r = row_of(best->first); r && SayTheSame(text, r->item.memory)) {
        return Duplicate{r->item.id, r->item.memory, r->item.version};
      }
      // The nearest says otherwise: another row above the cosine may not (rare: read them).
      std::vector<std::int64_t> more;
      for (const auto& [id, score] : TopVectors(*c.vectors, IdentityMatch{identity, false}, emb, kNearCandidates,
                                                c.now, false, std::nextafter(threshold, 0.0f), c.changes)) {
        if (score >= threshold && id != best->first) more.push_back(id);
      }
      if (!more.empty()) {
        ENGRAM_ASSIGN_OR_RETURN(auto others, store::FetchFactRows(c.db, visible, more));
        for (const std::int64_t id : more) {  // nearest first
          for (const auto& r : others) {
            if (r.id == id && SayTheSame(text, r.item.memory)) {
              return Duplicate{r.item.id, r.item.memory, r.item.version};
            }
          }
        }
      }
    }
    if (alike.empty()) return Duplicate{};
    const ParaphraseCheck paraphrase(text, wn);
    for (const std::int64_t id : alike) {
      if (const FactRow* r = row_of(id); r && paraphrase.Matches(r->item.memory)) {
        return Duplicate{r->item.id, r->item.memory, r->item.version};
      }
    }
    return Duplicate{};
  }
  const ParaphraseCheck paraphrase(text, wn);  // (matches nothing without WordNet)
  Duplicate found;
  ENGRAM_RETURN_IF_ERROR(store::ScanUnexpiredFactVectors(
      c.db, c.scope_id, IdsOf(c), c.now, [&](store::FactVectorRow& row) {
        const bool close = !emb.empty() && row.embedding.size() == emb.size() && Dot(row.embedding, emb) >= threshold;
        if ((close && SayTheSame(text, row.text)) || paraphrase.Matches(row.text)) {
          found = Duplicate{row.memory_id, row.text, 0};
          return false;
        }
        return true;
      }));
  return found;
}

}  // namespace

Status ValidateMemoryScope(const MemoryScope& s, bool for_write) {
  if (s.tenant.empty()) return Status::InvalidArgument("tenant: must not be empty");
  ENGRAM_RETURN_IF_ERROR(ValidateIdText(s.tenant, "tenant"));
  ENGRAM_RETURN_IF_ERROR(ValidateIdText(s.user, "user"));
  ENGRAM_RETURN_IF_ERROR(ValidateIdText(s.agent, "agent"));
  ENGRAM_RETURN_IF_ERROR(ValidateIdText(s.run, "run"));
  ENGRAM_RETURN_IF_ERROR(RejectReservedId(s.user, "user"));
  ENGRAM_RETURN_IF_ERROR(RejectReservedId(s.agent, "agent"));
  if (s.user.empty() && s.agent.empty() && s.run.empty()) {
    return Status::InvalidArgument("scope: at least one of user, agent and run is required");
  }
  if (for_write && s.include_narrower) {
    return Status::InvalidArgument("include_narrower: writes go to exactly one scope");
  }
  return Status::Ok();
}

Scope RowScope(const MemoryScope& s) {
  return Scope{s.tenant, s.user.empty() ? kNoId : s.user, s.agent.empty() ? kNoId : s.agent};
}

Result<std::int64_t> UserRowOf(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(ScopeRow row, LoadScope(db, scope_id));
  if (row.scope.user == kNoId || row.scope.assistant == kNoId) return std::int64_t{0};
  ENGRAM_ASSIGN_OR_RETURN(auto user, FindScope(db, Scope{row.scope.tenant, row.scope.user, kNoId}));
  return user ? user->id : std::int64_t{0};
}

Result<std::optional<ScopeRow>> FactSectionsRow(sql::Db* db, const Scope& scope) {
  ENGRAM_ASSIGN_OR_RETURN(auto row, FindScope(db, scope));
  if (row || scope.user == kNoId) return row;
  return FindScope(db, Scope{scope.tenant, scope.user, kNoId});
}

Result<std::vector<std::int64_t>> FactReaders(sql::Db* db, std::int64_t scope_id, const Scope& row_scope) {
  if (row_scope.user == kNoId || row_scope.assistant != kNoId) return std::vector<std::int64_t>{scope_id};
  return store::UserScopeIds(db, row_scope.tenant, row_scope.user);
}

std::string NewMemoryId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[19];
  std::snprintf(buf, sizeof buf, "m_%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

Result<WriteOutcome> InsertFact(const WriteContext& c, const NewFact& f) {
  const std::uint64_t hash = text::SignedContentHash(f.text);
  ENGRAM_ASSIGN_OR_RETURN(auto same, LiveByHash(c, hash));
  if (same) {
    if (!same->item.expired) return WriteOutcome{"NOOP", same->item.id, same->id, same->item.version, same->item.memory, "", 0};
    VersionChange renew;  // an expired duplicate comes back as a new version
    renew.text = f.text;
    renew.embedding = &f.embedding;
    renew.metadata = f.metadata;
    renew.expires_at = f.expires_at;
    renew.entities = f.entities;
    renew.event = "SUPERSEDE";
    return NewVersion(c, *same, renew);
  }
  // (A NOOP names the memory it duplicates, with that memory's text, as an
  // exact duplicate does.)
  ENGRAM_ASSIGN_OR_RETURN(Duplicate near, NearDuplicate(c, f.embedding, f.text));
  if (!near.id.empty()) return WriteOutcome{"NOOP", near.id, 0, near.version, near.text, "", 0};

  store::NewFactRow row;
  row.scope_id = c.scope_id;
  row.memory_id = NewMemoryId();
  row.ids = IdsOf(c);
  row.kind = f.kind;
  row.role = f.role;
  row.actor = f.actor;
  row.attributed_to = f.attributed_to;
  row.text = f.text;
  row.norm_hash = hash;
  row.embedding = &f.embedding;
  row.metadata = f.metadata.empty() ? std::string("{}") : f.metadata;
  row.source_pages = IdsToJson(f.source_pages);
  row.event_time = f.event_time;
  row.now = c.now;
  row.expires_at = f.expires_at;
  row.idempotency_key = f.idempotency_key;
  row.degraded = f.degraded;
  ENGRAM_ASSIGN_OR_RETURN(const std::int64_t id, store::InsertFactRow(c.db, row));
  const std::string& memory_id = row.memory_id;
  ENGRAM_RETURN_IF_ERROR(IndexText(c, id, f.text));
  if (!f.entities.empty() || f.extract_entities) {
    ENGRAM_RETURN_IF_ERROR(LinkEntities(c, id, f.entities.empty() ? ExtractEntities(f.text) : f.entities));
  }
  ENGRAM_RETURN_IF_ERROR(History(c, memory_id, id, 1, "ADD", nullptr, &f.text, f.role));
  ENGRAM_RETURN_IF_ERROR(WriteReceipt(c, id, 1, f.degraded));
  ENGRAM_RETURN_IF_ERROR(BumpReaders(c));
  RecordAdd(c, id, memory_id, f.expires_at, f.embedding, f.text);
  return WriteOutcome{"ADD", memory_id, id, 1, f.text, "", 0};
}

Result<WriteOutcome> NewVersion(const WriteContext& c, const FactRow& cur, const VersionChange& ch) {
  if (cur.item.status != "live") return Status::NotFound("memory " + cur.item.id);
  const std::string text = ch.text ? *ch.text : cur.item.memory;
  const bool new_text = ch.text && *ch.text != cur.item.memory;
  const std::uint64_t hash = ch.text ? text::SignedContentHash(text) : cur.norm_hash;
  if (hash != cur.norm_hash) {
    ENGRAM_ASSIGN_OR_RETURN(auto other, LiveByHash(c, hash));
    if (other && other->item.id != cur.item.id) {
      return Status::AlreadyExists("text: the same text is already memory " + other->item.id);
    }
  }
  if (ch.text && !ch.embedding) return Status::Internal("new version text without an embedding");
  const Vector& emb = ch.text ? *ch.embedding : cur.embedding;
  ENGRAM_ASSIGN_OR_RETURN(bool retired, store::RetireLiveFact(c.db, cur.id, "superseded", c.now));
  if (!retired) return Status::Aborted("memory " + cur.item.id + " changed concurrently");
  ENGRAM_RETURN_IF_ERROR(store::UnindexText(c.db, store::FullText::kFacts, cur.id));
  store::FactVersionRow next;
  next.text = text;
  next.norm_hash = hash;
  next.embedding = &emb;
  next.metadata = ch.metadata ? *ch.metadata : cur.item.metadata;
  next.expires_at = ch.expires_at ? *ch.expires_at : cur.item.expires_at;
  next.now = c.now;
  ENGRAM_ASSIGN_OR_RETURN(const std::int64_t id, store::InsertFactVersion(c.db, cur.id, next));
  const std::int64_t version = cur.item.version + 1;
  ENGRAM_RETURN_IF_ERROR(IndexText(c, id, text));
  if (new_text) {
    ENGRAM_RETURN_IF_ERROR(LinkEntities(c, id, ch.entities.empty() ? ExtractEntities(text) : ch.entities));
  } else {
    ENGRAM_RETURN_IF_ERROR(store::CopyFactEntities(c.db, cur.id, id));
  }
  ENGRAM_RETURN_IF_ERROR(History(c, cur.item.id, id, version, ch.event.c_str(), &cur.item.memory, &text,
                                 cur.item.role));
  ENGRAM_RETURN_IF_ERROR(WriteReceipt(c, id, version, cur.item.degraded));
  ENGRAM_RETURN_IF_ERROR(BumpReaders(c));
  RecordRemove(c, cur.id);
  RecordAdd(c, id, cur.item.id, next.expires_at, emb, text);
  return WriteOutcome{"UPDATE", cur.item.id, id, version, text, cur.item.memory, cur.item.version};
}

Status DeleteFact(const WriteContext& c, const FactRow& cur) {
  if (cur.item.status != "live") return Status::NotFound("memory " + cur.item.id);
  ENGRAM_ASSIGN_OR_RETURN(bool retired, store::RetireLiveFact(c.db, cur.id, "deleted", c.now));
  if (!retired) return Status::Aborted("memory " + cur.item.id + " changed concurrently");
  ENGRAM_RETURN_IF_ERROR(store::UnindexText(c.db, store::FullText::kFacts, cur.id));
  ENGRAM_RETURN_IF_ERROR(
      History(c, cur.item.id, cur.id, cur.item.version, "DELETE", &cur.item.memory, nullptr, cur.item.role));
  ENGRAM_RETURN_IF_ERROR(WriteReceipt(c, cur.id, cur.item.version, false, "lpm", "deleted"));
  RecordRemove(c, cur.id);
  return BumpReaders(c);
}

Status PurgeMemory(const WriteContext& c, const std::string& memory_id) {
  ENGRAM_ASSIGN_OR_RETURN(std::vector<store::FactVersionText> rows, store::ListFactVersions(c.db, memory_id));
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> hashes;
  std::int64_t version = 0;
  std::int64_t last_id = 0;
  std::string role;
  for (const auto& r : rows) {
    ids.push_back(r.id);
    if (!r.text.empty()) text::AppendCacheKeys(r.text, hashes);
    if (r.version >= version) version = r.version, last_id = r.id, role = r.role;
  }
  if (ids.empty()) return Status::NotFound("memory " + memory_id);
  for (auto id : ids) ENGRAM_RETURN_IF_ERROR(store::UnindexText(c.db, store::FullText::kFacts, id));
  ENGRAM_RETURN_IF_ERROR(store::EraseFactContent(c.db, memory_id, ids, hashes, c.now));
  ENGRAM_RETURN_IF_ERROR(History(c, memory_id, last_id, version, "PURGE", nullptr, nullptr, role));
  ENGRAM_RETURN_IF_ERROR(WriteReceipt(c, last_id, version, false, "lpm", "purged"));
  for (auto id : ids) RecordRemove(c, id);
  return BumpReaders(c);
}

Result<std::optional<FactRow>> FindMemory(sql::Db* db, const MemoryScope& scope,
                                          const std::string& memory_id, TimeMs now) {
  store::FactSelector sel = Selector(scope, store::FactStates::kCurrent, now);
  sel.memory_id = memory_id;
  return store::FindNewestFact(db, sel);
}

}  // namespace engram::memory::facts
