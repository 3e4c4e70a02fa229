#include "memory/facts/fact_vectors.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/text.hpp"
#include "memory/facts/fact_text.hpp"
#include "store/facts.hpp"

namespace engram::memory::facts {

namespace {

// The delta is folded into a fresh base beyond this many changes (or an
// eighth of the base): searches scan the delta exactly, and a reload costs
// one read of the scope's embeddings.
constexpr std::size_t kMinDelta = 256;

bool Contains(const std::vector<std::int64_t>& sorted, std::int64_t id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

float TailNorm(const Vector& v, std::size_t from) {
  double ss = 0;
  for (std::size_t i = from; i < v.size(); ++i) ss += static_cast<double>(v[i]) * v[i];
  return static_cast<float>(std::sqrt(ss));
}

}  // namespace

std::vector<std::string> DistinctTerms(std::string_view text) {
  std::vector<std::string> t = text::Terms(text);
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

std::size_t TermRows(const std::vector<std::shared_ptr<const FactVectors>>& snaps, const std::string& term) {
  std::size_t df = 0;
  for (const auto& sn : snaps) {
    if (sn->base) {
      auto it = sn->base->term_rows.find(term);
      if (it != sn->base->term_rows.end()) df += it->second;
    }
    for (const auto& a : sn->added) df += std::binary_search(a->terms.begin(), a->terms.end(), term) ? 1 : 0;
  }
  return df;
}

std::vector<std::pair<std::size_t, std::string>> TermsHeld(const std::vector<std::shared_ptr<const FactVectors>>& snaps,
                                                           const std::vector<std::string>& sorted) {
  std::vector<std::size_t> df(sorted.size(), 0);
  auto at = [&](const std::string& t) -> long {
    auto it = std::lower_bound(sorted.begin(), sorted.end(), t);
    return it != sorted.end() && *it == t ? it - sorted.begin() : -1;
  };
  for (const auto& sn : snaps) {
    if (sn->base && sn->base->term_rows.size() < sorted.size()) {
      for (const auto& [term, count] : sn->base->term_rows) {
        if (const long k = at(term); k >= 0) df[static_cast<std::size_t>(k)] += count;
      }
    } else if (sn->base) {
      for (std::size_t k = 0; k < sorted.size(); ++k) {
        auto it = sn->base->term_rows.find(sorted[k]);
        if (it != sn->base->term_rows.end()) df[k] += it->second;
      }
    }
    for (const auto& a : sn->added) {
      for (const auto& t : a->terms) {
        if (const long k = at(t); k >= 0) ++df[static_cast<std::size_t>(k)];
      }
    }
  }
  std::vector<std::pair<std::size_t, std::string>> out;
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    if (df[k] > 0) out.emplace_back(df[k], sorted[k]);
  }
  return out;
}

std::function<float(const std::string&)> TermIdf(const std::vector<std::shared_ptr<const FactVectors>>& snaps) {
  double rows = 0;
  for (const auto& sn : snaps) rows += static_cast<double>((sn->base ? sn->base->rows : 0) + sn->added.size());
  return [snaps, rows](const std::string& term) {
    const double df = static_cast<double>(TermRows(snaps, term));
    return static_cast<float>(std::log(1.0 + (rows + 1.0) / (df + 1.0)));
  };
}

std::vector<float> SemanticQuery(const std::vector<std::shared_ptr<const FactVectors>>& snaps,
                                 const wordvec::WordVectors& words, const std::string& query) {
  return words.TextVector(query, TermIdf(snaps));
}

bool IdentityMatch::Accepts(const FactIdentity& x) const {
  if (x.user != id.user) return false;
  if (!narrower) return x.agent == id.agent && x.run == id.run;
  return (id.agent.empty() || x.agent == id.agent) && (id.run.empty() || x.run == id.run);
}

IdentityMatch MatchFor(const MemoryScope& scope) {
  return IdentityMatch{FactIdentity{scope.user, scope.agent, scope.run}, scope.include_narrower};
}

std::size_t FactVectors::MemoryBytes() const {
  std::size_t n = sizeof(FactVectors) + removed.capacity() * sizeof(std::int64_t);
  if (base) {
    for (const auto& [term, count] : base->term_rows) n += sizeof(count) + term.size() + 48;
    for (const auto& [ident, g] : base->groups) {
      n += g.index.MemoryBytes() + ident.user.size() + ident.agent.size() + ident.run.size();
      n += g.rows.size() * (sizeof(FactVecRow) + 32) + g.expiring.capacity() * 16;
      for (const auto& [id, m] : g.semantic) {
        n += sizeof(id) + sizeof(m) + m.mean.codes.capacity() + m.known.capacity() * sizeof(long);
      }
      n += g.shapes.size() * 32 + g.shapes.bucket_count() * sizeof(void*);
    }
  }
  for (const auto& a : added) {
    n += sizeof(AddedFactVec) + a->embedding.size() * sizeof(float) + a->semantic.codes.capacity() +
         a->known.capacity() * sizeof(long) + 32;
    for (const auto& t : a->terms) n += t.size() + sizeof(t);
  }
  return n;
}

Result<std::shared_ptr<const FactVectors>> LoadFactVectors(sql::Db* db, std::int64_t scope_id,
                                                           std::int64_t data_version, const Scope& row_scope,
                                                           const wordvec::WordVectors* words) {
  auto base = std::make_shared<FactVectorBase>();
  ENGRAM_RETURN_IF_ERROR(store::ScanLiveFactVectors(db, scope_id, [&](store::FactVectorRow& row) {
    FactIdentity ident{std::move(row.ids.user), std::move(row.ids.agent), std::move(row.ids.run)};
    FactGroup& g = base->groups[ident];
    FactVecRow r{row.id, std::move(row.memory_id), row.expires_at ? *row.expires_at : kNoExpiry};
    const Vector& emb = row.embedding;
    if (!g.index.Add(r.id, emb)) return true;  // another dimension: never a vector match
    const std::size_t p = std::min<std::size_t>(emb.size(), FactGroup::kPrefixDims);
    g.prefix.insert(g.prefix.end(), emb.begin(), emb.begin() + static_cast<std::ptrdiff_t>(p));
    g.tail_norm.push_back(TailNorm(emb, p));
    if (r.expires_at != kNoExpiry) g.expiring.emplace_back(r.id, r.expires_at);
    if (words) {
      // Its meaning: "User likes jazz" holds no word "user"; "Raspberry Pi" is one name.
      const std::string meant = words->Meant(row.text);
      auto sem = wordvec::Quantize(words->TextVector(meant));
      const std::vector<std::string> terms = DistinctTerms(row.text);
      if (!sem.empty()) {
        auto known = words->KnownWords(meant == row.text ? terms : DistinctTerms(meant));
        g.semantic.emplace_back(r.id, FactGroup::Meaning{std::move(sem), std::move(known)});
      }
      for (const auto& t : terms) ++base->term_rows[t];
      if (const std::uint64_t shape = TextShape(row.text); shape != 0) g.shapes.emplace(shape, r.id);
    }
    g.rows.emplace(r.id, std::move(r));
    ++base->rows;
    return true;
  }));
  for (auto& [ident, g] : base->groups) {  // (by id already: the scan is; SameShape looks rows up by id)
    if (!std::is_sorted(g.semantic.begin(), g.semantic.end(), [](const auto& x, const auto& y) { return x.first < y.first; })) {
      std::sort(g.semantic.begin(), g.semantic.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    }
  }
  auto v = std::make_shared<FactVectors>();
  v->scope_id = scope_id;
  v->data_version = data_version;
  v->row_scope = row_scope;
  v->words = words;
  v->base = std::move(base);
  return std::shared_ptr<const FactVectors>(std::move(v));
}

std::shared_ptr<const FactVectors> ApplyChanges(const FactVectors& before, const FactChanges& changes,
                                                std::int64_t data_version) {
  auto next = std::make_shared<FactVectors>(before);
  next->data_version = data_version;
  next->added.insert(next->added.end(), changes.added.begin(), changes.added.end());
  next->removed.insert(next->removed.end(), changes.removed.begin(), changes.removed.end());
  std::sort(next->removed.begin(), next->removed.end());
  next->removed.erase(std::unique(next->removed.begin(), next->removed.end()), next->removed.end());
  const std::size_t base_rows = next->base ? next->base->rows : 0;
  if (next->added.size() + next->removed.size() > std::max(kMinDelta, base_rows / 8)) return nullptr;
  return next;
}

std::vector<std::pair<std::int64_t, float>> TopVectors(const FactVectors& v, const IdentityMatch& match,
                                                       const Vector& q, std::size_t k, TimeMs now,
                                                       bool include_expired, float min_score,
                                                       const FactChanges* overlay) {
  std::vector<std::pair<std::int64_t, float>> out;
  if (k == 0 || q.empty()) return out;
  std::vector<std::int64_t> op_removed;
  if (overlay) {
    op_removed = overlay->removed;
    std::sort(op_removed.begin(), op_removed.end());
  }
  auto gone = [&](std::int64_t id) { return Contains(v.removed, id) || Contains(op_removed, id); };
  auto visible = [&](TimeMs expires_at) { return include_expired || expires_at > now; };
  const std::size_t hidden_any = v.removed.size() + op_removed.size();
  if (v.base) {
    for (const auto& [ident, g] : v.base->groups) {
      if (g.index.size() == 0 || !match.Accepts(ident)) continue;
      std::size_t hidden = hidden_any;
      if (!include_expired) {
        for (const auto& [id, at] : g.expiring) hidden += at <= now ? 1 : 0;
      }
      const std::size_t want = std::min(g.index.size(), k + hidden);
      std::size_t taken = 0;
      for (const auto& [id, score] : g.index.Search(q, static_cast<int>(want))) {
        if (score <= min_score || taken >= k) break;
        if (gone(id)) continue;
        auto it = g.rows.find(id);
        if (it == g.rows.end() || !visible(it->second.expires_at)) continue;
        out.emplace_back(id, score);
        ++taken;
      }
    }
  }
  auto consider = [&](const AddedFactVec& a) {
    if (!match.Accepts(a.identity) || gone(a.row.id) || !visible(a.row.expires_at)) return;
    if (a.embedding.size() != q.size()) return;
    const float score = Dot(a.embedding, q);
    if (score > min_score) out.emplace_back(a.row.id, score);
  };
  for (const auto& a : v.added) consider(*a);
  if (overlay) {
    for (const auto& a : overlay->added) consider(*a);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first > b.first);
  });
  if (out.size() > k) out.resize(k);
  return out;
}

std::vector<std::pair<std::int64_t, float>> TopSemantic(const FactVectors& v, const IdentityMatch& match,
                                                        const std::vector<float>& q, std::size_t k, TimeMs now,
                                                        bool include_expired, float min_score,
                                                        const ExpansionQuery* expansion) {
  std::vector<std::pair<std::int64_t, float>> out;
  if (k == 0 || q.empty() || !v.words) return out;
  auto visible = [&](TimeMs expires_at) { return include_expired || expires_at > now; };
  // (Every memory's words against one query: each word's neighbourhood
  // searched once.)
  std::optional<wordvec::ExpansionMatcher> matcher;
  if (expansion && expansion->weight > 0)
    matcher.emplace(*v.words, expansion->terms, expansion->weights);
  auto scored = [&](const wordvec::QuantizedVector& mean, const std::vector<long>& known) {
    float score = wordvec::Dot(q, mean);
    if (matcher) score += static_cast<float>(expansion->weight * matcher->Match(known));
    return score;
  };
  if (v.base) {
    for (const auto& [ident, g] : v.base->groups) {
      if (g.semantic.empty() || !match.Accepts(ident)) continue;
      for (const auto& [id, sem] : g.semantic) {
        const float score = scored(sem.mean, sem.known);
        if (score <= min_score || Contains(v.removed, id)) continue;
        auto it = g.rows.find(id);
        if (it == g.rows.end() || !visible(it->second.expires_at)) continue;
        out.emplace_back(id, score);
      }
    }
  }
  for (const auto& a : v.added) {
    if (a->semantic.empty() || !match.Accepts(a->identity) || Contains(v.removed, a->row.id) ||
        !visible(a->row.expires_at)) {
      continue;
    }
    const float score = scored(a->semantic, a->known);
    if (score > min_score) out.emplace_back(a->row.id, score);
  }
  auto better = [](const auto& a, const auto& b) { return a.second > b.second || (a.second == b.second && a.first > b.first); };
  if (out.size() > k) {
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k), out.end(), better);
    out.resize(k);
  } else {
    std::sort(out.begin(), out.end(), better);
  }
  return out;
}

std::optional<std::pair<std::int64_t, float>> NearestAbove(const FactVectors& v, const FactIdentity& identity,
                                                           const Vector& q, float threshold, TimeMs now,
                                                           const FactChanges* overlay) {
  std::optional<std::pair<std::int64_t, float>> best;
  if (q.empty()) return best;
  std::vector<std::int64_t> op_removed;
  if (overlay) {
    op_removed = overlay->removed;
    std::sort(op_removed.begin(), op_removed.end());
  }
  auto gone = [&](std::int64_t id) { return Contains(v.removed, id) || Contains(op_removed, id); };
  auto offer = [&](std::int64_t id, float score) {
    if (score >= threshold && (!best || score > best->second)) best = std::make_pair(id, score);
  };
  if (v.base) {
    auto it = v.base->groups.find(identity);
    if (it != v.base->groups.end() && it->second.index.dim() == static_cast<int>(q.size())) {
      const FactGroup& g = it->second;
      const std::size_t p = std::min<std::size_t>(q.size(), FactGroup::kPrefixDims);
      const float q_tail = TailNorm(q, p);
      for (std::size_t r = 0; r < g.index.size(); ++r) {
        const float bound = Dot(g.prefix.data() + r * p, q.data(), static_cast<int>(p)) + q_tail * g.tail_norm[r];
        if (bound < threshold - 1e-4f) continue;  // slack for rounding
        const std::int64_t id = g.index.id(r);
        if (gone(id)) continue;
        auto row = g.rows.find(id);
        if (row == g.rows.end() || row->second.expires_at <= now) continue;
        offer(id, g.index.ScoreRow(r, q));
      }
    }
  }
  auto consider = [&](const AddedFactVec& a) {
    if (a.identity.user != identity.user || a.identity.agent != identity.agent || a.identity.run != identity.run) {
      return;
    }
    if (gone(a.row.id) || a.row.expires_at <= now || a.embedding.size() != q.size()) return;
    offer(a.row.id, Dot(a.embedding, q));
  };
  for (const auto& a : v.added) consider(*a);
  if (overlay) {
    for (const auto& a : overlay->added) consider(*a);
  }
  return best;
}

std::vector<std::pair<std::int64_t, float>> SameShape(const FactVectors& v, const FactIdentity& identity,
                                                      std::uint64_t shape, const std::vector<float>& q,
                                                      float min_score, std::size_t k, TimeMs now,
                                                      const FactChanges* overlay) {
  std::vector<std::pair<std::int64_t, float>> out;
  if (shape == 0 || q.empty() || k == 0 || !v.words) return out;
  auto gone = [&](std::int64_t id) {
    return Contains(v.removed, id) ||
           (overlay && std::find(overlay->removed.begin(), overlay->removed.end(), id) != overlay->removed.end());
  };
  if (v.base) {
    auto g = v.base->groups.find(identity);
    if (g != v.base->groups.end()) {
      const auto& sem = g->second.semantic;
      auto [b, e] = g->second.shapes.equal_range(shape);
      for (auto it = b; it != e; ++it) {
        const std::int64_t id = it->second;
        auto row = g->second.rows.find(id);
        if (row == g->second.rows.end() || row->second.expires_at <= now || gone(id)) continue;
        auto s = std::lower_bound(sem.begin(), sem.end(), id, [](const auto& x, std::int64_t i) { return x.first < i; });
        if (s == sem.end() || s->first != id) continue;
        const float score = wordvec::Dot(q, s->second.mean);
        if (score > min_score) out.emplace_back(id, score);
      }
    }
  }
  const IdentityMatch exact{identity, false};
  auto consider = [&](const AddedFactVec& a) {
    if (a.shape != shape || a.semantic.empty() || !exact.Accepts(a.identity) || a.row.expires_at <= now ||
        gone(a.row.id)) {
      return;
    }
    const float score = wordvec::Dot(q, a.semantic);
    if (score > min_score) out.emplace_back(a.row.id, score);
  };
  for (const auto& a : v.added) consider(*a);
  if (overlay) {
    for (const auto& a : overlay->added) consider(*a);
  }
  auto better = [](const auto& x, const auto& y) { return x.second > y.second || (x.second == y.second && x.first > y.first); };
  std::sort(out.begin(), out.end(), better);
  if (out.size() > k) out.resize(k);
  return out;
}

std::string MemoryIdOf(const FactVectors& v, const FactChanges* overlay, std::int64_t fact_id) {
  if (overlay) {
    for (const auto& a : overlay->added) {
      if (a->row.id == fact_id) return a->row.memory_id;
    }
  }
  for (const auto& a : v.added) {
    if (a->row.id == fact_id) return a->row.memory_id;
  }
  if (v.base) {
    for (const auto& [ident, g] : v.base->groups) {
      auto it = g.rows.find(fact_id);
      if (it != g.rows.end()) return it->second.memory_id;
    }
  }
  return {};
}

}  // namespace engram::memory::facts
