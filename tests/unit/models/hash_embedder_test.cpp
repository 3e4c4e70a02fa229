#include "models/builtin/hash_embedder.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "models/embedder.hpp"

namespace engram {
namespace {

float Norm(const Vector& v) { return std::sqrt(Dot(v, v)); }

float Cosine(HashEmbedder& e, const std::string& a, const std::string& b) {
  return Dot(e.EmbedOne(a), e.EmbedOne(b));
}

TEST(VectorMath, DotHandlesTailsAndPointers) {
  Vector a(13), b(13);
  float expected = 0.0f;
  for (int i = 0; i < 13; ++i) {
    a[i] = static_cast<float>(i + 1);
    b[i] = static_cast<float>(13 - i);
    expected += a[i] * b[i];
  }
  EXPECT_FLOAT_EQ(Dot(a, b), expected);
  EXPECT_FLOAT_EQ(Dot(a.data(), b.data(), 13), expected);
  EXPECT_FLOAT_EQ(Dot(a.data(), b.data(), 0), 0.0f);
  EXPECT_FLOAT_EQ(Dot(Vector{}, Vector{}), 0.0f);
}

TEST(VectorMath, NormalizeScalesToUnitAndKeepsZero) {
  Vector v{3.0f, 4.0f};
  Normalize(v);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], 0.8f);
  Vector zero(8, 0.0f);
  Normalize(zero);
  for (float x : zero) EXPECT_EQ(x, 0.0f);
}

TEST(HashEmbedder, VectorsStayTheSameBitForBit) {
  // Stores keep "builtin-hash-v1" vectors: a change of the features, of
  // their summation order or of any float operation would make new vectors
  // disagree with stored ones. FNV-1a of each vector's float bits.
  HashEmbedder e;
  const std::vector<std::pair<std::string, std::uint64_t>> golden = {
      {"Caroline went to the LGBTQ support group yesterday and felt accepted.", 0x161d9dc7ab0614feull},
      {"Na\u00efve caf\u00e9 owners in Z\u00fcrich serve cr\u00e8me br\u00fbl\u00e9e; \u6771\u4eac too!", 0xfd3dbc3b22bcf132ull},
      {"aaa aaa aaab aa a\tb", 0x27dcb9079df2de9aull}};
  for (const auto& [text, want] : golden) {
    auto v = e.Embed({text});
    ASSERT_TRUE(v.ok());
    std::uint64_t h = 1469598103934665603ull;
    for (float x : (*v)[0]) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &x, sizeof bits);
      h = (h ^ bits) * 1099511628211ull;
    }
    EXPECT_EQ(h, want) << text;
  }
}

TEST(HashEmbedder, Identity) {
  HashEmbedder e;
  EXPECT_EQ(e.Name(), "builtin-hash-v1");
  EXPECT_EQ(e.Dimension(), 512);
  EXPECT_TRUE(e.IsBuiltin());
  EXPECT_EQ(HashEmbedder(64).Dimension(), 64);
  EXPECT_EQ(HashEmbedder(0).Dimension(), 512);
}

TEST(HashEmbedder, EmbedReturnsOneNormalisedVectorPerText) {
  HashEmbedder e;
  auto r = e.Embed({"I love hiking in the mountains", "", "how are you", "!!! ..."});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 4u);
  for (const Vector& v : *r) EXPECT_EQ(v.size(), 512u);
  EXPECT_NEAR(Norm((*r)[0]), 1.0f, 1e-5);
  EXPECT_FLOAT_EQ(Norm((*r)[1]), 0.0f);       // empty text -> zero vector
  EXPECT_NEAR(Norm((*r)[2]), 1.0f, 1e-5);     // stopwords only: falls back to tokens
  EXPECT_FLOAT_EQ(Norm((*r)[3]), 0.0f);       // no tokens at all
  auto empty = e.Embed({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(HashEmbedder, DeterministicAcrossInstances) {
  HashEmbedder a, b;
  const std::string text = "Caroline went to a support group; node.js and C++ too.";
  EXPECT_EQ(a.EmbedOne(text), b.EmbedOne(text));
  EXPECT_EQ(a.EmbedOne(text), a.EmbedOne(text));
  EXPECT_NE(a.EmbedOne(text), a.EmbedOne("something else entirely"));
}

TEST(HashEmbedder, SimilarTextsAreCloserThanUnrelatedOnes) {
  HashEmbedder e;
  const float similar = Cosine(e, "I love hiking in the mountains", "We went hiking up a mountain trail");
  const float unrelated =
      Cosine(e, "I love hiking in the mountains", "The quarterly tax report is due on Friday");
  EXPECT_GT(similar, 0.3f);
  EXPECT_GT(similar, unrelated + 0.2f);
  EXPECT_NEAR(Cosine(e, "pottery class", "pottery class"), 1.0f, 1e-5);
}

TEST(HashEmbedder, MorphologicalVariantsAndTyposLandNearby) {
  HashEmbedder e;
  EXPECT_GT(Cosine(e, "running", "run"), 0.9f);  // same stem
  EXPECT_GT(Cosine(e, "She is running daily", "She runs daily"), 0.9f);
  const float typo = Cosine(e, "restaurant recommendations", "resturant recomendations");
  const float other = Cosine(e, "restaurant recommendations", "garden tomatoes");
  EXPECT_GT(typo, 0.15f);
  EXPECT_GT(typo, other + 0.1f);
  EXPECT_GT(Cosine(e, "runner", "run"), Cosine(e, "runner", "tomato"));
}

TEST(HashEmbedder, WorksForNonLatinScripts) {
  HashEmbedder e;
  const Vector v = e.EmbedOne("我喜欢北京的秋天");
  EXPECT_NEAR(Norm(v), 1.0f, 1e-5);
  EXPECT_GT(Cosine(e, "我喜欢北京的秋天", "北京的秋天很美"), Cosine(e, "我喜欢北京的秋天", "hiking"));
}

TEST(HashEmbedder, ThreadSafe) {
  HashEmbedder e;
  const std::vector<std::string> texts = {"alpha beta gamma", "support group meeting",
                                          "painting a sunrise", "new job at the bakery"};
  auto expected = e.Embed(texts);
  ASSERT_TRUE(expected.ok());
  std::vector<int> same(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto r = e.Embed(texts);
        same[t] += r.ok() && *r == *expected;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int s : same) EXPECT_EQ(s, 50);
}

}  // namespace
}  // namespace engram
