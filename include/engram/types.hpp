// engram public API: value types exchanged with the engine. Only std types.
// Times are milliseconds since the Unix epoch, UTC. Metadata is a JSON object
// serialised as text ("" means none).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram {

using TimeMs = std::int64_t;

// Who a memory belongs to: tenant -> user -> assistant. Ids are opaque text
// (1..128 bytes of printable UTF-8, no control characters); they are never used
// as file paths.
struct Scope {
  std::string tenant = "default";
  std::string user;
  std::string assistant = "assistant";
};

// A user of a tenant with the assistants of their dialogues
// (Engine::ListTenantUsers), and one page of them.
struct TenantUser {
  std::string user;
  std::vector<std::string> assistants;  // in the order their scopes were made
};
struct TenantUserPage {
  std::vector<TenantUser> users;
  std::int64_t matched = 0;  // users matching the filter, on every page
  bool more = false;         // users follow the page's last one
};

// The user or assistant id of the scopes that hold the fact API's memories of
// no user (an agent's own) or of no agent (a user's own): ListScopes returns
// them beside the dialogues, and no caller may name a dialogue with it.
inline constexpr const char* kNoScopeId = "-";

// One user/assistant exchange offered for admission. Either text may be empty
// (not both), e.g. when a dialogue has two user utterances in a row.
struct TurnInput {
  std::string user_text;
  std::string assistant_text;
  std::optional<TimeMs> event_time;  // when it was said; now when absent
  std::string metadata;              // JSON object text, or ""
  std::string source_ref;            // caller's reference, e.g. "D1:3,D1:4"
  std::string user_name;             // speaker names, optional ("" = default)
  std::string assistant_name;
  // Optional references of each side on its own (e.g. "D1:3" and "D1:4"), so
  // that a retrieved message can name its own source; "" = use source_ref.
  std::string user_source_ref;
  std::string assistant_source_ref;
};

enum class Tier { kStm, kMtm, kArchive, kLpm };
const char* TierName(Tier tier);

// A turn as stored in the immutable turn log, with the tier it is in now.
struct Turn {
  std::int64_t id = 0;
  std::int64_t seq = 0;  // admission order within the scope, from 1
  std::string user_text;
  std::string assistant_text;
  TimeMs event_time = 0;
  TimeMs ingest_time = 0;
  std::string metadata;
  std::string source_ref;
  std::string user_name;
  std::string assistant_name;
  std::string user_source_ref;       // "" when not given
  std::string assistant_source_ref;
  Tier tier = Tier::kStm;
  std::int64_t page_id = 0;  // 0 while in STM
};

struct AdmitResult {
  std::int64_t turn_id = 0;
  std::int64_t seq = 0;
  bool promotion_pending = false;
  bool replayed = false;  // the idempotency key was seen: the first admission's turn
};

// Options of an admission.
struct AdmitOptions {
  // A retry with the same key in the same scope (remembered for 24 hours)
  // admits nothing and returns the first admission's turns (replayed); the
  // same key with other turns is AlreadyExists. "" = no key. At most 255
  // bytes.
  std::string idempotency_key;
  // Only a retry may pass: with a key already seen, the first admission's
  // turns are returned (replayed); otherwise nothing is admitted and the
  // result is ResourceExhausted. Used by a caller whose quota is reached, so
  // that a retry of a request accepted earlier still gets its answer.
  bool replay_only = false;
  // The key is remembered for as long as the scope, not 24 hours: an
  // import's, so that a restore run again a month later admits nothing twice.
  bool keep_key = false;
};

struct MaintainReport {
  int promotions = 0;        // promotion jobs committed
  int pages_created = 0;
  int segments_created = 0;
  int segments_merged = 0;   // pages that joined an existing segment
  int segments_archived = 0;
  int consolidations = 0;
  int facts_added = 0;
  int profile_slots_updated = 0;
  int jobs_failed = 0;
  int model_calls = 0;       // calls to a configured LLM (0 on the built-in engine)
  bool degraded = false;     // any work done by the built-in engine
};

// What Engine::Reembed did. Embedders are named as recorded in the store.
struct ReembedReport {
  std::string from;          // the embedder the store was built with
  int from_dim = 0;
  std::string to;            // the target embedder (recorded once finished)
  int to_dim = 0;
  std::int64_t pages = 0;    // page vectors computed by this run
  std::int64_t facts = 0;    // fact vectors computed by this run
  std::int64_t segments = 0; // segment centroids recomputed at the switch
  bool resumed = false;      // continued an interrupted migration to `to`
  bool changed = false;      // the store now records `to` (false: nothing to do)
  bool cancelled = false;    // `to` was the store's own embedder and an
                             // interrupted migration elsewhere was abandoned
};

// The constants of message ranking and context assembly, in one place. The
// defaults were measured on LoCoMo conversations 0-4 only (conversations 5-9
// are held out; docs/PERFORMANCE.md); a caller may set any of them.
// Engine::Retrieve refuses values outside the ranges noted.
struct RankingOptions {
  // BM25F over messages: saturation k1 (0-10], length normalisation b
  // [0, 1], and what a word of the speaker's name counts against a word of
  // the message [0, 10].
  double bm25_k1 = 0.9;
  double bm25_b = 0.3;
  double name_weight = 1.0;
  // Shares [0, 10] of the best lexical score of the messages one, two and
  // three steps away in the dialogue, within neighbour_gap_minutes (>= 0;
  // 0 = any gap): a topic spans a few consecutive messages.
  double neighbour = 0.7;
  double neighbour2 = 0.5;
  double neighbour3 = 0.0;
  double neighbour_gap_minutes = 60.0;
  // Weight [0, 10] of the exchange's cosine similarity (only with a
  // configured, non-built-in embedder).
  double vector = 0.15;
  // "When" questions: lexical evidence of a message with a time expression
  // counts 1 + temporal times [0, 10].
  double temporal = 0.5;
  // A question naming one speaker multiplies the score of that speaker's
  // messages by 1 + speaker [0, 10], and of any message whose lexical score
  // reaches speaker_keep [0, 1] of the best one.
  double speaker = 1.0;
  double speaker_keep = 0.9;
  // A question that may name the wrong person: when another speaker's best
  // lexical score beats the named speaker's best (s < o), the named
  // speaker's `speaker` counts 1 - speaker_rival [0, 1] x (1 - s / o) of
  // itself (at 1, s / o of itself).
  double speaker_rival = 1.0;
  // What a message says of whom: with a named speaker, that speaker's factor
  // is 1 + speaker x (1 + self_reference [0, 1] x b), b in [-1, 1] the
  // balance of the message's first-person words ("I", "my", "we") over its
  // second-person ones ("you", "your"): a message about its writer counts
  // more than one about the person it addresses.
  double self_reference = 0.6;
  // Cues of a message itself, whatever the question: one that asks (holds
  // a "?") scores 1 - question [0, 1] times; one that opens a session (the
  // first after an hour without messages) 1 + opener [0, 10] times; one
  // that names things (capitalised words that do not start a sentence, the
  // speakers' names aside; up to five) 1 + names [0, 10] x count / 5 times.
  double question = 0.15;
  double opener = 0.2;
  double names = 0.2;
  // A message's lexical score is multiplied by 1 + coverage [0, 10] x the
  // share (by idf) of the question's own words that it holds; in a question
  // of several clauses ("How old was Biscuit when Iris got him, and where did
  // he race?"), that share is at least coverage_clause [0, 1] x the share of
  // one clause's own words (a message may answer one clause alone).
  double coverage = 2.0;
  double coverage_clause = 0.5;
  // A question naming a day, a month or a season ("on 8 May, 2023", "in June
  // 2023", "in summer 2022"; without its year, the latest by the scope's last
  // message): the lexical score of the messages of that time, widened by date_slack_days
  // [0, 366] on each side, counts 1 + date [0, 10] times.
  double date = 2.0;
  double date_slack_days = 1.0;
  // ... and a message whose own time expression points into that window
  // ("yesterday", "last Friday", "two weeks ago": the days it names, from
  // when it was said) scores 1 + said_date [0, 10] times, wherever its
  // session lies (the window is read only while date > 0).
  double said_date = 1.0;
  // What kind of thing a question asks for ("what activities ...": an act;
  // "which city ...": a location; WordNet's lexicographer file of its noun):
  // a message naming a thing of that kind ("camping", "Boston"), and not
  // the question's noun itself, scores 1 + answer_type [0, 10] times.
  double answer_type = 0.1;
  // Meaning where the question's words say little (built-in engine with its
  // word vectors): when no message holds meaning_gate [0, 1] or more of the
  // question's own words (by idf; a word's WordNet expansions count as the
  // word: "badminton" holds "sport"), each message adds meaning [0, 10] x
  // (1 - best share / meaning_gate) x its meaning score: how much of the
  // question its words' WordNet neighbourhoods hold, plus the cosine of its
  // and the question's word-vector means (the words they do not share),
  // rescaled from [0.2, 1] to [0, 1]. ("How did he injure his arm?" finds
  // "Raj broke his wrist playing basketball".)
  double meaning = 3.0;
  double meaning_gate = 0.3;
  // The gate for a question naming none of the scope's speakers ("What do I
  // ...?", "Which drink does the user like?": what an agent asks of its
  // user's memory), where no speaker's messages narrow what the words
  // find: [0, 1], 1 by default (the meaning counts wherever a message holds
  // less than all of the question's own words). Read in a scope of 2,000
  // messages at most (1,000 exchanges): the meaning pass reads every
  // message, too slow for a larger scope on most questions.
  double meaning_gate_unnamed = 1.0;
  // Only the meaning_top [0, 1000] messages whose meaning scores best add it
  // (0 = every message): an open gate gives every message some meaning,
  // and a context packed by rank would fill with the whole dialogue.
  double meaning_top = 10;
  // WordNet expansion of the query: weight [0, 1] of a synonym, derivation or
  // hyponym; only terms held by at most expansion_max_df_share [0, 1] of the
  // messages (0 = no expansion).
  double expansion = 0.25;
  double expansion_max_df_share = 0.01;
  // ... and the weight [0, 1] of the expansions of two adjacent question
  // words that WordNet names as one thing ("martial arts": "taekwondo";
  // "European countries": "Spain"): a two-word name has one sense, so its
  // kinds are what the question asks for, where a single word's senses
  // are many (read only while expansion > 0).
  double expansion_compound = 1.0;
  // Shares of the budget [0, 1] that recent STM turns, the profile and the
  // facts may take at most (their sum at most 1); the rest goes to messages.
  // (What the messages and the older recent turns leave, the facts may take
  // as well.)
  double stm_share = 0.1;
  double profile_share = 0.05;
  double facts_share = 0.05;
  // A fact drawn from the dialogue's pages (a restatement of messages the
  // ranking weighs for the question itself) enters a context by its words
  // only when it holds fact_cover [0, 1] or more of the idf weight of the
  // question's words, names of speakers aside ("Caroline is going to a
  // conference" says nothing of "When did Melanie go to the museum?"); a fact
  // the user stated or changed is kept on any word (0 = every fact sharing a
  // word).
  double fact_cover = 0.5;
  // Recent STM turns take their share only when said within this many hours
  // [0, 87600] of the retrieval (0 = however old): the conversation in
  // progress. Older ones enter by rank like any message, and fill what the
  // ranked messages leave.
  double recent_hours = 24;
};

struct RetrieveOptions {
  int budget_tokens = 2000;
  int max_segments = 5;
  // Past messages are packed by rank while the budget holds them; max_pages
  // > 0 caps them at that many exchanges' worth (2 x max_pages messages).
  int max_pages = 0;
  int max_facts = 20;        // per kind
  bool include_stm = true;
  bool include_profile = true;
  RankingOptions ranking;
  // Fill each ranked message's `why` (costs a little; off for callers that
  // only want the context).
  bool explain = false;
};

enum class ItemKind { kStmTurn, kPage, kUserFact, kAssistantFact, kProfile };
const char* ItemKindName(ItemKind kind);

// How the ranking scored a message (RetrieveOptions::explain), from the
// ranker's own sums: final score = (lexical + neighbour) / the best such sum,
// + vector weight x vector, x (1 + speaker weight) when `speaker`.
struct RankReasons {
  bool filled = false;
  double lexical = 0;    // its own BM25F evidence, after coverage and the time cue
  double neighbour = 0;  // evidence of the messages around it (within the time gap)
  double coverage = 0;   // share (by idf) of the question's own words it holds, in [0, 1]
  double vector = 0;     // cosine of its exchange (configured embedders only)
  bool time_cue = false; // a "when" question and a message with a time expression
  bool named_date = false;  // a question naming a day or month, and a message of it (RankingOptions::date)
  bool said_date = false;   // ... and a message whose time expression points into it (RankingOptions::said_date)
  bool answer_type = false;  // it names a thing of the kind the question asks for (RankingOptions::answer_type)
  double meaning = 0;        // its meaning score where the question's words say little, gated
                             // (RankingOptions::meaning)
  bool speaker = false;  // the named-speaker factor applied
  double self_reference = 0;  // its first- over second-person balance, in [-1, 1] (RankingOptions::self_reference)
  double cues = 1;       // the factor of its own cues: asking, opening a session, naming things
  // Query terms its text or speaker name holds: the question's own (weight
  // 1, or below for a guessed spelling) and WordNet expansions (weight below
  // 1, or 1 for the kinds of two words naming one thing: "taekwondo" for
  // "martial arts").
  struct Term {
    std::string term;
    double weight = 1;
    bool expansion = false;
  };
  std::vector<Term> matched_terms;
};

// One piece of context with the provenance a caller needs to audit it.
struct RetrievedItem {
  ItemKind kind = ItemKind::kPage;
  Tier tier = Tier::kMtm;
  std::int64_t id = 0;          // page id, turn id or fact id
  std::int64_t version = 1;
  std::int64_t turn_id = 0;     // for turns and pages
  std::int64_t segment_id = 0;  // for pages
  double score = 0.0;
  TimeMs event_time = 0;
  // Source of what the item holds: for a single message, that side's own
  // reference when the turn has one (else the turn's source_ref).
  std::string source_ref;
  // For turns and pages: which message(s) of the exchange the item holds,
  // "user", "assistant" or "both"; "" for facts and profile lines.
  std::string part;
  std::string text;             // rendered text of the item
  int tokens = 0;               // estimated tokens of `text`
  RankReasons why;              // messages, with RetrieveOptions::explain
};

struct RetrievalResult {
  std::vector<RetrievedItem> items;  // in context order
  std::vector<RetrievedItem> ranked; // all ranked pages/turns, best first (for evaluation)
  std::string context;               // rendered text within the budget
  int context_tokens = 0;
  bool truncated = false;            // some items did not fit the budget
};

// Options of a memory-grounded answer (Engine::Chat).
struct ChatOptions {
  std::string persona = "a friendly, helpful assistant";  // who the assistant is
  std::string language;        // answer language; "" = the language of the question
  std::string answer_length;   // e.g. "one short paragraph"; "" = as the question needs
  int max_answer_tokens = 0;   // 0 = the model's default
  RetrieveOptions retrieve;    // what memory enters the prompt
  bool admit = true;           // admit the exchange into memory afterwards
  std::string user_name;       // speaker names stored with the admitted turn
  std::string assistant_name;
  // Called with each piece of the answer as it streams in (optional).
  std::function<void(std::string_view)> on_delta;
};

struct ChatReply {
  std::string answer;
  std::vector<RetrievedItem> used;  // memory items that entered the prompt
  std::int64_t turn_id = 0;         // the admitted exchange (0 when not admitted)
  std::string run_id;               // joins the generation receipt
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  int model_calls = 0;
};

struct ProfileSlot {
  std::string dimension;
  std::string value;
  std::vector<std::int64_t> evidence_pages;
  TimeMs updated_at = 0;
};

struct Profile {
  std::vector<ProfileSlot> slots;
  std::string text;  // slots rendered as text
};

struct Fact {
  std::int64_t id = 0;
  std::int64_t version = 1;
  std::string kind;  // "user" or "assistant"
  std::string text;
  std::vector<std::int64_t> source_pages;
  TimeMs event_time = 0;
  TimeMs record_time = 0;
  bool degraded = false;
};

// Which maintenance jobs to list or retry ("" = any).
struct JobQuery {
  std::string tenant;
  std::string user;
  std::string status;  // "pending" (leased ones too), "failed" or "" (both)
  int limit = 1000;
};

// A maintenance job that is pending or failed. `last_error` names the failure
// (never a model's reply or memory text).
struct JobInfo {
  std::int64_t id = 0;
  Scope scope;
  std::string kind;    // "promote" or "consolidate"
  std::string status;  // "pending", "leased" (a process is running it) or "failed"
  int attempts = 0;
  std::string lease_holder;  // "host/pid/..." of the process running it (leased)
  TimeMs lease_expires = 0;  // another process may take it over from then on
  std::string last_error;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

// What a tenant holds (quotas of `engram serve`): turns in the turn log,
// live memories of the fact-memory API (kinds memory and procedural), and the
// bytes of their texts (turn user and assistant texts, current memory texts).
struct TenantUsage {
  std::int64_t turns = 0;
  std::int64_t memories = 0;
  std::int64_t bytes = 0;
};

// The per-scope retrieval snapshots this process keeps in memory
// (EngineOptions::snapshot_cache_mb): how many, their bytes (estimated), the
// budget, and how many were dropped to stay within it since the engine opened;
// and the same of the fact snapshots (fact search and consolidation), kept
// within a budget of the same size of their own.
struct SnapshotCacheStats {
  std::int64_t scopes = 0;
  std::int64_t bytes = 0;
  std::int64_t budget_bytes = 0;
  std::int64_t evictions = 0;
  std::int64_t fact_scopes = 0;
  std::int64_t fact_bytes = 0;
  std::int64_t fact_evictions = 0;
};

struct Stats {
  std::int64_t stm_turns = 0;
  std::int64_t mtm_pages = 0;
  std::int64_t mtm_segments = 0;
  std::int64_t archived_pages = 0;
  std::int64_t archived_segments = 0;
  std::int64_t user_facts = 0;
  std::int64_t assistant_facts = 0;
  std::int64_t profile_slots = 0;
  std::int64_t pending_jobs = 0;
  std::int64_t failed_jobs = 0;
  std::int64_t turns_admitted = 0;
  std::int64_t degraded_items = 0;
};

}  // namespace engram
