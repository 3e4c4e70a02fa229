// Message ranking: every message (one side of an exchange, paged or in STM)
// scored by BM25F (text + speaker name) with evidence from its neighbouring
// messages, optionally fused with the vector similarity of its exchange.
// Pages and STM turns are ranked by the same function. Pure: reads the
// snapshot and the inputs only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/embedder.hpp"
#include "retrieval/lexical.hpp"
#include "retrieval/query_dates.hpp"
#include "retrieval/scope_index.hpp"

namespace engram::retrieval {

// Weights of the ranking, measured on LoCoMo (see docs/PERFORMANCE.md):
// BM25 with a low length normalisation (messages are short and of similar
// length), the speaker's name counted like a word of the message, and topic
// locality (the evidence of a question often sits next to the message that
// shares its words: a question and its answer, a story told over a few
// messages) as a share of the neighbouring messages' lexical scores.
struct RankParams {
  Bm25Params bm25{0.9, 0.3, 1.0};
  double neighbour = 0.7;      // share of the best lexical score one message away
  double neighbour2 = 0.5;     // ... two messages away
  double neighbour3 = 0.0;     // ... three messages away
  double neighbour_sum = 0.0;  // 1: add both sides' scores instead of the best
  double gap_minutes = 60.0;   // neighbours only within this time gap (0 = any)
  // Weight of the exchange's cosine similarity against the normalised
  // lexical score, used only when the caller asks for vectors (the built-in
  // hashed embedder repeats the lexical evidence: measured +0.001 recall@10
  // for 0.5 ms per retrieval to embed STM turns, so it is not used).
  double vector = 0.15;
  // "When" questions: lexical evidence of messages with a time expression
  // counts this much more (measured: temporal recall@10 0.741 -> 0.760).
  double temporal = 0.5;
  // Questions that name one of the speakers ("what does Anna do to relax?")
  // are nearly always answered by that person's own messages (LoCoMo: 96% of
  // the evidence of such questions, against 58% of the top 10 ranked on words
  // alone, where messages addressing the person by name also match): the
  // final score of the messages that speaker wrote is multiplied by
  // 1 + speaker. Messages whose own lexical score reaches speaker_keep of the
  // best one get the same factor whoever wrote them, so that a question
  // naming the wrong person still finds what was said (LoCoMo's adversarial
  // questions: recall@10 0.66 without this, 0.73 with it; 0.86 with no
  // speaker factor at all). Measured on categories 1-4: recall@10
  // 0.721 -> 0.755, multi-hop 0.395 -> 0.458, context recall within 1,000
  // tokens 0.777 -> 0.810 (factors 0.3 and 3.5 gain less).
  double speaker = 1.0;
  double speaker_keep = 0.9;
  // A question naming the wrong person ("What evening class did Mateo sign
  // up for?" of Iris's class): when the best lexical score of another
  // speaker's messages, s_other, beats the named speaker's best, s_named,
  // the named speaker's factor is 1 + speaker x (1 - speaker_rival x (1 -
  // s_named / s_other)) instead (RankingOptions::speaker_rival). Measured
  // on LoCoMo 0-4 (2026-12-06): adversarial recall@10 0.852 -> 0.869,
  // categories 1-4 0.8130 -> 0.8117 (two multi-hop list questions lose an
  // answer at rank 7-10 to the other speaker's messages).
  double speaker_rival = 1.0;
  // Query coverage: a message's lexical score is multiplied by 1 + coverage
  // x the idf share of the question's own words it holds (BM25 alone lets
  // one repeated or name-field word outweigh a message holding most of the
  // question). Measured on LoCoMo conversations 0-4, recall@10: 0.5 0.767,
  // 1 0.769, 2 0.771, 4 0.770, 8 0.770 (0: 0.761); adversarial 0.741 ->
  // 0.778 at 2. Held out (5-9) at 2: recall@10 0.750 -> 0.756, adversarial
  // 0.715 -> 0.768, multi-hop 0.446 -> 0.451.
  double coverage = 2.0;
  // ... and in a question of several clauses, at least coverage_clause x the
  // share of one clause's own words (RankingOptions::coverage_clause).
  double coverage_clause = 0.5;
  // Messages in the day or month a question names (RankQuery::dates): their
  // lexical score counts 1 + date times. Measured on conversations 0-4:
  // recall@10 0.7709 -> 0.7814 / 0.7818 / 0.7853 / 0.7853 / 0.7847 at 0.5 /
  // 1 / 2 / 4 / 8 (slack 1 day; 0 / 3 / 7 days at 2: 0.7840 / 0.7849 /
  // 0.7853), adversarial 0.7785 -> 0.8080 at 2.
  double date = 2.0;
  // ... and a message whose own time expression points into the named
  // window (TurnEntry::said): its final score counts 1 + said_date.
  double said_date = 1.0;
  // A message naming a thing of the kind the question asks for
  // (RankQuery::answer_kind; not the question's noun itself): its final
  // score counts 1 + answer_type. Measured on conversations 0-4, recall@10
  // 0.8107 -> 0.8130 / 0.8122 / 0.8122 / 0.8125 / 0.8104 at 0.1 / 0.15 /
  // 0.2 / 0.25 / 0.3.
  double answer_type = 0.1;
  // Meaning where the question's words say little (RankingOptions::meaning,
  // meaning_gate; built-in word vectors): measured on the paraphrase sets
  // said in a dialogue (`engram eval paraphrase --dialogue`) and on LoCoMo
  // 0-4, docs/PERFORMANCE.md.
  double meaning = 3.0;
  double meaning_gate = 0.3;
  double meaning_gate_unnamed = 1.0;  // (a question naming no speaker; measured the same way)
  double meaning_top = 10;            // (the messages that add their meaning at most)
  // What a message says and of whom (RankingOptions::self_reference,
  // question, opener, names; MessageDoc's cues). Among the messages LoCoMo's
  // rankings bring to the first 20 (conversations 0-4), the named
  // speaker's messages with more first- than second-person words are
  // evidence 8.7% of the time, those with more second-person words 1.6%;
  // messages with a "?" 2.8%, others 6.7%. Measured on conversations 0-4,
  // recall@10 0.785 -> 0.796 (self_reference 0.6 and question 0.15) ->
  // 0.803 (opener 0.2, names 0.2); held out (5-9) 0.766 -> 0.780. See
  // docs/PERFORMANCE.md.
  double self_reference = 0.6;
  double question = 0.15;
  double opener = 0.2;
  double names = 0.2;
};
const RankParams& DefaultRankParams();

// The ranking parameters a caller's options give (RankingOptions holds the
// same constants; its defaults are DefaultRankParams()).
RankParams RankParamsFrom(const RankingOptions& o);

// The fields of RankingOptions by name, with their ranges ([lo, hi]; (lo,
// hi] when open_lo), for the surfaces that read them and the reports that
// print them.
struct RankingField {
  const char* name;
  double RankingOptions::*member;
  double lo, hi;
  bool open_lo;
};
const std::vector<RankingField>& RankingFields();

// Why `v` is not a value of field `f` ("must be a number in [0, 1]"); ""
// when it is.
std::string RankingValueError(const RankingField& f, double v);

// InvalidArgument naming the field ("ranking.bm25_k1: ...") when a value of
// the options is out of its range (see RankingOptions) or not finite.
Status CheckRetrieveOptions(const RetrieveOptions& o);

// STM turns of one retrieval, indexed on the fly (chronological order).
struct StmMessages {
  std::vector<TurnEntry> entries;
  std::vector<Vector> vectors;  // per entry, empty when unknown
  MessageIndex index;
  std::vector<MessageDoc> docs;
};

struct RankedMessage {
  const TurnEntry* entry = nullptr;
  int side = 0;
  double score = 0.0;
  RankReasons why;  // filled when RankQuery::explain
};

// What a question means to the built-in word vectors: the indexes of its
// known words and their unit mean.
struct QuestionMeaning {
  const wordvec::WordVectors* words = nullptr;
  std::vector<long> terms;
  std::vector<float> mean;
};

struct RankQuery {
  // The query's own terms (weight 1) and its expansions (weight below 1).
  std::vector<QueryTerm> terms;
  const Vector* vector = nullptr;  // null: lexical evidence only
  bool asks_when = false;          // the question asks for a time
  TimeWindow dates;                // the day or month the question names (QueryDateWindow)
  // The kind of thing the question asks for (QuestionAnswerType: a bit of
  // MessageIndex::Kinds, 0 for none) and the index term of its noun.
  std::uint32_t answer_kind = 0;
  std::string answer_term;
  // The question's meaning (RankParams::meaning), made only when the meaning
  // gate opens (nullptr: none; the result may be nullptr too: no word of the
  // question is known). Called at most once.
  std::function<const QuestionMeaning*()> meaning_of;
  bool explain = false;            // fill RankedMessage::why
};

// The query's terms (text::Terms, deduplicated, weight 1).
std::vector<QueryTerm> QueryTerms(const std::string& query);
// The same from the query's tokens (text::Tokenize); with `held` (how many
// messages hold a term), a word they never wrote is followed by what it
// stands for among the words they did: a hyphenated word's parts
// (text::ForEachHyphenPart, as the index has them) and the word they make
// ("e-mail": "email"), two words that make it ("roadtrip": "road", "trip"),
// else, weighted 0.5, for a word that is no English word either (WordNet's),
// the word one letter away that most messages hold ("funraiser":
// "fundraiser"); and two adjacent words are followed by the
// word they make when the messages hold it ("ice cream": "icecream"). Each
// term has the clause of the question it is first said in: a clause begins
// after "and" at a question word (", and where did he race?").
std::vector<QueryTerm> QueryTerms(const std::vector<std::string>& tokens,
                                  const std::function<std::size_t(const std::string&)>& held = nullptr);

// The best `limit` messages, best first; ties by recency (newer first).
std::vector<RankedMessage> RankMessages(const ScopeIndex& idx, const StmMessages& stm,
                                        const RankQuery& q, const RankParams& p, std::size_t limit);

}  // namespace engram::retrieval
