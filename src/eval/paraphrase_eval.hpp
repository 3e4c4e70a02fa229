// The paraphrase benchmark of the fact memory: memories of the kinds agents
// keep (preferences, health, family, work, plans, schedules, tools), each with
// questions that share no content word with it (checked with the engine's own
// tokenizer, stemmer and stopword list: text::Terms), so that only meaning can
// find them. All memories go into one user of a temporary in-memory store
// (as written: infer = false, unless ParaphraseOptions::infer); every
// question is asked through Engine::SearchMemories with the defaults a
// caller gets (MemorySearchOptions{}), and hit@1 / hit@3 count
// the questions whose memory comes first / among the first three.
//
// File: JSON lines {"id", "category", "memory", "questions": [...],
// "keywords": [...]} ("keywords" optional: the same memory asked for in the
// words of an agent's search tool, "occupation", "favourite sport"; asked
// instead of the questions with ParaphraseOptions::keywords; "direct":
// [...], optional, questions that do share a content word with their memory,
// the way most questions are asked ("Where do I work?" for "I work as a
// backend engineer"), asked instead with ParaphraseOptions::direct: meaning
// must not cost what the words find); the project's set is
// bench/data/paraphrase.jsonl. Deterministic for deterministic engines; only
// the latency fields vary.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "engram/options.hpp"
#include "engram/result.hpp"
#include "engram/types.hpp"

namespace engram::eval {

struct ParaphraseOptions {
  // Engine configuration; db_path (":memory:") and background_maintenance
  // (off) are set by the harness.
  EngineOptions engine;
  // Only the first N memories of the file (and their questions); 0 = all.
  std::size_t max_memories = 0;
  // Ask each memory's "keywords" instead of its "questions" (every item of
  // the file must have them).
  bool keywords = false;
  // Ask each memory's "direct" questions instead (every item of the file
  // must have them; not with `keywords`).
  bool direct = false;
  // Add each memory through inference (MemoryAddOptions::infer, what
  // `memory add` does by default: a first-person statement is kept as
  // "User ..."), not as written. Each must still become one memory.
  bool infer = false;
  // Ask the dialogue instead: each memory is what the user said in one
  // exchange of one dialogue (the assistant answering "Noted."), a day apart,
  // maintained; each query is asked through Engine::Retrieve with a caller's
  // defaults, and hit@k counts the queries whose exchange is among the first
  // k ranked messages (RetrievalResult::ranked); context_hit: the memory's
  // text is in the context. Not with `infer`.
  bool dialogue = false;
  // The options of every retrieval (the dialogue mode's, and the facts
  // mode's context): a caller's defaults unless changed (config.changed).
  RetrieveOptions retrieve;
};

// Runs the benchmark. InvalidArgument names the line of a malformed item or
// of a question or keyword query that shares a content word with its memory
// (and the word), or of a direct question that shares none, whichever list
// is asked, and the item a memory of which inference made no memory or more
// than one.
//
// Result (JSON object):
//   overall      {"questions","memories","hit@1","hit@3","mrr@10","context_hit",
//                "context_facts"}: context_hit is the share of questions whose
//                memory is among the facts of the context Engine::Retrieve
//                gives (a dialogue of the user, the caller's defaults),
//                context_facts the mean number of facts such a context holds
//   by_category  {"<category>": same keys}
//   config       {"benchmark": "paraphrase","file","mode" ("facts" or "dialogue"),
//                 "embedder","word_vectors" (the vector file or null),"wordnet"
//                 (the WordNet image, "parsed from <dir>", or null),"engram_version",
//                 "top_k" (facts mode),"max_memories","queries" ("questions",
//                 "keywords" or "direct"),"infer","retrieve" (every retrieval
//                 option),"changed" (those not a caller's defaults)}
//   latency_ms   {"p50","p95","p99","mean","calls"}: one search per question
//   context_latency_ms  the same for the context's retrieval of each question
//   misses       [{"id","question","memory","rank","components","first",
//                "first_components"}]: questions whose memory is not in the
//                first three: its rank (null beyond top_k, or not ranked), the
//                first result's text, and both results' score components
//                ({"score","semantic","vector","lexical","from_semantic",
//                "from_lexical"}; the dialogue mode has no components, and its
//                first result is the memory its first ranked exchange said)
Result<nlohmann::json> RunParaphraseEval(const std::string& path, const ParaphraseOptions& opt);

}  // namespace engram::eval
