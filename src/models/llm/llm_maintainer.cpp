#include "models/llm/llm_maintainer.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/time.hpp"
#include "models/llm/model_json.hpp"
#include "models/llm/prompts.hpp"

namespace engram {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxKeywords = 10;

std::vector<std::string> CleanKeywords(std::vector<std::string> in) {
  std::vector<std::string> out;
  for (auto& k : in) {
    for (auto& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    k.erase(0, k.find_first_not_of(" \t"));
    k.erase(k.find_last_not_of(" \t") + 1);
    if (!k.empty() && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    if (out.size() >= kMaxKeywords) break;
  }
  return out;
}

// Finds the entry for position i: by its number field when given, else by order.
Result<const json*> Entry(const json& arr, std::size_t i, const char* number_key, const char* what) {
  for (const auto& e : arr) {
    auto it = e.find(number_key);
    if (e.is_object() && it != e.end() && it->is_number_integer() &&
        it->get<std::int64_t>() == static_cast<std::int64_t>(i + 1)) {
      return &e;
    }
  }
  if (i < arr.size() && arr[i].is_object() && !arr[i].contains(number_key)) return &arr[i];
  return Status::InvalidArgument(std::string(what) + " " + std::to_string(i + 1) + ": missing");
}

Result<std::vector<ExtractedFact>> Facts(const json& doc, const char* key,
                                         const std::vector<ConsolidationPage>& pages) {
  std::vector<ExtractedFact> out;
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return out;
  if (!it->is_array()) return Status::InvalidArgument(std::string(key) + ": expected an array");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& f = (*it)[i];
    std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    if (!f.is_object()) return Status::InvalidArgument(path + ": expected an object");
    ENGRAM_ASSIGN_OR_RETURN(std::string text, llmjson::String(f, "text", path, true));
    ENGRAM_ASSIGN_OR_RETURN(auto ids, llmjson::Ints(f, "pages", path));
    ENGRAM_ASSIGN_OR_RETURN(std::string date, llmjson::String(f, "date", path, false));
    ExtractedFact fact;
    fact.text = std::move(text);
    TimeMs newest = 0;
    for (auto id : ids) {  // only pages of this batch count as sources
      for (const auto& p : pages) {
        if (p.page_id == id) {
          fact.source_pages.push_back(id);
          newest = std::max(newest, p.event_time);
        }
      }
    }
    if (fact.text.empty() || fact.source_pages.empty()) continue;  // unsourced: not memory
    auto when = date.empty() ? Result<TimeMs>(Status::InvalidArgument("")) : ParseTime(date);
    fact.event_time = when.ok() ? *when : newest;
    out.push_back(std::move(fact));
  }
  return out;
}

}  // namespace

LlmMaintainer::LlmMaintainer(std::shared_ptr<Llm> llm, LlmMaintainerOptions options)
    : llm_(std::move(llm)), options_(std::move(options)) {}

std::string LlmMaintainer::Name() const { return "llm:" + llm_->Name(); }

template <typename T, typename Validate>
Result<T> LlmMaintainer::Ask(const std::string& system, const std::string& user, Validate validate,
                             int* calls) {
  ChatRequest req;
  req.json_object = true;
  req.max_tokens = options_.max_tokens;
  req.temperature = 0.0;
  req.messages = {{"system", system}, {"user", user}};
  Status last = Status::Internal("no attempt");
  for (int attempt = 0; attempt < std::max(1, options_.max_attempts); ++attempt) {
    ++*calls;
    auto reply = llm_->Chat(req);
    if (!reply.ok()) return reply.status();  // the client already retried transport errors
    Result<T> parsed = Status::Internal("unparsed");
    auto doc = llmjson::Extract(reply->content);
    if (doc.ok()) parsed = validate(*doc);
    if (parsed.ok()) return parsed;
    last = doc.ok() ? parsed.status() : doc.status();
    // Ask again, saying what was wrong (the reason names fields, not content).
    req.messages.resize(2);
    req.messages.push_back({"assistant", reply->content});
    req.messages.push_back({"user", "That reply was not usable (" + last.message() +
                                        "). Reply again with only the JSON object described."});
  }
  return Status::Unavailable("llm maintenance: reply invalid after " +
                             std::to_string(options_.max_attempts) + " attempts (" + last.message() + ")");
}

Result<BatchAnalysis> LlmMaintainer::AnalyzePages(const ChainContext& chain,
                                                  const std::vector<PageDraft>& pages, const IdfFn&) {
  BatchAnalysis out;
  if (pages.empty()) return out;
  auto validate = [&](const json& doc) -> Result<std::vector<PageAnalysis>> {
    ENGRAM_ASSIGN_OR_RETURN(const json* arr, llmjson::ArrayField(doc, "pages"));
    if (arr->size() != pages.size()) {
      return Status::InvalidArgument("pages: expected " + std::to_string(pages.size()) +
                                     " entries, got " + std::to_string(arr->size()));
    }
    std::vector<PageAnalysis> v;
    for (std::size_t i = 0; i < pages.size(); ++i) {
      ENGRAM_ASSIGN_OR_RETURN(const json* e, Entry(*arr, i, "page", "page"));
      std::string path = "pages[" + std::to_string(i) + "]";
      PageAnalysis a;
      ENGRAM_ASSIGN_OR_RETURN(a.continues_previous, llmjson::Bool(*e, "continues_previous", path));
      ENGRAM_ASSIGN_OR_RETURN(a.chain_summary, llmjson::String(*e, "chain_summary", path, true));
      ENGRAM_ASSIGN_OR_RETURN(auto kw, llmjson::Strings(*e, "keywords", path));
      if (a.chain_summary.empty()) return Status::InvalidArgument(path + ".chain_summary: empty");
      a.keywords = CleanKeywords(std::move(kw));
      if (i == 0 && !chain.has_previous) a.continues_previous = false;
      v.push_back(std::move(a));
    }
    return v;
  };
  ENGRAM_ASSIGN_OR_RETURN(out.pages, Ask<std::vector<PageAnalysis>>(
                                         prompts::MaintenanceSystem(options_.language),
                                         prompts::AnalyzePages(chain, pages), validate, &out.model_calls));
  return out;
}

Result<SegmentBatch> LlmMaintainer::SummarizeSegments(const std::vector<SegmentInput>& segments,
                                                      const IdfFn&) {
  SegmentBatch out;
  if (segments.empty()) return out;
  auto validate = [&](const json& doc) -> Result<std::vector<SegmentSummary>> {
    ENGRAM_ASSIGN_OR_RETURN(const json* arr, llmjson::ArrayField(doc, "segments"));
    if (arr->size() != segments.size()) {
      return Status::InvalidArgument("segments: expected " + std::to_string(segments.size()) +
                                     " entries, got " + std::to_string(arr->size()));
    }
    std::vector<SegmentSummary> v;
    for (std::size_t i = 0; i < segments.size(); ++i) {
      ENGRAM_ASSIGN_OR_RETURN(const json* e, Entry(*arr, i, "segment", "segment"));
      std::string path = "segments[" + std::to_string(i) + "]";
      SegmentSummary s;
      ENGRAM_ASSIGN_OR_RETURN(s.summary, llmjson::String(*e, "summary", path, true));
      if (s.summary.empty()) return Status::InvalidArgument(path + ".summary: empty");
      ENGRAM_ASSIGN_OR_RETURN(auto kw, llmjson::Strings(*e, "keywords", path));
      s.keywords = CleanKeywords(std::move(kw));
      v.push_back(std::move(s));
    }
    return v;
  };
  ENGRAM_ASSIGN_OR_RETURN(out.segments, Ask<std::vector<SegmentSummary>>(
                                            prompts::MaintenanceSystem(options_.language),
                                            prompts::SummarizeSegments(segments), validate,
                                            &out.model_calls));
  return out;
}

Result<Consolidation> LlmMaintainer::Consolidate(const std::vector<ProfileSlot>& profile,
                                                 const std::vector<ConsolidationPage>& pages) {
  Consolidation out;
  if (pages.empty()) return out;
  std::set<std::int64_t> known;
  for (const auto& p : pages) known.insert(p.page_id);
  auto validate = [&](const json& doc) -> Result<Consolidation> {
    if (!doc.is_object()) return Status::InvalidArgument("reply: expected a JSON object");
    Consolidation c;
    auto it = doc.find("profile");
    if (it != doc.end() && !it->is_null()) {
      if (!it->is_array()) return Status::InvalidArgument("profile: expected an array");
      for (std::size_t i = 0; i < it->size(); ++i) {
        const json& e = (*it)[i];
        std::string path = "profile[" + std::to_string(i) + "]";
        if (!e.is_object()) return Status::InvalidArgument(path + ": expected an object");
        SlotUpdate u;
        ENGRAM_ASSIGN_OR_RETURN(u.dimension, llmjson::String(e, "dimension", path, true));
        ENGRAM_ASSIGN_OR_RETURN(u.value, llmjson::String(e, "value", path, true));
        ENGRAM_ASSIGN_OR_RETURN(auto ev, llmjson::Ints(e, "evidence", path));
        for (auto id : ev) {
          if (known.count(id)) u.evidence_pages.push_back(id);
        }
        for (auto& ch : u.dimension) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (!u.dimension.empty() && !u.value.empty() && !u.evidence_pages.empty()) {
          c.slot_updates.push_back(std::move(u));
        }
      }
    }
    ENGRAM_ASSIGN_OR_RETURN(c.user_facts, Facts(doc, "user_facts", pages));
    ENGRAM_ASSIGN_OR_RETURN(c.assistant_facts, Facts(doc, "assistant_facts", pages));
    return c;
  };
  int calls = 0;
  ENGRAM_ASSIGN_OR_RETURN(out, Ask<Consolidation>(prompts::MaintenanceSystem(options_.language),
                                                  prompts::Consolidate(profile, pages), validate, &calls));
  out.model_calls = calls;
  out.degraded = false;
  return out;
}

}  // namespace engram
