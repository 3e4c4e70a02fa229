// EngineImpl: lineage receipts and memory health (docs/LINEAGE.md) — the
// retrieval receipt buffer, the health report, scope verification, receipt
// listing and retention.
#include "engine/engine_impl.hpp"

#include <algorithm>
#include <set>

#include "core/time.hpp"
#include "lineage/compaction.hpp"
#include "lineage/evidence.hpp"
#include "lineage/health.hpp"
#include "lineage/receipts.hpp"
#include "memory/facts/fact_query.hpp"
#include "memory/mtm.hpp"
#include "memory/scope_store.hpp"
#include "store/facts_history.hpp"
#include "store/receipts.hpp"
#include "store/scopes.hpp"

namespace engram {

namespace {

constexpr std::size_t kMaxBufferedReceipts = 100000;
constexpr std::int64_t kHourMs = 3600LL * 1000;
constexpr std::int64_t kDayMs = 24 * kHourMs;

lineage::Policy PolicyFor(const EngineOptions& eo, const Clock& clock, const HealthOptions& o) {
  lineage::Policy p;
  p.now = o.now > 0 ? o.now : clock.NowMs();
  p.horizon_ms = o.horizon_ms >= 0 ? o.horizon_ms : eo.receipt_horizon_hours * kHourMs;
  p.promotion_wait_ms = o.promotion_wait_ms >= 0 ? o.promotion_wait_ms : eo.promotion_wait_minutes * 60000LL;
  p.stm_capacity = eo.stm_capacity;
  p.tenant = o.tenant;
  p.user = o.user;
  p.max_findings = o.max_findings;
  return p;
}

ReceiptInfo InfoFrom(const lineage::Receipt& r) {
  return {r.id,           r.run_id,         Scope{r.tenant, r.user_scope, r.assistant_scope},
          r.memory_kind,  r.memory_id,      r.version,
          r.source_version, r.from_tier,    r.to_tier,
          r.status,       r.at_utc,         r.depends_on_version,
          r.outcome_receipt};
}

// A retrieval receipt of one scope (its items, if any, are added by the caller).
lineage::Receipt RetrievalReceipt(const Scope& scope, const std::string& source_version,
                                  const char* status, TimeMs at) {
  lineage::Receipt r;
  r.run_id = lineage::NewRunId();
  r.tenant = scope.tenant;
  r.user_scope = scope.user;
  r.assistant_scope = scope.assistant;
  r.memory_kind = "retrieval";
  r.source_version = source_version;
  r.from_tier = "store";
  r.to_tier = "retrieval";
  r.status = status;
  r.at_utc = at;
  return r;
}

}  // namespace

void EngineImpl::BufferRetrievalReceipt(const Scope& scope, const RetrievalResult& result, TimeMs at) {
  std::vector<lineage::VersionRef> refs;
  for (const auto& i : result.items) {
    if (i.kind != ItemKind::kProfile) refs.push_back({ItemKindName(i.kind), i.id, i.version});
  }
  lineage::Receipt r = RetrievalReceipt(scope, config_.source_version, "committed", at);
  r.depends_on_version = lineage::FormatVersionRefs(refs);
  r.outcome_receipt = "items=" + std::to_string(refs.size());
  std::lock_guard<std::mutex> lock(receipts_mu_);
  if (receipts_.size() >= kMaxBufferedReceipts) {
    ++receipts_lost_[lineage::ScopeKey(scope)];
    return;
  }
  receipts_.push_back(std::move(r));
}

Status EngineImpl::FlushReceipts() {
  std::vector<lineage::Receipt> batch;
  std::map<std::string, std::int64_t> lost;
  {
    std::lock_guard<std::mutex> lock(receipts_mu_);
    batch.swap(receipts_);
    lost.swap(receipts_lost_);
  }
  if (batch.empty() && lost.empty()) return Status::Ok();
  const TimeMs now = deps_.clock->NowMs();
  for (const auto& [key, n] : lost) {  // the loss itself is recorded, as degraded evidence
    lineage::Receipt r =
        RetrievalReceipt(lineage::ScopeFromKey(key), config_.source_version, "degraded", now);
    r.outcome_receipt = "receipts lost=" + std::to_string(n);
    batch.push_back(std::move(r));
  }
  Status st = [&]() -> Status {
    std::lock_guard<std::mutex> lock(writer_mu_);
    ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(writer_.get()));
    for (const auto& r : batch) ENGRAM_RETURN_IF_ERROR(lineage::Write(writer_.get(), r));
    return txn->Commit();
  }();
  if (!st.ok()) {  // keep them for the next flush
    std::lock_guard<std::mutex> lock(receipts_mu_);
    batch.insert(batch.end(), std::make_move_iterator(receipts_.begin()),
                 std::make_move_iterator(receipts_.end()));
    receipts_.swap(batch);
  }
  return st;
}

Result<HealthReport> EngineImpl::Health(const HealthOptions& options) {
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  lineage::Evidence ev;
  {
    ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));  // one consistent view
    ENGRAM_ASSIGN_OR_RETURN(ev, lineage::LoadEvidence(db));
  }
  {  // retrievals of this process not yet written count as evidence too
    std::lock_guard<std::mutex> lock(receipts_mu_);
    std::int64_t next = ev.receipts.empty() ? 1 : ev.receipts.back().id + 1;
    for (auto r : receipts_) {
      r.id = next++;
      ev.receipts.push_back(std::move(r));
    }
  }
  const lineage::Policy policy = PolicyFor(options_, *deps_.clock, options);
  // The store holds its current state only: judged as of a time before its
  // newest receipt, what it holds now would be measured against part of the
  // evidence (items written since without their receipts, a receipt from
  // the future counting as fresh).
  TimeMs newest = 0;
  for (const auto& r : ev.receipts) newest = std::max(newest, r.at_utc);
  if (options.now > 0 && options.now < newest) {
    return Status::InvalidArgument("as_of: before the newest receipt (" + FormatIso8601(newest) +
                                   "): the store can be judged from then on");
  }
  return lineage::Classify(ev, policy);
}

Result<int> EngineImpl::VerifyLineage(const HealthOptions& options) {
  ENGRAM_RETURN_IF_ERROR(FlushReceipts());
  lineage::Policy policy = PolicyFor(options_, *deps_.clock, options);
  policy.horizon_ms = 0;  // verification re-reads all evidence, old or new
  std::lock_guard<std::mutex> lock(writer_mu_);
  sql::Db* db = writer_.get();
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  ENGRAM_ASSIGN_OR_RETURN(lineage::Evidence ev, lineage::LoadEvidence(db));
  HealthReport report = lineage::Classify(ev, policy);
  int verified = 0;
  for (const auto& sh : report.scopes) {
    if (!IsGreen(sh.state)) continue;
    ENGRAM_ASSIGN_OR_RETURN(auto row, memory::FindScope(db, sh.scope));
    if (!row) continue;  // receipts only: nothing in the store to vouch for
    std::int64_t items = 0;
    for (auto c : sh.counts) items += c;
    lineage::Receipt r;
    r.run_id = lineage::NewRunId();
    r.tenant = sh.scope.tenant;
    r.user_scope = sh.scope.user;
    r.assistant_scope = sh.scope.assistant;
    r.memory_kind = "scope";
    r.memory_id = row->id;
    r.source_version = config_.source_version;
    r.from_tier = "store";
    r.to_tier = "verified";
    r.status = "verified";
    r.at_utc = policy.now;
    r.outcome_receipt = "items=" + std::to_string(items) + " state=" + HealthStateName(sh.state);
    ENGRAM_RETURN_IF_ERROR(lineage::Write(db, r));
    ++verified;
  }
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  return verified;
}

Result<std::vector<ReceiptInfo>> EngineImpl::ListReceipts(const ReceiptQuery& q) {
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  lineage::ReadFilter f;
  f.tenant = q.scope.tenant;
  f.user = q.scope.user;
  f.assistant = q.scope.assistant;
  f.run_id = q.run_id;
  f.memory_kind = q.memory_kind;
  f.limit = q.limit;
  ENGRAM_ASSIGN_OR_RETURN(auto rows, lineage::Read(lease->db(), f));
  std::vector<ReceiptInfo> out;
  out.reserve(rows.size());
  for (const auto& r : rows) out.push_back(InfoFrom(r));
  return out;
}

Result<std::vector<ReceiptDayCount>> EngineImpl::CountReceiptsByDay(const ReceiptQuery& q) {
  if (q.scope.tenant.empty()) return Status::InvalidArgument("tenant: must not be empty");
  if (q.limit < 1) return Status::InvalidArgument("limit: must be at least 1");
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));
  ENGRAM_ASSIGN_OR_RETURN(auto rows, store::CountReceiptsByDay(db, q.scope.tenant, q.scope.user, q.limit));
  std::vector<ReceiptDayCount> out;
  out.reserve(rows.size());
  for (auto& r : rows) {
    ReceiptDayCount c;
    c.day = r.day;
    c.scope = {q.scope.tenant, std::move(r.user), std::move(r.assistant)};
    c.memory_kind = std::move(r.kind);
    c.from_tier = std::move(r.from_tier);
    c.to_tier = std::move(r.to_tier);
    c.status = std::move(r.status);
    c.segment_created = r.segment_created;
    c.compacted = r.compacted;
    c.count = r.count;
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<ReceiptInfo>> EngineImpl::MemoryReceipts(const MemoryScope& scope, const std::string& id) {
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));
  // Only a memory the scope may see (NotFound otherwise, as its history).
  ENGRAM_RETURN_IF_ERROR(memory::facts::MemoryHistory(db, scope, id, deps_.clock->NowMs()).status());
  // Its versions are facts rows; their receipts name those rows.
  ENGRAM_ASSIGN_OR_RETURN(auto history, store::ListFactHistory(db, id));
  std::set<std::int64_t> rows, scopes;
  for (const auto& h : history) {
    rows.insert(h.fact_id);
    scopes.insert(h.scope_id);
  }
  std::vector<ReceiptInfo> out;
  for (std::int64_t scope_id : scopes) {
    ENGRAM_ASSIGN_OR_RETURN(auto row, store::LoadScope(db, scope_id));
    if (row.scope.tenant != scope.tenant) continue;
    lineage::ReadFilter f;
    f.tenant = row.scope.tenant;
    f.user = row.scope.user;
    f.assistant = row.scope.assistant;
    f.memory_kind = "fact";
    ENGRAM_ASSIGN_OR_RETURN(auto receipts, lineage::Read(db, f));
    for (const auto& r : receipts) {
      if (rows.count(r.memory_id)) out.push_back(InfoFrom(r));
    }
  }
  std::sort(out.begin(), out.end(), [](const ReceiptInfo& a, const ReceiptInfo& b) { return a.id < b.id; });
  return out;
}

Result<std::vector<PageLink>> EngineImpl::ListPageLinks(const Scope& scope) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(scope));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));
  ENGRAM_ASSIGN_OR_RETURN(auto row, memory::FindScope(db, scope));
  std::vector<PageLink> out;
  if (!row) return out;
  ENGRAM_ASSIGN_OR_RETURN(auto pages, lineage::LoadPages(db, row->id));
  for (const auto& p : pages) {
    out.push_back({p.id, p.turn_id, p.segment_id, p.prev_page, p.next_page, p.degraded});
  }
  return out;
}

Result<std::vector<SegmentInfo>> EngineImpl::ListSegments(const Scope& scope, bool include_archived) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(scope));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));
  ENGRAM_ASSIGN_OR_RETURN(auto row, memory::FindScope(db, scope));
  std::vector<SegmentInfo> out;
  if (!row) return out;
  ENGRAM_ASSIGN_OR_RETURN(auto segs, memory::LoadSegments(db, row->id, include_archived));
  const TimeMs now = deps_.clock->NowMs();
  const double tau = options_.heat_tau_hours;
  for (const auto& g : segs) {
    SegmentInfo s;
    s.id = g.id;
    s.summary = g.summary;
    s.keywords = g.keywords;
    s.pages = g.page_count;
    s.interaction = g.interaction;
    s.visits = g.visits;
    s.last_access = g.last_access;
    s.created_at = g.created_at;
    s.heat = memory::Heat(g, now, tau);
    s.recency = memory::Heat(0, 0, g.last_access, now, tau);
    s.archived = g.archived;
    out.push_back(std::move(s));
  }
  return out;
}

Result<ReceiptCompaction> EngineImpl::CompactReceipts(int retention_days) {
  const std::int64_t days = retention_days >= 0 ? retention_days : options_.receipt_retention_days;
  if (days <= 0) return ReceiptCompaction{};  // 0 = keep every receipt
  // Evidence inside the horizon is never compacted.
  const std::int64_t keep = std::max(days * kDayMs, options_.receipt_horizon_hours * kHourMs);
  std::lock_guard<std::mutex> lock(writer_mu_);
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(writer_.get()));
  ENGRAM_ASSIGN_OR_RETURN(ReceiptCompaction out,
                          lineage::CompactReceipts(writer_.get(), deps_.clock->NowMs() - keep));
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  return out;
}

}  // namespace engram
