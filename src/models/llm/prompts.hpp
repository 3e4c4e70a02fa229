// The maintenance prompts (our own wording). Each asks for one JSON object.
#pragma once

#include <string>
#include <vector>

#include "models/maintainer.hpp"

namespace engram::prompts {

std::string MaintenanceSystem(const std::string& language);
std::string AnalyzePages(const ChainContext& chain, const std::vector<PageDraft>& pages);
std::string SummarizeSegments(const std::vector<SegmentInput>& segments);
std::string Consolidate(const std::vector<ProfileSlot>& profile,
                        const std::vector<ConsolidationPage>& pages);

// The answer prompt: persona and facts about the assistant as system context;
// recent turns, past pages with dates, profile and user facts with the query.
// Items are rendered texts of retrieved memory, already within the budget.
struct AnswerContext {
  std::string persona;
  std::string language;       // "" = the question's language
  std::string answer_length;  // "" = as the question needs
  std::string now;            // human date-time of the question
  std::vector<std::string> assistant_facts;
  std::vector<std::string> profile;
  std::vector<std::string> user_facts;
  std::vector<std::string> past_pages;   // chronological, dated
  std::vector<std::string> recent_turns;  // chronological, dated
};
std::string AnswerSystem(const AnswerContext& c);
std::string AnswerUser(const AnswerContext& c, const std::string& query);

}  // namespace engram::prompts
