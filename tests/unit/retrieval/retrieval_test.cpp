// Message ranking and context assembly on hand-built snapshots (no store).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "core/text.hpp"
#include "core/word_vectors.hpp"
#include "core/wordnet.hpp"
#include "retrieval/context.hpp"
#include "retrieval/expansion.hpp"
#include "retrieval/lexical.hpp"
#include "retrieval/ranking.hpp"
#include "retrieval/scope_index.hpp"

namespace engram::retrieval {
namespace {

TurnEntry Entry(std::int64_t id, const std::string& user, const std::string& assistant, TimeMs t,
                bool paged = true) {
  TurnEntry e;
  e.turn_id = id;
  e.page_id = paged ? 100 + id : 0;
  e.seq = id;
  e.event_time = t;
  e.tier = paged ? Tier::kMtm : Tier::kStm;
  e.names[0] = "Ana";
  e.names[1] = "Ben";
  e.texts[0] = user;
  e.texts[1] = assistant;
  e.refs[0] = "D1:" + std::to_string(2 * id - 1);
  e.refs[1] = assistant.empty() ? "" : "D1:" + std::to_string(2 * id);
  e.source_ref = e.refs[0] + (assistant.empty() ? "" : "," + e.refs[1]);
  return e;
}

ScopeIndex Snapshot(std::vector<TurnEntry> entries) {
  ScopeIndex idx;
  idx.entries = std::move(entries);
  for (std::uint32_t i = 0; i < idx.entries.size(); ++i) idx.page_entry[idx.entries[i].page_id] = i;
  IndexMessages(idx.entries, idx.messages, idx.message_docs);
  return idx;
}

constexpr TimeMs kDay = 86400000;

// The question's meaning by the built-in word vectors, made into `asked` as
// a retrieval makes it for RankQuery::meaning_of.
const QuestionMeaning* MakeMeaning(const wordvec::WordVectors& words, const std::string& question,
                                   QuestionMeaning& asked) {
  asked.words = &words;
  asked.terms = words.KnownWords(text::Terms(words.Meant(question)));
  asked.mean = words.MeanOf(asked.terms);
  return &asked;
}

TEST(Lexical, EachSpeakerNameHasOneIdUntilTheIdsRunOut) {
  MessageIndex ix;
  const std::uint16_t ana = ix.SpeakerId("Ana");
  EXPECT_EQ(ix.SpeakerId("Ana"), ana);
  EXPECT_NE(ix.SpeakerId("ana"), ana);  // names compare as written
  EXPECT_EQ(ix.Speaker(ana), "Ana");
  for (int i = 0; i < 70000; ++i) ix.SpeakerId("name " + std::to_string(i));
  EXPECT_EQ(ix.SpeakerId("one more"), MessageIndex::kNoSpeaker);
  EXPECT_EQ(ix.SpeakerId("Ana"), ana);
  const MessageIndex copy = ix;  // a snapshot made from another keeps its ids
  EXPECT_EQ(copy.Speaker(ana), "Ana");
}

TEST(Lexical, IdfFavoursRareTermsAndNamesCount) {
  MessageIndex ix;
  ix.Add({text::Terms("I adopted a puppy"), text::Terms("Ana")});
  ix.Add({text::Terms("the weather is nice"), text::Terms("Ben")});
  ix.Add({text::Terms("nice puppy"), text::Terms("Ben")});
  std::vector<QueryTerm> q{{"puppi", 1.0}, {"ana", 1.0}};
  ASSERT_EQ(ix.Df("puppi"), 2u);
  CollectionStats st = Stats(q, {&ix});
  std::vector<double> s(3, 0.0);
  ScoreBm25(ix, q, st, Bm25Params{}, s);
  EXPECT_GT(s[0], s[2]);  // puppy + the speaker's name
  EXPECT_GT(s[2], 0.0);
  EXPECT_EQ(s[1], 0.0);
}

// The vocabulary's filter answers most look-ups of absent terms: every term
// the index holds is found through it, however often it was made again as
// the vocabulary grew (a copy growing on its own leaves the original's as it
// was), and absent terms are not, whether or not they pass it.
TEST(Lexical, EveryHeldTermIsFoundThroughTheVocabularyFilter) {
  MessageIndex ix;
  EXPECT_EQ(ix.TermId("anything"), -1);
  EXPECT_EQ(ix.Df(""), 0u);
  EXPECT_EQ(ix.Df(std::string_view()), 0u);
  for (int i = 0; i < 3000; ++i)
    ix.Add({{"word" + std::to_string(i), "w" + std::to_string(i * 7)}, {"ana"}});
  MessageIndex copy = ix;
  for (int i = 3000; i < 9000; ++i) copy.Add({{"word" + std::to_string(i)}, {"ben"}});
  for (int i = 0; i < 9000; ++i) {
    const std::string held = "word" + std::to_string(i);
    ASSERT_GE(copy.TermId(held), 0) << held;
    EXPECT_EQ(copy.Df(held), 1u) << held;
    EXPECT_EQ(ix.TermId(held) >= 0, i < 3000) << held;
    EXPECT_EQ(copy.TermId("absent" + std::to_string(i)), -1);
    EXPECT_EQ(copy.Df(held + "s", MessageIndex::Hash(held + "s")), 0u);
  }
  EXPECT_EQ(copy.Df("ana"), 3000u);  // names too
  EXPECT_EQ(copy.Df("w21", MessageIndex::Hash("w21")), 1u);
  // Terms of every length (the hash reads eight bytes at a time).
  for (const std::string& t :
       {std::string("a"), std::string(8, 'b'), std::string(9, 'c'), std::string(40, 'd')}) {
    ix.Add({{t}, {}});
    EXPECT_GE(ix.TermId(t), 0) << t;
    EXPECT_EQ(ix.TermId(t + "x"), -1) << t;
  }
}

// Copies of an index share their posting lists: each sees the postings of
// its own documents, whichever copy appended first (in place) and whichever
// had to copy the list; the index they came from is unchanged.
TEST(Lexical, CopiesAppendingToASharedListEachSeeTheirOwn) {
  MessageIndex base;
  for (int i = 0; i < 5; ++i) base.Add({text::Terms("puppy number " + std::to_string(i)), text::Terms("Ana")});
  const std::size_t df = base.Df("puppi");
  ASSERT_EQ(df, 5u);
  MessageIndex first = base, second = base;
  first.Add({text::Terms("puppy puppy"), text::Terms("Ben")});   // claims the next entry in place
  second.Add({text::Terms("puppy puppy puppy"), text::Terms("Cy")});  // finds it claimed: copies
  MessageIndex third = first;
  third.Add({text::Terms("a puppy"), text::Terms("Dee")});  // appends after first's entry
  auto postings = [](const MessageIndex& ix) {
    std::vector<std::pair<std::uint32_t, std::uint16_t>> out;
    for (const auto& p : ix.Postings(ix.TermId("puppi"))) out.emplace_back(p.doc, p.tf);
    return out;
  };
  EXPECT_EQ(base.Df("puppi"), 5u);
  EXPECT_EQ(postings(base).size(), 5u);
  ASSERT_EQ(postings(first).size(), 6u);
  EXPECT_EQ(postings(first).back(), (std::pair<std::uint32_t, std::uint16_t>{5, 2}));
  ASSERT_EQ(postings(second).size(), 6u);
  EXPECT_EQ(postings(second).back(), (std::pair<std::uint32_t, std::uint16_t>{5, 3}));
  ASSERT_EQ(postings(third).size(), 7u);
  EXPECT_EQ(postings(third)[5], (std::pair<std::uint32_t, std::uint16_t>{5, 2}));
  EXPECT_EQ(postings(third)[6], (std::pair<std::uint32_t, std::uint16_t>{6, 1}));
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(postings(first)[i], postings(base)[i]);
    EXPECT_EQ(postings(second)[i], postings(base)[i]);
  }
  // Many more appends to one copy (the list moves to larger buffers) leave
  // the others as they were.
  for (int i = 0; i < 100; ++i) first.Add({text::Terms("puppy again"), text::Terms("Ben")});
  EXPECT_EQ(first.Df("puppi"), 106u);
  EXPECT_EQ(postings(second).back(), (std::pair<std::uint32_t, std::uint16_t>{5, 3}));
  EXPECT_EQ(postings(third).size(), 7u);
  EXPECT_EQ(base.Df("puppi"), 5u);
}

// The same from threads, as snapshot updates made from one snapshot at once
// would (TSan runs it: "Snapshot" is in its name): each copy sees its own
// postings, the shared one's readers see the same throughout.
TEST(Lexical, SnapshotCopiesAppendingAtOnceEachSeeTheirOwn) {
  MessageIndex base;
  for (int i = 0; i < 6; ++i) base.Add({text::Terms("puppy " + std::to_string(i)), text::Terms("Ana")});
  const int id = base.TermId("puppi");
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) {
      std::size_t n = 0;
      for (const auto& p : base.Postings(id)) n += p.tf;
      EXPECT_EQ(n, 6u);
    }
  });
  std::vector<std::thread> writers;
  std::vector<int> ok(4, 0);
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int round = 0; round < 50; ++round) {
        MessageIndex copy = base;
        std::string text;
        for (int k = 0; k <= w; ++k) text += "puppy ";
        copy.Add({text::Terms(text), text::Terms("Ben")});
        const auto list = copy.Postings(copy.TermId("puppi"));
        ok[w] += list.size() == 7 && list.back().doc == 6 && list.back().tf == w + 1 ? 1 : 0;
      }
    });
  }
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  for (int w = 0; w < 4; ++w) EXPECT_EQ(ok[w], 50) << w;
}

TEST(Ranking, EachSideIsItsOwnMessageAndStmRanksWithPages) {
  ScopeIndex idx = Snapshot({Entry(1, "I planted tomatoes in the garden", "Tomatoes love the sun", 0),
                             Entry(2, "My bike got a flat tyre", "Patch kits are cheap", kDay),
                             Entry(3, "We watched a film", "Which one?", 2 * kDay)});
  StmMessages stm;
  stm.entries.push_back(Entry(4, "The tyre is fixed now", "", 3 * kDay, /*paged=*/false));
  IndexMessages(stm.entries, stm.index, stm.docs);
  RankQuery q;
  q.terms = QueryTerms("When was the bike tyre fixed?");
  auto ranked = RankMessages(idx, stm, q, DefaultRankParams(), 10);
  ASSERT_GE(ranked.size(), 2u);
  // The STM message (both words) first, then the paged one.
  EXPECT_EQ(ranked[0].entry->turn_id, 4);
  EXPECT_EQ(ranked[0].side, 0);
  EXPECT_EQ(ranked[1].entry->turn_id, 2);
  EXPECT_EQ(ranked[1].side, 0);
  // The reply next to it gets neighbour evidence and outranks unrelated turns.
  bool reply = false;
  for (const auto& m : ranked) reply |= m.entry->turn_id == 2 && m.side == 1;
  EXPECT_TRUE(reply);
  for (std::size_t i = 1; i < ranked.size(); ++i) EXPECT_GE(ranked[i - 1].score, ranked[i].score);
}

RetrievedItem Message(std::int64_t turn, const std::string& part, const std::string& text, TimeMs t,
                      const std::string& ref) {
  RetrievedItem i;
  i.kind = ItemKind::kPage;
  i.id = 100 + turn;
  i.turn_id = turn;
  i.part = part;
  i.text = text;
  i.tokens = text::EstimateTokens(text);
  i.event_time = t;
  i.source_ref = ref;
  return i;
}

// The texts ContextInput views, kept alive with it.
struct OwnedInput {
  ContextInput in;
  std::vector<std::string> chains;
  std::vector<RetrievedItem> recent;
  std::vector<ProfileSlot> profile;
  std::vector<std::string> fact_texts;
  std::vector<std::vector<std::int64_t>> fact_pages;
};

OwnedInput RandomInput(std::mt19937& rng, int budget) {
  OwnedInput owned;
  ContextInput& in = owned.in;
  in.options.budget_tokens = budget;
  in.options.max_pages = 200;
  std::uniform_int_distribution<int> words(1, 40), day(0, 6);
  auto sentence = [&] {
    std::string s;
    int n = words(rng);
    for (int i = 0; i < n; ++i) s += (i ? " " : "") + std::string(1 + rng() % 9, static_cast<char>('a' + rng() % 26));
    return s;
  };
  for (int t = 1; t <= 40; ++t) {
    for (const char* part : {"user", "assistant"}) {
      in.ranked.push_back(Message(t, part, std::string(part) + ": " + sentence(), day(rng) * kDay + t * 1000,
                                  "D1:" + std::to_string(2 * t + (part[0] == 'a'))));
      owned.chains.push_back(rng() % 3 == 0 ? sentence() : "");
    }
  }
  std::shuffle(in.ranked.begin(), in.ranked.end(), rng);
  for (int i = 0; i < 5; ++i) {
    RetrievedItem r = Message(100 + i, "both", "[today] Ana: " + sentence() + "\nBen: " + sentence(), 0, "");
    r.kind = ItemKind::kStmTurn;
    owned.recent.push_back(r);
  }
  owned.fact_texts.resize(10);
  owned.fact_pages.resize(10);
  for (int i = 0; i < 10; ++i) {
    FactCandidate f;
    f.item.kind = i % 2 ? ItemKind::kUserFact : ItemKind::kAssistantFact;
    owned.fact_texts[i] = "- (1 May 2023) " + sentence();
    f.text = owned.fact_texts[i];
    owned.fact_pages[i] = {100 + i};
    f.pages = owned.fact_pages[i];
    (i % 2 ? in.user_facts : in.assistant_facts).push_back(f);
  }
  owned.profile.push_back({"hobby", sentence(), {}, 0});
  in.chain.assign(owned.chains.begin(), owned.chains.end());
  in.recent = owned.recent;
  in.profile = owned.profile;
  return owned;
}

TEST(Context, NeverExceedsTheBudgetAndCountsExactly) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const int budget = 1 + static_cast<int>(rng() % 1200);
    OwnedInput owned = RandomInput(rng, budget);
    RetrievalResult r = AssembleContext(owned.in);
    EXPECT_LE(r.context_tokens, budget) << "round " << round;
    EXPECT_EQ(r.context_tokens, text::EstimateTokens(r.context));
  }
}

TEST(Context, MergesBothSidesOfATurnAndGroupsByDay) {
  ContextInput in;
  in.options.budget_tokens = 500;
  in.options.max_pages = 10;
  in.ranked = {Message(2, "assistant", "Ben: Patch kits are cheap.", kDay + 1, "D2:2"),
               Message(1, "user", "Ana: I planted tomatoes.", 5, "D1:1"),
               Message(2, "user", "Ana: My bike got a flat tyre.", kDay, "D2:1")};
  in.chain = {"", "", ""};
  RetrievalResult r = AssembleContext(in);
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].source_ref, "D1:1");
  EXPECT_EQ(r.items[0].part, "user");
  EXPECT_EQ(r.items[1].part, "both");
  EXPECT_EQ(r.items[1].source_ref, "D2:1,D2:2");
  EXPECT_EQ(r.context,
            "## Relevant past conversation\n[1 January 1970]\nAna: I planted tomatoes.\n[2 January 1970]\n"
            "Ana: My bike got a flat tyre.\nBen: Patch kits are cheap.\n");
  EXPECT_EQ(r.ranked.size(), 3u);
}

// Recent turns take their share of the budget only while the conversation
// is in progress (said within ranking.recent_hours of the retrieval): the
// turns of a conversation left days ago give that share to ranked messages,
// and come last, in what the messages leave.
TEST(Context, RecentTurnsOfAConversationLeftLongAgoTakeNoShare) {
  const TimeMs now = 30 * kDay;
  auto input = [&](TimeMs said, std::vector<RetrievedItem>* recent) {
    ContextInput in;
    in.options.budget_tokens = 60;
    in.options.ranking.stm_share = 0.5;
    in.now = now;
    RetrievedItem turn = Message(9, "both", "Ana: See you at the climbing gym tomorrow.\nBen: Bring chalk.", said, "");
    turn.kind = ItemKind::kStmTurn;
    recent->assign(1, turn);
    in.recent = *recent;
    for (int t = 1; t <= 4; ++t) {
      in.ranked.push_back(Message(t, "user", "Ana: I planted tomatoes number " + std::to_string(t) + " today.",
                                  t * kDay, "D1:" + std::to_string(t)));
    }
    in.chain.assign(in.ranked.size(), "");
    return in;
  };
  std::vector<RetrievedItem> fresh_turns, stale_turns;
  const RetrievalResult fresh = AssembleContext(input(now - 3600000, &fresh_turns));  // an hour ago
  const RetrievalResult stale = AssembleContext(input(now - 5 * kDay, &stale_turns));
  auto messages = [](const RetrievalResult& r) {
    return std::count_if(r.items.begin(), r.items.end(), [](const RetrievedItem& i) { return i.kind == ItemKind::kPage; });
  };
  EXPECT_NE(fresh.context.find("climbing gym"), std::string::npos) << fresh.context;
  EXPECT_EQ(stale.context.find("climbing gym"), std::string::npos) << stale.context;
  EXPECT_GT(messages(stale), messages(fresh)) << fresh.context << "\n---\n" << stale.context;
  // However old, with recent_hours 0.
  ContextInput any = input(now - 5 * kDay, &stale_turns);
  any.options.ranking.recent_hours = 0;
  EXPECT_NE(AssembleContext(any).context.find("climbing gym"), std::string::npos);
  // And a stale turn still comes when the messages leave room.
  ContextInput roomy = input(now - 5 * kDay, &stale_turns);
  roomy.options.budget_tokens = 500;
  EXPECT_NE(AssembleContext(roomy).context.find("climbing gym"), std::string::npos);
}

TEST(Context, ChainSummariesSayOnlyWhatTheContextDoesNot) {
  ContextInput in;
  in.options.budget_tokens = 500;
  in.ranked = {Message(2, "user", "Ana: My bike got a flat tyre.", kDay, "D2:1"),
               Message(3, "assistant", "Ben: Patch kits are cheap.", kDay + 1, "D2:2"),
               Message(1, "user", "Ana: I planted tomatoes.", 5, "D1:1")};
  // An extractive summary repeats its chain's messages: only the sentence
  // that no chosen message holds is kept, under its speaker's name; the
  // second page's summary repeats the first's and adds nothing.
  in.chain = {"Ana: My bike got a flat tyre! I ride to work every day.", "Ana: I ride to work every day. Ben: Patch kits are cheap.",
              "Ana: I planted tomatoes."};
  RetrievalResult r = AssembleContext(in);
  EXPECT_EQ(r.context,
            "## Relevant past conversation\n[1 January 1970]\nAna: I planted tomatoes.\n[2 January 1970]\n"
            "Ana: My bike got a flat tyre.\n  (context: Ana: I ride to work every day.)\n"
            "Ben: Patch kits are cheap.\n");
  EXPECT_EQ(r.context_tokens, text::EstimateTokens(r.context));
}

TEST(Context, ALowerCaseWritersSummarySaysOnlyWhatTheContextDoesNot) {
  // Sentences written in lower case end at their stops too: a summary's
  // sentences that a chosen message holds are found and left out.
  ContextInput in;
  in.options.budget_tokens = 500;
  in.ranked = {Message(2, "user", "ana: i start at 5am. my boss is called marta.", kDay, "D2:1")};
  in.chain = {"ana: i got a job at the bakery. i start at 5am. my boss is called marta."};
  RetrievalResult r = AssembleContext(in);
  EXPECT_EQ(r.context,
            "## Relevant past conversation\n[2 January 1970]\nana: i start at 5am. my boss is "
            "called marta.\n"
            "  (context: ana: i got a job at the bakery.)\n");
}

TEST(Context, SummariesSplitBeforeGiveTheSameContext) {
  // Sentences a snapshot split before (and keeps with the page) change
  // nothing in the context; summaries here repeat messages and each other,
  // so that sentences are found, and found only after an earlier summary
  // said them.
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    OwnedInput owned = RandomInput(rng, 200 + static_cast<int>(rng() % 1800));
    ContextInput& in = owned.in;
    for (std::size_t i = 0; i < owned.chains.size(); ++i) {
      if (rng() % 2) continue;
      const RetrievedItem& a = in.ranked[rng() % in.ranked.size()];
      std::string s = a.text.substr(a.text.find(": ") + 2) + ". Cy: " + owned.chains[rng() % owned.chains.size()];
      owned.chains[i] = s + "! " + (rng() % 2 ? "Dee: " : "") + owned.chains[(i + 1) % owned.chains.size()];
    }
    in.chain.assign(owned.chains.begin(), owned.chains.end());
    const RetrievalResult plain = AssembleContext(in);
    std::vector<std::vector<SummarySentence>> sentences(owned.chains.size());
    for (std::size_t i = 0; i < owned.chains.size(); ++i) {
      sentences[i] = SummarySentences(owned.chains[i]);
      in.chain[i] = ChainView(owned.chains[i], sentences[i]);
    }
    const RetrievalResult prepared = AssembleContext(in);
    ASSERT_EQ(prepared.context, plain.context) << "round " << round;
    EXPECT_EQ(prepared.context_tokens, plain.context_tokens);
  }
}

TEST(Context, ASummaryIsLeftOutOnlyWhenItDoesNotFit) {
  // At every budget, the summary's one new sentence is in the context or
  // would have exceeded the budget (a summary is passed over without being
  // searched when its shortest sentence cannot fit: never one that can).
  for (const char* summary : {"Ana: The red kite flew over the hill.", "Ana: Kites! The red kite flew over the hill."}) {
    int with = 0;
    for (int budget = 1; budget <= 80; ++budget) {
      ContextInput in;
      in.options.budget_tokens = budget;
      in.ranked = {Message(1, "user", "Ana: hi.", kDay, "D1:1")};
      in.chain = {summary};
      const RetrievalResult r = AssembleContext(in);
      const auto at = r.context.find("  (context: ");
      if (at != std::string::npos) {
        ++with;
        continue;
      }
      if (r.items.empty()) continue;
      const std::string line = std::string("  (context: ") + summary + ")\n";  // every sentence is new
      // (Packing counts the first heading's leading newline, a byte the
      // context does not hold.)
      EXPECT_GT(text::EstimateTokens("\n" + r.context + line), budget) << summary << " at " << budget;
    }
    EXPECT_GT(with, 0) << summary;
  }
}

TEST(LazySentences, SplitOnceSharedByReadersAndNotByCopies) {
  const std::string summary = "Ana: It rained. Ben: Patch kits are cheap.";
  LazySentences lazy;
  EXPECT_EQ(lazy.MemoryBytes(), 0u);  // nothing until a reader asks
  std::vector<const SummarySentence*> seen(4, nullptr);
  std::vector<std::thread> readers;
  for (std::size_t t = 0; t < seen.size(); ++t) {
    readers.emplace_back([&, t] { seen[t] = lazy.Of(summary).data(); });
  }
  for (auto& r : readers) r.join();
  for (const auto* p : seen) EXPECT_EQ(p, seen[0]);  // one split, kept
  ASSERT_EQ(lazy.Of(summary).size(), 2u);
  EXPECT_GT(lazy.MemoryBytes(), 0u);
  const LazySentences copy = lazy;
  EXPECT_EQ(copy.MemoryBytes(), 0u);  // a copy splits for itself
  EXPECT_NE(copy.Of(summary).data(), lazy.Of(summary).data());
  EXPECT_EQ(copy.Of(summary).size(), 2u);
  const auto* made = lazy.Of(summary).data();
  LazySentences moved = std::move(lazy);
  EXPECT_EQ(moved.Of(summary).data(), made);  // a move takes them
  EXPECT_TRUE(LazySentences().Of("").empty());
}

TEST(Context, SummarySentencesCarryTheirSpeaker) {
  const std::string summary = "Ana: My bike got a flat!  It rained. Ben: ...? Patch kits are cheap.";
  const std::vector<SummarySentence> s = SummarySentences(summary);
  ASSERT_EQ(s.size(), 3u);  // "...?" normalises to nothing
  auto speaker = [&](std::size_t i) { return summary.substr(s[i].speaker_off, s[i].speaker_len); };
  auto body = [&](std::size_t i) { return summary.substr(s[i].body_off, s[i].body_len); };
  EXPECT_EQ(speaker(0), "Ana");
  EXPECT_EQ(body(0), "My bike got a flat!");
  EXPECT_EQ(speaker(1), "Ana");
  EXPECT_EQ(body(1), "It rained.");
  EXPECT_EQ(speaker(2), "Ben");
  EXPECT_EQ(body(2), "Patch kits are cheap.");
  EXPECT_EQ(s[2].words, 4u);
}

TEST(Context, NoCapOnPagesByDefaultOnlyTheBudget) {
  ContextInput in;
  in.options.budget_tokens = 2000;
  ASSERT_EQ(in.options.max_pages, 0);
  for (int i = 0; i < 40; ++i) {
    in.ranked.push_back(Message(100 + i, "user", "Ana: message number " + std::to_string(i) + " about the garden.",
                                kDay + i, "D1:" + std::to_string(i)));
    in.chain.push_back("");
  }
  EXPECT_EQ(AssembleContext(in).items.size(), 40u);  // all fit in 2,000 tokens
  in.options.max_pages = 10;
  EXPECT_EQ(AssembleContext(in).items.size(), 20u);  // two messages per exchange
  in.options.budget_tokens = 100;
  in.options.max_pages = 0;
  RetrievalResult small = AssembleContext(in);
  EXPECT_LT(small.items.size(), 40u);
  EXPECT_LE(small.context_tokens, 100);
}

// The recent turns take their share first; what no ranked message or fact
// claims goes to older recent turns, newest first and without a gap, up to a
// turn the past messages already hold.
TEST(Context, WhatNothingRankedClaimsGoesToOlderRecentTurns) {
  std::vector<RetrievedItem> recent;
  for (int i = 1; i <= 8; ++i) {
    RetrievedItem r = Message(100 + i, "both", "Ana: turn number " + std::to_string(i) + " of the chat.\nBen: Noted.",
                              i * 1000, "");
    r.kind = ItemKind::kStmTurn;
    recent.push_back(r);
  }
  ContextInput in;
  in.options.budget_tokens = 300;  // a share of 30 tokens: two turns
  in.recent = recent;
  RetrievalResult alone = AssembleContext(in);
  ASSERT_EQ(alone.items.size(), 8u);  // nothing ranked: all eight fit in 300
  for (int i = 0; i < 8; ++i) EXPECT_EQ(alone.items[i].turn_id, 101 + i);
  EXPECT_EQ(alone.context.find("## Relevant"), std::string::npos);

  // A ranked message takes its place first; the recent turns stop at the
  // turn it holds (turn 105 is in the past section, so 101-104 stay out).
  in.options.budget_tokens = 100;
  RetrievedItem ranked = Message(105, "user", "Ana: turn number 5 of the chat.", 5000, "");
  ranked.kind = ItemKind::kStmTurn;
  in.ranked = {ranked};
  in.chain = {""};
  RetrievalResult r = AssembleContext(in);
  EXPECT_LE(r.context_tokens, 100);
  std::vector<std::int64_t> ids;
  for (const auto& it : r.items) ids.push_back(it.turn_id);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), 105);
  EXPECT_EQ(ids.back(), 108);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 105), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 104), 0);
  for (std::size_t i = 2; i < ids.size(); ++i) EXPECT_EQ(ids[i], ids[i - 1] + 1);  // no gap

  // A budget too small for any turn holds none.
  in.options.budget_tokens = 5;
  in.ranked.clear();
  in.chain.clear();
  EXPECT_TRUE(AssembleContext(in).items.empty());
}

TEST(RankingOptions, RangesAreCheckedAndNamed) {
  RetrieveOptions o;
  EXPECT_TRUE(CheckRetrieveOptions(o).ok());
  for (const auto& f : RankingFields()) {
    RetrieveOptions bad;
    bad.ranking.*f.member = f.hi + 1;
    Status st = CheckRetrieveOptions(bad);
    ASSERT_FALSE(st.ok()) << f.name;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(std::string("ranking.") + f.name), std::string::npos) << st.message();
    bad.ranking.*f.member = std::nan("");
    EXPECT_FALSE(CheckRetrieveOptions(bad).ok()) << f.name;
    bad.ranking.*f.member = -0.5;
    EXPECT_FALSE(CheckRetrieveOptions(bad).ok()) << f.name;
  }
  o.ranking.bm25_k1 = 0;  // k1 must be above 0
  EXPECT_FALSE(CheckRetrieveOptions(o).ok());
  o = RetrieveOptions{};
  o.ranking.stm_share = o.ranking.facts_share = 0.6;  // shares above the whole budget
  EXPECT_FALSE(CheckRetrieveOptions(o).ok());
  o = RetrieveOptions{};
  o.max_pages = -1;
  EXPECT_FALSE(CheckRetrieveOptions(o).ok());
  // The defaults are the ranking's own.
  const RankParams p = RankParamsFrom(RankingOptions{});
  EXPECT_DOUBLE_EQ(p.bm25.k1, DefaultRankParams().bm25.k1);
  EXPECT_DOUBLE_EQ(p.speaker, DefaultRankParams().speaker);
}

TEST(Context, FactsDrawnFromPagesInTheContextAreSkipped) {
  ContextInput in;
  in.options.budget_tokens = 500;
  in.ranked = {Message(1, "user", "Ana: I planted tomatoes.", 5, "D1:1")};
  in.chain = {""};
  FactCandidate covered, other;
  covered.item.kind = other.item.kind = ItemKind::kUserFact;
  covered.text = "- Ana planted tomatoes.";
  const std::vector<std::int64_t> page101 = {101}, page102 = {102};
  covered.pages = page101;
  other.item.text = "- Ana rides a bike.";  // a text of its own instead of a view
  other.pages = page102;
  in.user_facts = {covered, other};
  RetrievalResult r = AssembleContext(in);
  EXPECT_EQ(r.context.find("planted tomatoes.\n## "), std::string::npos);
  EXPECT_EQ(r.context.find("- Ana planted"), std::string::npos);
  EXPECT_NE(r.context.find("- Ana rides a bike."), std::string::npos);
  // A fact changed since it was drawn (an edit through the memory API is a
  // new version) says what its page may not: it is not skipped for it.
  in.user_facts[0].text = "- Ana planted tomatoes and basil in Brno.";
  in.user_facts[0].item.version = 2;
  r = AssembleContext(in);
  EXPECT_NE(r.context.find("- Ana planted tomatoes and basil in Brno."), std::string::npos)
      << r.context;
}


TEST(MessageCues, PersonAndNamedWords) {
  EXPECT_EQ(PersonOf("i"), 1);
  EXPECT_EQ(PersonOf("i'm"), 1);
  EXPECT_EQ(PersonOf("our"), 1);
  EXPECT_EQ(PersonOf("you're"), 2);
  EXPECT_EQ(PersonOf("your"), 2);
  EXPECT_EQ(PersonOf("she's"), 3);
  EXPECT_EQ(PersonOf("him"), 3);
  EXPECT_EQ(PersonOf("they"), 0);  // a group or a thing as often as a person
  EXPECT_EQ(PersonOf("the"), 0);
  EXPECT_EQ(PersonOf("pottery"), 0);
  EXPECT_EQ((MessageCues{3, 1}).Person(), 50);
  EXPECT_EQ((MessageCues{0, 2}).Person(), -100);
  EXPECT_EQ((MessageCues{0, 0}).Person(), 0);
  const std::string_view speakers[] = {"Melanie", "Caroline Smith"};
  // Matt, Patterson, Summer, Sounds: not "Caroline" (a speaker), "I" or a
  // word that starts a sentence.
  EXPECT_EQ(NamedWords("Caroline, I met Matt Patterson at the Summer Sounds show. It was great! I'm glad", speakers), 4);
  EXPECT_EQ(NamedWords("Wow, Melanie! That's great.", speakers), 0);
  EXPECT_EQ(NamedWords("we saw A B C D E F G H", speakers), 5);  // capped
  EXPECT_EQ(NamedWords("we saw A B C D E F G H", speakers, 2), 2);
  EXPECT_EQ(NamedWords("", speakers), 0);
  EXPECT_EQ(NamedWords("a 3D print, don'T", speakers), 0);  // glued to a digit or an apostrophe
}

// What a message says and of whom: with the words alike, a message about its
// writer beats one about the person addressed (a question naming that
// writer), a statement beats a question, a session's opening message beats
// a later one, a message naming things beats one that names none.
TEST(Ranking, WhatAMessageSaysAndOfWhomCounts) {
  constexpr TimeMs kMinute = 60000;
  ScopeIndex idx = Snapshot({
      Entry(1, "Hi", "I love pottery, my favourite class", 0),
      Entry(2, "Hmm", "You love pottery, your favourite class", 10 * kDay),
      Entry(3, "I enjoyed the weaving workshop.", "", 20 * kDay),
      Entry(4, "Did you enjoy the weaving workshop?", "", 30 * kDay),
      Entry(5, "We went to the fair for lanterns", "", 40 * kDay),
      Entry(6, "We went to the fair for lanterns", "", 40 * kDay + kMinute),
      Entry(7, "we saw the Eagles at the stadium", "", 50 * kDay),
      Entry(8, "we saw the eagles at the stadium", "", 60 * kDay),
  });
  StmMessages stm;
  auto first = [&](const std::string& question, const RankParams& p) {
    RankQuery q;
    q.terms = QueryTerms(question);
    auto ranked = RankMessages(idx, stm, q, p, 10);
    EXPECT_GE(ranked.size(), 2u) << question;
    return ranked.empty() ? std::pair<std::int64_t, int>{0, 0} : std::pair{ranked[0].entry->turn_id, ranked[0].side};
  };
  using Msg = std::pair<std::int64_t, int>;  // turn, side
  struct Case {
    double RankParams::*cue;
    const char* question;
    Msg without, with;  // without its cue the two tie and the newer comes first
  };
  const Case cases[] = {
      {&RankParams::self_reference, "What does Ben love about pottery?", {2, 1}, {1, 1}},
      {&RankParams::question, "the weaving workshop", {4, 0}, {3, 0}},
      {&RankParams::opener, "fair lanterns", {6, 0}, {5, 0}},
      {&RankParams::names, "eagles stadium", {8, 0}, {7, 0}},
  };
  for (const Case& k : cases) {
    RankParams off = DefaultRankParams();
    off.*k.cue = 0;
    EXPECT_EQ(first(k.question, off), k.without) << k.question;
    EXPECT_EQ(first(k.question, DefaultRankParams()), k.with) << k.question;
  }
  // The first recent (STM) message opens a session only when the last paged
  // one is over an hour before it; its own list is indexed without them.
  for (const TimeMs after : {10 * kMinute, 3 * 60 * kMinute}) {
    StmMessages recent;
    recent.entries.push_back(Entry(9, "we saw the stadium lights", "", 60 * kDay + after, /*paged=*/false));
    IndexMessages(recent.entries, recent.index, recent.docs);
    RankQuery q;
    q.terms = QueryTerms("stadium lights");
    q.explain = true;
    auto ranked = RankMessages(idx, recent, q, DefaultRankParams(), 10);
    ASSERT_FALSE(ranked.empty());
    ASSERT_EQ(ranked[0].entry->turn_id, 9);
    EXPECT_DOUBLE_EQ(ranked[0].why.cues, after > 60 * kMinute ? 1.0 + DefaultRankParams().opener : 1.0) << after;
  }
}

}  // namespace
}  // namespace engram::retrieval

namespace engram::retrieval {
namespace {

// A message about "her" that names nobody is also about the people the
// message before it names: "Where does Claire work?" finds the reply about
// the library.
TEST(Ranking, AReplyAboutHerIsAboutThePersonTheMessageBeforeNamed) {
  constexpr TimeMs kMinute = 60000;
  ScopeIndex idx = Snapshot({
      Entry(1, "Poor Claire. Is she feeling better?",
            "She's back at the school library and busy as ever.", 0),
      Entry(2, "Did Tom like Boston on Monday?", "", kMinute),
      Entry(3, "He loved the library too.", "", 2 * kMinute),
      Entry(4, "And the library?", "It is busy at work.", 3 * kMinute),
      Entry(5, "Claire called.", "", 10 * kDay),
      Entry(6, "She works at the library.", "",
            20 * kDay),  // over an hour after: no message before
  });
  auto holds = [&](std::int64_t turn, int side, std::string_view term) {
    const int id = idx.messages.TermId(text::Stem(term));
    if (id < 0) return false;
    const int doc = idx.entries[static_cast<std::size_t>(turn - 1)].docs[side];
    for (const auto& post : idx.messages.Postings(id)) {
      if (static_cast<int>(post.doc) == doc) return post.tf > 0;
    }
    return false;
  };
  EXPECT_TRUE(holds(1, 1, "claire"));    // the other side of its exchange named her
  EXPECT_TRUE(holds(3, 0, "tom"));       // the exchange before
  EXPECT_TRUE(holds(3, 0, "boston"));    // (a place as well: named words only)
  EXPECT_FALSE(holds(3, 0, "monday"));   // no time word
  EXPECT_FALSE(holds(4, 1, "claire"));   // "it" is no person, and "And the library?" named nobody
  EXPECT_FALSE(holds(6, 0, "claire"));   // a session of its own
  EXPECT_FALSE(holds(2, 0, "library"));  // names herself: nothing added
  StmMessages stm;
  RankQuery q;
  q.terms = QueryTerms("Was Claire at the library?");
  const auto ranked = RankMessages(idx, stm, q, DefaultRankParams(), 3);
  ASSERT_FALSE(ranked.empty());
  EXPECT_EQ(ranked[0].entry->turn_id, 1);
  EXPECT_EQ(ranked[0].side, 1);
}

// A question naming the wrong person ("What class did Ben sign up for?" of
// Ana's class): another speaker's messages match its words better than any
// of the named speaker's, so the named speaker's factor shrinks by the
// ratio of the two best lexical scores, and Ana's messages beat Ben's
// chatter about his class.
TEST(Ranking, AQuestionNamingTheWrongPersonStillFindsWhatWasSaid) {
  ScopeIndex idx = Snapshot({
      Entry(1, "I'm thinking about a night woodworking class at the community college.",
            "You'd be great at it.", 0),
      Entry(2, "How is school?", "My class of sophomores is so loud.", 5 * kDay),
      Entry(3, "Any news?", "Not much, work is busy.", 9 * kDay),
      Entry(4, "Did you see the game?", "I did, what a finish.", 12 * kDay),
      Entry(5, "I signed up for the woodworking class!", "Nice.", 20 * kDay),
  });
  StmMessages stm;
  // Ana's sign-up is the best match and keeps the factor whoever wrote it
  // (speaker_keep); her first message about the class is below it.
  auto ahead = [&](const RankParams& p) {  // Ana's first message ranks above Ben's class
    RankQuery q;
    q.terms = QueryTerms("What evening class did Ben sign up for at the college?");
    int ana = -1, ben = -1, i = 0;
    for (const auto& m : RankMessages(idx, stm, q, p, 10)) {
      if (m.entry->turn_id == 1 && m.side == 0) ana = i;
      if (m.entry->turn_id == 2 && m.side == 1) ben = i;
      ++i;
    }
    EXPECT_GE(ana, 0);
    EXPECT_GE(ben, 0);
    return ana < ben;
  };
  RankParams no_rival = DefaultRankParams();
  no_rival.speaker_rival = 0;
  EXPECT_FALSE(ahead(no_rival));
  EXPECT_TRUE(ahead(DefaultRankParams()));
}

// A question of two clauses: each term knows the clause it is said in, and a
// message that answers one clause whole is not outweighed by the messages
// holding a few words of the other ("He's four, raced in Florida").
TEST(Ranking, AMessageAnsweringOneClauseOfAQuestionCountsAsCoveringIt) {
  const std::string question = "How old was Biscuit when Iris got him, and where did he race?";
  const auto terms = QueryTerms(question);
  for (const auto& t : terms) EXPECT_EQ(t.clause, t.term == text::Stem("race") ? 1 : 0) << t.term;
  for (const auto& t : QueryTerms("Did Ana and Ben go hiking, and when?"))
    EXPECT_EQ(t.clause, 0) << t.term;
  for (const auto& t : QueryTerms("Where did Ana and Ben meet?")) EXPECT_EQ(t.clause, 0) << t.term;
  ScopeIndex idx = Snapshot({
      Entry(1, "Biscuit and Iris went to the park.", "Ha.", 0),
      Entry(2, "Work is busy.", "Same here.", 2 * kDay),
      Entry(3, "Biscuit sleeps all day.", "Lucky him.", 4 * kDay),
      Entry(4, "He's four, raced in Florida for two years.", "What a career.", 6 * kDay),
      Entry(5, "Work is busy.", "Same here.", 8 * kDay),
  });
  StmMessages stm;
  // The score of the answer to "where did he race?" against that of the
  // message naming Biscuit and Iris (two words of the first clause).
  double race_coverage = 0;  // as the explanation says it
  auto race_against_names = [&](const RankParams& p) {
    RankQuery q;
    q.terms = QueryTerms(question);
    q.explain = true;
    double race = 0, names = 0;
    for (const auto& m : RankMessages(idx, stm, q, p, 10)) {
      if (m.side == 0 && m.entry->turn_id == 4) {
        race = m.score;
        race_coverage = m.why.coverage;
      }
      if (m.side == 0 && m.entry->turn_id == 1) names = m.score;
    }
    EXPECT_GT(race, 0);
    EXPECT_GT(names, 0);
    return names > 0 ? race / names : 0.0;
  };
  RankParams whole = DefaultRankParams();
  whole.coverage_clause = 0;
  // (Its share: "race" alone of the whole question, or all of its clause,
  // which counts half: 1 + coverage x 0.5.)
  const double with_clause = race_against_names(DefaultRankParams());
  EXPECT_DOUBLE_EQ(race_coverage, DefaultRankParams().coverage_clause);
  EXPECT_GT(with_clause, 1.3 * race_against_names(whole));
  EXPECT_LT(race_coverage, 0.5);
}

TEST(Ranking, QuestionsNamingOneSpeakerFavourTheirMessages) {
  ScopeIndex idx = Snapshot({Entry(1, "Ben, how was the hiking trip to the lake?", "", 0),
                             Entry(2, "Ben, hiking again?", "Hours of hiking, my legs hurt so much", 5 * kDay),
                             Entry(3, "I baked bread", "Smells good", 9 * kDay)});
  StmMessages stm;
  RankParams words_only = DefaultRankParams();
  words_only.speaker = 0;
  auto order = [&](const std::string& question, const RankParams& p) {
    RankQuery q;
    q.terms = QueryTerms(question);
    std::vector<std::pair<std::int64_t, int>> out;  // turn, side
    for (const auto& m : RankMessages(idx, stm, q, p, 10)) out.emplace_back(m.entry->turn_id, m.side);
    return out;
  };
  const std::pair<std::int64_t, int> ana_lake{1, 0}, ana_again{2, 0}, ben_hiked{2, 1};
  // On words alone the messages addressing Ben by name come first.
  auto plain = order("Where did Ben go hiking with the lake trip?", words_only);
  ASSERT_GE(plain.size(), 3u);
  EXPECT_EQ(plain[0], ana_lake);
  EXPECT_EQ(plain[1], ana_again);
  // About Ben: his own message rises above Ana's weaker match, while the
  // best match of the question's words stays first whoever wrote it.
  auto about_ben = order("Where did Ben go hiking with the lake trip?", DefaultRankParams());
  ASSERT_GE(about_ben.size(), 3u);
  EXPECT_EQ(about_ben[0], ana_lake);
  EXPECT_EQ(about_ben[1], ben_hiked);
  // A question naming both speakers is ranked on words alone.
  EXPECT_EQ(order("Did Ana and Ben go hiking with the lake trip?", DefaultRankParams()),
            order("Did Ana and Ben go hiking with the lake trip?", words_only));
}

TEST(Ranking, WordsWrittenHyphenatedJoinedOrApartMatch) {
  ScopeIndex idx =
      Snapshot({Entry(1, "I switched to a gluten-free diet in spring", "Good for you", 0),
                Entry(2, "My sister opened a dairy free bakery", "Lovely", kDay),
                Entry(3, "Free tickets for the concert!", "Nice", 2 * kDay),
                Entry(4, "The kids loved the self-care day", "", 3 * kDay),
                Entry(5, "We made coconut icecream", "", 4 * kDay),
                Entry(6, "The road trip to the coast was long", "", 5 * kDay),
                Entry(7, "Snow on the road, coffee in the cup", "", 6 * kDay),
                Entry(8, "How often do you all workout together?", "Three times a week", 7 * kDay),
                Entry(9, "Work was long and I was out late", "", 8 * kDay)});
  StmMessages stm;
  auto held = [&](const std::string& t) { return idx.messages.Df(t); };
  auto first = [&](const std::string& question) {
    RankQuery q;
    q.terms = QueryTerms(text::Tokenize(question), held);
    auto ranked = RankMessages(idx, stm, q, DefaultRankParams(), 10);
    return ranked.empty() ? std::pair<std::int64_t, int>{-1, -1}
                          : std::pair<std::int64_t, int>{ranked[0].entry->turn_id, ranked[0].side};
  };
  // A verb and its particle written as one ("work out": "workout").
  EXPECT_EQ(first("How often do they work out?").first, 8);
  const std::pair<std::int64_t, int> gluten{1, 0}, dairy{2, 0}, care{4, 0};
  EXPECT_EQ(first("Does she eat gluten?"), gluten);           // a part of a written word
  EXPECT_EQ(first("Is her diet gluten free?"), gluten);       // the parts apart
  EXPECT_EQ(first("Is her diet gluten-free?"), gluten);       // the word as written
  EXPECT_EQ(first("Who runs a dairy-free bakery?"), dairy);  // never written whole: its parts
  EXPECT_EQ(first("What did the kids love about self care?"), care);
  // Two words written as one, and one word written as two.
  EXPECT_EQ(first("What ice cream did they make?"), (std::pair<std::int64_t, int>{5, 0}));
  EXPECT_EQ(first("Where did the roadtrip go?"), (std::pair<std::int64_t, int>{6, 0}));
  const auto joined = QueryTerms(text::Tokenize("ice cream"), held);
  ASSERT_EQ(joined.size(), 3u);
  EXPECT_EQ(joined[1].term, "icecream");
  const auto apart = QueryTerms(text::Tokenize("roadtrips"), held);
  ASSERT_EQ(apart.size(), 3u);
  EXPECT_EQ(apart[1].term, "road");
  EXPECT_EQ(apart[2].term, "trip");
  EXPECT_EQ(first("How was the ice-cream?"), (std::pair<std::int64_t, int>{5, 0}));
  EXPECT_EQ(QueryTerms(text::Tokenize("coffee"), held).size(), 1u);  // a word the messages hold stays whole
  // A hyphenated word the messages hold whole is not split: its parts would
  // match every "free".
  const auto terms = QueryTerms(text::Tokenize("gluten-free"), held);
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(terms[0].term, text::Stem("gluten-free"));
  const auto split = QueryTerms(text::Tokenize("dairy-free"), held);
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[1].term, "dairi");
  EXPECT_EQ(split[2].term, "free");
  EXPECT_EQ(QueryTerms("dairy-free").size(), 1u);  // without `held`, never split
}

TEST(Ranking, AMisspeltWordIsReadAsTheNearestWordTheMessagesHoldAtHalfWeight) {
  ScopeIndex idx = Snapshot({Entry(1, "We went to the music festival in June", "", 0),
                             Entry(2, "Pasta for dinner again", "", kDay),
                             Entry(3, "The festival of lights, the festival of food", "", 2 * kDay),
                             Entry(4, "We ate snacks", "", 3 * kDay)});
  ASSERT_NE(wordnet::WordNet::Default(), nullptr);
  auto held = [&](const std::string& t) { return idx.messages.Df(t); };
  const auto terms = QueryTerms(text::Tokenize("the music fesetival"), held);
  ASSERT_EQ(terms.size(), 3u);
  EXPECT_EQ(terms[1].term, text::Stem("fesetival"));
  EXPECT_EQ(terms[2].term, text::Stem("festival"));
  EXPECT_EQ(terms[2].weight, 0.5);
  StmMessages stm;
  RankQuery q;
  q.terms = QueryTerms(text::Tokenize("When was the music fesetival?"), held);
  auto ranked = RankMessages(idx, stm, q, DefaultRankParams(), 10);
  ASSERT_GE(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].entry->turn_id, 1);
  EXPECT_EQ(ranked[1].entry->turn_id, 3);
  EXPECT_EQ(QueryTerms(text::Tokenize("musik"), held).size(), 1u);  // five letters: no guess
  EXPECT_EQ(QueryTerms(text::Tokenize("pastaa"), held).size(), 2u);
  EXPECT_EQ(QueryTerms(text::Tokenize("zzzzzzzz"), held).size(), 1u);  // nothing near
  // An English word (WordNet's) the messages do not hold is meant as it is.
  EXPECT_EQ(QueryTerms(text::Tokenize("snakes"), held).size(), 1u);
}

TEST(Ranking, AQuestionsBaseFormFindsIrregularForms) {
  // (WordNet's exception lists: the image beside the test binaries.)
  ASSERT_NE(wordnet::WordNet::Default(), nullptr);
  ScopeIndex idx = Snapshot({Entry(1, "I made a chocolate cake", "", 0),
                             Entry(2, "We went to the lake with the children", "", kDay),
                             Entry(3, "The cake recipe is long", "", 2 * kDay)});
  StmMessages stm;
  auto first = [&](const std::string& question) {
    RankQuery q;
    q.terms = QueryTerms(question);
    auto ranked = RankMessages(idx, stm, q, DefaultRankParams(), 10);
    return ranked.empty() ? -1 : ranked[0].entry->turn_id;
  };
  EXPECT_EQ(first("What cake did Ana make?"), 1);  // "made"; the newer "cake" message has no "make"
  EXPECT_EQ(first("Where does Ana go with her child?"), 2);
  EXPECT_EQ(first("Where did Ana go?"), 2);
}

TEST(Ranking, AShortFormOfChatAndItsFullWordFindEachOther) {
  ScopeIndex idx = Snapshot({Entry(1, "My fave band is Phoenix", "", 0),
                             Entry(2, "The band played for an hour", "", kDay),
                             Entry(3, "Her favorite dish is ramen", "", 2 * kDay),
                             Entry(4, "Dinner with the fam on Sunday", "", 3 * kDay),
                             Entry(5, "Sunday dinner was quiet", "", 4 * kDay),
                             Entry(6, "I went to an LGBTQ support group", "", 5 * kDay),
                             Entry(7, "We watched it on Disney+ last night", "", 6 * kDay)});
  StmMessages stm;
  auto held = [&](const std::string& t) { return idx.messages.Df(t); };
  auto found = [&](const std::string& question) {
    RankQuery q;
    q.terms = QueryTerms(text::Tokenize(question), held);
    std::vector<std::int64_t> ids;
    for (const auto& m : RankMessages(idx, stm, q, DefaultRankParams(), 10)) ids.push_back(m.entry->turn_id);
    return ids;
  };
  EXPECT_EQ(found("What is my favorite band?").front(), 1);  // the message's "fave"
  // The question's "fave": the messages saying either.
  auto fave = found("Which one is his fave?");
  std::sort(fave.begin(), fave.end());
  EXPECT_EQ(fave, (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(found("Who has Sunday dinner with family?").front(), 4);  // "fam"
  // Without a short form, a question's word stands for itself alone.
  EXPECT_EQ(QueryTerms(text::Tokenize("band"), held).size(), 1u);
  // A short form asks for its word alone (every message saying the short
  // form holds that word too).
  const auto terms = QueryTerms(text::Tokenize("bday"), held);
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(terms[0].term, text::Stem("birthday"));
  // A word with a plus is the word ("LGBTQ+": the tokenizer keeps the sign,
  // as for "C++"), either way.
  EXPECT_EQ(found("What LGBTQ+ events did I go to?").front(), 6);
  EXPECT_EQ(found("What did we watch on Disney?").front(), 7);
}

TEST(AnswerTypes, WhatKindOfThingAQuestionAsksFor) {
  // (WordNet's lexicographer files: the image beside the test binaries.)
  ASSERT_NE(wordnet::WordNet::Default(), nullptr);
  const std::uint32_t act = NounKindBit(4), location = NounKindBit(15), person = NounKindBit(18);
  auto asks = [](const char* q) { return QuestionAnswerType(q); };
  EXPECT_EQ(asks("What activities does Melanie partake in?").kind, act);
  EXPECT_EQ(asks("What activities does Melanie partake in?").word, "activities");
  EXPECT_EQ(asks("Which city did Jon visit last month?").kind, location);
  EXPECT_EQ(asks("What did Caroline research?").word, "research");        // the name is skipped
  EXPECT_EQ(asks("What kind of art does Caroline make?").word, "art");    // "kind of" too
  EXPECT_EQ(asks("what careers has Joanna's brother considered?").word, "careers");  // the possessive
  EXPECT_EQ(asks("Which relatives did Ana visit?").kind, person);
  EXPECT_EQ(asks("What's the city Ana likes most?").kind, location);
  EXPECT_EQ(asks("What is Caroline\u2019s identity?").word, "identity");  // a typographic apostrophe
  for (const char* none : {"Where does Ana live?", "What did Ana make?", "What did Ana like about it?",
                           "When did Ana go camping?", "What is it?", ""}) {
    EXPECT_EQ(asks(none).kind, 0u) << none;
  }
  // A message's words: the kinds they name; short words, stopwords and such verbs none.
  EXPECT_EQ(NounKindOf("camping"), act);
  EXPECT_EQ(NounKindOf("boston"), location);
  EXPECT_EQ(NounKindOf("made"), 0u);
  EXPECT_EQ(NounKindOf("going"), 0u);
  EXPECT_EQ(NounKindOf("fun"), 0u);
  EXPECT_EQ(NounKindOf("quickly"), 0u);
  EXPECT_EQ(NounKindOf("xyzzyq"), 0u);
}

TEST(Ranking, AMessageNamingTheKindOfThingAskedForCountsMore) {
  ASSERT_NE(wordnet::WordNet::Default(), nullptr);
  ScopeIndex idx = Snapshot({Entry(1, "I enjoy camping by the lake", "", 0),
                             Entry(2, "I enjoy my sofa by the lake", "", kDay),
                             Entry(3, "I enjoy activities by the lake", "", 2 * kDay)});
  EXPECT_NE(idx.messages.Kinds(0) & NounKindBit(4), 0u);  // "camping" is an act
  EXPECT_EQ(idx.messages.Kinds(1) & NounKindBit(4), 0u);
  const std::string question = "What activities does Ana enjoy by the lake?";
  const AnswerType answer = QuestionAnswerType(question);
  ASSERT_NE(answer.kind, 0u);
  RankQuery q;
  q.terms = QueryTerms(question);
  q.answer_kind = answer.kind;
  q.answer_term = text::Stem(answer.word);
  q.explain = true;
  StmMessages stm;
  auto order = [&](const RankParams& p) {
    std::vector<std::pair<std::int64_t, bool>> out;
    for (const auto& m : RankMessages(idx, stm, q, p, 10)) out.emplace_back(m.entry->turn_id, m.why.answer_type);
    return out;
  };
  RankParams off = DefaultRankParams();
  off.answer_type = 0;
  const auto plain = order(off);
  ASSERT_EQ(plain.size(), 3u);
  EXPECT_EQ(plain[0].first, 3);  // it holds the question's own word
  // Without the factor the sofa (newer) ties with camping and ranks above it;
  // with it camping ranks above the sofa. The message holding "activities"
  // itself gets no factor: its own words already match.
  auto at = [](const std::vector<std::pair<std::int64_t, bool>>& v, std::int64_t id) {
    return *std::find_if(v.begin(), v.end(), [&](const auto& x) { return x.first == id; });
  };
  auto rank_of = [](const std::vector<std::pair<std::int64_t, bool>>& v, std::int64_t id) {
    return std::find_if(v.begin(), v.end(), [&](const auto& x) { return x.first == id; }) - v.begin();
  };
  EXPECT_GT(rank_of(plain, 1), rank_of(plain, 2));
  const auto typed = order(DefaultRankParams());
  ASSERT_EQ(typed.size(), 3u);
  EXPECT_LT(rank_of(typed, 1), rank_of(typed, 2));
  EXPECT_TRUE(at(typed, 1).second);
  EXPECT_FALSE(at(typed, 2).second);
  EXPECT_FALSE(at(typed, 3).second);
  for (const auto& x : plain) EXPECT_FALSE(x.second) << x.first;
}

// Where no message holds the question's words, what they mean ranks: the
// built-in word vectors' neighbourhoods and means (RankParams::meaning).
// Where a message holds enough of them (meaning_gate), the words alone rank.
TEST(Ranking, WhereTheQuestionsWordsSayLittleTheirMeaningRanks) {
  const wordvec::WordVectors* words = wordvec::WordVectors::Default();
  ASSERT_NE(words, nullptr) << "no built-in word vectors beside the test binary";
  ScopeIndex idx = Snapshot({Entry(1, "Raj broke his wrist playing basketball", "Noted.", 0),
                             Entry(2, "The user is a freelance graphic designer", "Noted.", kDay),
                             Entry(3, "The database is PostgreSQL 15", "Noted.", 2 * kDay),
                             Entry(4, "Omar prefers tea to coffee", "Noted.", 3 * kDay)});
  StmMessages stm;
  int made = 0;  // the question meanings made: only when the gate opens
  auto ask = [&](const std::string& question, const RankParams& p) {
    RankQuery q;
    q.terms = QueryTerms(question);
    QuestionMeaning asked;
    q.meaning_of = [&]() -> const QuestionMeaning* {
      ++made;
      return MakeMeaning(*words, question, asked);
    };
    q.explain = true;
    return RankMessages(idx, stm, q, p, 10);
  };
  RankParams words_only = DefaultRankParams();
  words_only.meaning = 0;
  for (const auto& [question, turn] :
       {std::pair<std::string, std::int64_t>{"How did he injure his arm?", 1},
        {"Is he self-employed, and in what field?", 2}}) {
    const auto by_words = ask(question, words_only);
    EXPECT_TRUE(by_words.empty() || by_words.front().entry->turn_id != turn) << question;
    const auto ranked = ask(question, DefaultRankParams());
    ASSERT_FALSE(ranked.empty()) << question;
    EXPECT_EQ(ranked.front().entry->turn_id, turn) << question;
    EXPECT_EQ(ranked.front().side, 0) << question;  // what the user said, not "Noted."
    EXPECT_GT(ranked.front().why.meaning, 0.0) << question;
  }
  EXPECT_EQ(made, 2);  // (not with meaning 0)
  // A question naming a speaker whose words a message holds: the gate is
  // shut, the ranking the words' alone, and the question's meaning not even
  // made.
  const std::string held = "Which database does Ana run?";
  const auto with = ask(held, DefaultRankParams()), without = ask(held, words_only);
  EXPECT_EQ(made, 2);
  ASSERT_FALSE(with.empty());
  EXPECT_EQ(with.front().entry->turn_id, 3);
  ASSERT_EQ(with.size(), without.size());
  for (std::size_t i = 0; i < with.size(); ++i) {
    EXPECT_EQ(with[i].entry, without[i].entry);
    EXPECT_EQ(with[i].score, without[i].score);
    EXPECT_EQ(with[i].why.meaning, 0.0);
  }
  // Naming no speaker (what an agent asks of its user's memory), the gate is
  // meaning_gate_unnamed, open wherever a message holds less than all of
  // the question's words: the meaning is made and counts, and the message
  // holding its words still ranks first.
  const auto unnamed = ask("Which database do we run?", DefaultRankParams());
  EXPECT_EQ(made, 3);
  ASSERT_FALSE(unnamed.empty());
  EXPECT_EQ(unnamed.front().entry->turn_id, 3);
  RankParams gated = DefaultRankParams();
  gated.meaning_gate_unnamed = gated.meaning_gate;
  const auto shut = ask("Which database do we run?", gated);
  EXPECT_EQ(made, 3);  // (the one gate for every question: shut)
  ASSERT_FALSE(shut.empty());
  EXPECT_EQ(shut.front().entry->turn_id, 3);
  // Each turn's meaning is made once and kept with the snapshot.
  const TurnMeaning* kept = idx.entries[0].meaning.IfMade();
  ASSERT_NE(kept, nullptr);
  EXPECT_FALSE(kept->side[0].known.empty());
  EXPECT_FALSE(kept->side[0].mean.empty());
  ask("How did he injure his arm?", DefaultRankParams());
  EXPECT_EQ(idx.entries[0].meaning.IfMade(), kept);
}

// An open gate gives every message some meaning; only the meaning_top
// messages whose meaning scores best, of those the words find nothing in or
// near, add it: a context packed by rank does not fill with the whole
// dialogue.
TEST(Ranking, AnOpenGateRanksOnlyTheMessagesThatMeanMost) {
  const wordvec::WordVectors* words = wordvec::WordVectors::Default();
  ASSERT_NE(words, nullptr) << "no built-in word vectors beside the test binary";
  const char* said[] = {"We repainted the kitchen in a pale green",
                        "Raj broke his wrist playing basketball",
                        "I twisted my ankle on the stairs",
                        "My shoulder hurts after swimming",
                        "She cut her finger while cooking dinner",
                        "He fell off his bike and bruised a knee",
                        "The doctor put a cast on my leg",
                        "I pulled a muscle lifting boxes",
                        "My back aches from the office chair",
                        "The quarterly report is due on Friday",
                        "The bakery downstairs sells great sourdough",
                        "Our team moved the standup to noon"};
  std::vector<TurnEntry> entries;
  std::int64_t id = 0;
  // (Days apart: no message stands near another in time.)
  for (const char* text : said) {
    entries.push_back(Entry(id + 1, text, "", static_cast<TimeMs>(id) * kDay));
    ++id;
  }
  ScopeIndex idx = Snapshot(std::move(entries));
  StmMessages stm;
  const std::string question = "How did he injure his arm?";
  auto ask = [&](double top) {
    RankQuery q;
    q.terms = QueryTerms(question);
    QuestionMeaning asked;
    q.meaning_of = [&]() { return MakeMeaning(*words, question, asked); };
    q.explain = true;
    RankParams p = DefaultRankParams();
    p.meaning_top = top;
    return RankMessages(idx, stm, q, p, 100);
  };
  const auto all = ask(0), three = ask(3);
  ASSERT_FALSE(all.empty());
  ASSERT_FALSE(three.empty());
  EXPECT_GT(all.size(), 3u);  // (with no cap, more than three messages mean something)
  ASSERT_EQ(three.size(), 3u);
  // The three kept are the three that meant most.
  for (std::size_t i = 0; i < three.size(); ++i) {
    EXPECT_EQ(three[i].entry, all[i].entry);
    EXPECT_DOUBLE_EQ(three[i].why.meaning, all[i].why.meaning);
    EXPECT_GT(three[i].why.meaning, 0.0);
  }
}

// The gate of a question naming no speaker is read in a scope of 2,000
// messages at most: in a larger one the meaning pass over every message would
// cost most such questions milliseconds, and the one gate holds.
TEST(Ranking, AQuestionNamingNoSpeakerHasItsOwnGateOnlyInASmallScope) {
  const wordvec::WordVectors* words = wordvec::WordVectors::Default();
  ASSERT_NE(words, nullptr) << "no built-in word vectors beside the test binary";
  auto scope = [](std::size_t exchanges) {
    std::vector<TurnEntry> entries;
    entries.push_back(Entry(1, "The database is PostgreSQL 15", "Noted.", 0));
    for (std::size_t i = 1; i < exchanges; ++i) {
      entries.push_back(Entry(static_cast<std::int64_t>(i) + 1,
                              "We talked about the weather " + std::to_string(i), "Noted.",
                              static_cast<TimeMs>(i) * kDay));
    }
    return Snapshot(std::move(entries));
  };
  // "Which database do we run?": one message holds "database", none "run".
  auto made = [&](const ScopeIndex& idx) {
    StmMessages stm;
    RankQuery q;
    q.terms = QueryTerms("Which database do we run?");
    QuestionMeaning asked;
    bool was_made = false;
    q.meaning_of = [&]() {
      was_made = true;
      return MakeMeaning(*words, "Which database do we run?", asked);
    };
    const auto ranked = RankMessages(idx, stm, q, DefaultRankParams(), 10);
    EXPECT_FALSE(ranked.empty());
    if (!ranked.empty()) {
      EXPECT_EQ(ranked.front().entry->turn_id, 1);
    }
    return was_made;
  };
  EXPECT_TRUE(made(scope(1000)));   // 2,000 messages: its own gate, open
  EXPECT_FALSE(made(scope(1001)));  // 2,002: the one gate, shut
}

}  // namespace
}  // namespace engram::retrieval
