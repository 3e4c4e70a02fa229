#include "models/llm/prompts.hpp"

#include "core/time.hpp"

namespace engram::prompts {

namespace {

std::string Exchange(const std::string& un, const std::string& ut, const std::string& an,
                     const std::string& at) {
  std::string s;
  if (!ut.empty()) s += "  " + un + ": " + ut + "\n";
  if (!at.empty()) s += "  " + an + ": " + at + "\n";
  return s;
}

}  // namespace

std::string MaintenanceSystem(const std::string& language) {
  std::string lang = language.empty() ? "the language the conversation is written in" : language;
  return "You keep the long-term memory of a conversational assistant. You read pages of dialogue "
         "(each page is one message and the reply to it) and describe them for later recall. "
         "Be faithful: never add facts that the pages do not state. Write all summaries and facts "
         "in " + lang + ". Answer with one JSON object and nothing else.";
}

std::string AnalyzePages(const ChainContext& chain, const std::vector<PageDraft>& pages) {
  std::string s;
  if (chain.has_previous) {
    const auto& p = chain.previous;
    s += "The page just before this batch (" + FormatHumanDateTime(p.event_time) + "):\n" +
         Exchange(p.user_name, p.user_text, p.assistant_name, p.assistant_text);
    if (!chain.chain_summary.empty()) s += "Summary of its conversation so far: " + chain.chain_summary + "\n";
    s += "\n";
  } else {
    s += "There is no page before this batch.\n\n";
  }
  s += "Pages, oldest first:\n";
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const auto& p = pages[i];
    s += "[" + std::to_string(i + 1) + "] " + FormatHumanDateTime(p.event_time) + "\n" +
         Exchange(p.user_name, p.user_text, p.assistant_name, p.assistant_text);
  }
  s += "\nFor every page, in order, give:\n"
       "- \"page\": its number;\n"
       "- \"continues_previous\": true when it carries on the same conversation and topic as the "
       "page right before it (for page 1, the page before the batch; false when there is none);\n"
       "- \"chain_summary\": one or two sentences summarising the conversation this page belongs "
       "to, up to and including this page; when it continues, extend the running summary;\n"
       "- \"keywords\": 3 to 8 short lower-case keywords for what the page is about.\n"
       "Reply as {\"pages\": [{\"page\": 1, \"continues_previous\": false, \"chain_summary\": "
       "\"...\", \"keywords\": [\"...\"]}]} with exactly " +
       std::to_string(pages.size()) + " entries.";
  return s;
}

std::string SummarizeSegments(const std::vector<SegmentInput>& segments) {
  std::string s = "Each topic below has a current summary (empty for a new topic) and pages that "
                  "are joining it now.\n\n";
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto& g = segments[i];
    s += "Topic " + std::to_string(i + 1) + "\n";
    s += "  current summary: " + (g.summary.empty() ? std::string("(none)") : g.summary) + "\n";
    if (!g.keywords.empty()) {
      s += "  current keywords:";
      for (const auto& k : g.keywords) s += " " + k;
      s += "\n";
    }
    s += "  new pages:\n";
    for (const auto& p : g.new_pages) {
      s += "  (" + FormatHumanDate(p.event_time) + ")\n" +
           Exchange(p.user_name, p.user_text, p.assistant_name, p.assistant_text);
    }
  }
  s += "\nFor every topic, write an updated summary (at most three sentences, keeping what the "
       "current summary says unless the new pages change it, naming people and dates) and up to "
       "10 lower-case keywords.\nReply as {\"segments\": [{\"segment\": 1, \"summary\": \"...\", "
       "\"keywords\": [\"...\"]}]} with exactly " +
       std::to_string(segments.size()) + " entries.";
  return s;
}

std::string Consolidate(const std::vector<ProfileSlot>& profile,
                        const std::vector<ConsolidationPage>& pages) {
  std::string s = "Current profile of the user (dimension: value):\n";
  if (profile.empty()) s += "  (empty)\n";
  for (const auto& slot : profile) s += "  " + slot.dimension + ": " + slot.value + "\n";
  s += "\nPages not analysed yet:\n";
  for (const auto& p : pages) {
    s += "[page " + std::to_string(p.page_id) + "] " + FormatHumanDateTime(p.event_time) + "\n" +
         Exchange(p.user_name, p.user_text, p.assistant_name, p.assistant_text);
  }
  s += "\nExtract what is worth remembering for a long time:\n"
       "- \"profile\": updates to the user's profile as {\"dimension\", \"value\", \"evidence\"}; "
       "dimensions are short lower-case names such as name, location, occupation, family, pets, "
       "interests, preferences, health, goals; a value replaces the current one, so merge what "
       "is still true; evidence lists the page numbers it rests on;\n"
       "- \"user_facts\": facts about the user, and \"assistant_facts\": facts about the assistant "
       "or what it promised or recommended, each as {\"text\", \"pages\", \"date\"}: a short "
       "self-contained statement in the third person that names who it is about, with relative "
       "times (yesterday, last week, next month) turned into absolute dates using the page's "
       "date, the page numbers it comes from, and the date it refers to as YYYY-MM-DD;\n"
       "- leave out greetings, small talk, questions and anything not stated in the pages.\n"
       "Reply as {\"profile\": [...], \"user_facts\": [...], \"assistant_facts\": [...]} "
       "(empty arrays when there is nothing).";
  return s;
}

namespace {

void Section(std::string& s, const char* title, const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  s += std::string(title) + "\n";
  for (const auto& l : lines) s += l + "\n";
  s += "\n";
}

}  // namespace

std::string AnswerSystem(const AnswerContext& c) {
  std::string s = "You are " + (c.persona.empty() ? std::string("a helpful assistant") : c.persona) +
                  ", talking with a user you have spoken with before. You have a memory of earlier "
                  "conversations; use it when it helps, and say so plainly when it does not hold "
                  "the answer instead of guessing.\n";
  s += "Answer in " + (c.language.empty() ? std::string("the language of the user's message") : c.language);
  if (!c.answer_length.empty()) s += ", in " + c.answer_length;
  s += ".\n";
  if (!c.assistant_facts.empty()) {
    s += "\nWhat you remember about yourself and what you told this user:\n";
    for (const auto& f : c.assistant_facts) s += f + "\n";
  }
  return s;
}

std::string AnswerUser(const AnswerContext& c, const std::string& query) {
  std::string s;
  Section(s, "About the user:", c.profile);
  Section(s, "Facts about the user:", c.user_facts);
  Section(s, "Earlier conversations (with their dates):", c.past_pages);
  Section(s, "Most recent conversation:", c.recent_turns);
  if (!s.empty()) {
    s += "When the question is about a time (when, how long ago, last month, in 2023), check the "
         "dates in the memory above against the timeframe it asks about, and count relative times "
         "from the date each memory was said, not from today.\n\n";
  }
  s += "Now (" + c.now + ") the user says:\n" + query;
  return s;
}

}  // namespace engram::prompts
