// OpenAiClient::Embed and OpenAiEmbedder against the scripted loopback server.
#include "models/openai/openai_embedder.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/http/http_client.hpp"
#include "models/openai/openai_client.hpp"
#include "testing/fake_openai_server.hpp"

namespace engram {
namespace {

using testing::FakeOpenAiServer;
using testing::FakeReply;
using Json = nlohmann::json;

class OpenAiEmbedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    ASSERT_TRUE(server_.ok());
  }
  ProviderConfig Config() const {
    ProviderConfig c;
    c.embed_base_url = server_.base_url();
    c.embed_model = "test-embed";
    c.embed_api_key = "sk-embed-key";
    c.total_timeout_ms = 5000;
    return c;
  }
  std::unique_ptr<OpenAiClient> Client(ProviderConfig c) {
    OpenAiClientOptions o;
    o.sleeper = [](std::chrono::milliseconds) {};
    return std::make_unique<OpenAiClient>(std::move(c), std::make_shared<CurlHttpClient>(), o);
  }
  std::unique_ptr<OpenAiClient> Client() { return Client(Config()); }

  FakeOpenAiServer server_;
};

TEST_F(OpenAiEmbedTest, EmbeddingsAreBatchedAndOrderedByIndex) {
  server_.SetEmbedDimension(16);
  server_.SetReverseEmbedOrder(true);
  std::vector<std::string> texts;
  for (int i = 0; i < 150; ++i) texts.push_back("text number " + std::to_string(i) + " about topic " + std::to_string(i % 7));
  auto client = Client();
  auto r = client->Embed(texts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 150u);
  for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_EQ((*r)[i], FakeOpenAiServer::VectorFor(texts[i], 16)) << i;
  auto bodies = server_.embed_bodies();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(Json::parse(bodies[0])["input"].size(), 64u);
  EXPECT_EQ(Json::parse(bodies[1])["input"].size(), 64u);
  EXPECT_EQ(Json::parse(bodies[2])["input"].size(), 22u);
  EXPECT_EQ(Json::parse(bodies[2])["model"], "test-embed");
  EXPECT_EQ(client->Stats().embed_calls, 3);
  EXPECT_EQ(client->Stats().embed_tokens, 3 * 150);
}

TEST_F(OpenAiEmbedTest, EmbeddingReplyWithWrongCountIsUnavailable) {
  server_.QueueEmbed(FakeReply{200, {}, R"({"data":[{"index":0,"embedding":[1,0]}]})"});
  auto r = Client()->Embed({"a", "b"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "embed endpoint: reply has 1 vectors for 2 inputs");
}

TEST_F(OpenAiEmbedTest, EmbedderProbesNormalisesAndCaches) {
  server_.SetEmbedDimension(32);
  auto client = std::shared_ptr<OpenAiClient>(Client());
  auto made = OpenAiEmbedder::Create(client, 8);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  OpenAiEmbedder& e = **made;
  EXPECT_EQ(e.Dimension(), 32);
  EXPECT_EQ(e.Name(), "openai:test-embed");
  EXPECT_FALSE(e.IsBuiltin());
  EXPECT_EQ(server_.embed_requests(), 1);

  // Unnormalised vectors come back unit length.
  server_.QueueEmbed(FakeReply{200, {}, Json({{"data", {{{"index", 0}, {"embedding", Vector(32, 2.0f)}}}}}).dump()});
  auto a = e.Embed({"alpha"});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_NEAR(Dot((*a)[0], (*a)[0]), 1.0f, 1e-5);

  // Cached texts, duplicates and empty texts cost no extra inputs.
  auto b = e.Embed({"alpha", "beta", "beta", ""});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(server_.embed_requests(), 3);
  EXPECT_EQ(Json::parse(server_.last_embed_body())["input"], Json::array({"beta"}));
  EXPECT_EQ((*b)[0], (*a)[0]);
  EXPECT_EQ((*b)[1], (*b)[2]);
  EXPECT_EQ((*b)[3], Vector(32, 0.0f));
  EXPECT_NEAR(Dot((*b)[1], (*b)[1]), 1.0f, 1e-5);
  EXPECT_EQ(e.cache_hits(), 1);
  ASSERT_TRUE(e.Embed({"alpha", "beta"}).ok());
  EXPECT_EQ(server_.embed_requests(), 3);

  // The cache is bounded.
  std::vector<std::string> many;
  for (int i = 0; i < 20; ++i) many.push_back("t" + std::to_string(i));
  ASSERT_TRUE(e.Embed(many).ok());
  EXPECT_EQ(e.cache_size(), 8u);
}

TEST_F(OpenAiEmbedTest, EmbedderRejectsDimensionChange) {
  server_.SetEmbedDimension(8);
  auto made = OpenAiEmbedder::Create(std::shared_ptr<OpenAiClient>(Client()));
  ASSERT_TRUE(made.ok());
  server_.SetEmbedDimension(12);
  auto r = (*made)->Embed({"new text"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "embed endpoint: dimension changed from 8 to 12");
}

TEST_F(OpenAiEmbedTest, EmbedderCreateFailsWhenEndpointDown) {
  ProviderConfig c = Config();
  c.max_retries = 0;
  server_.QueueEmbed(FakeOpenAiServer::Error(503));
  auto made = OpenAiEmbedder::Create(std::shared_ptr<OpenAiClient>(Client(c)));
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().message(), "embed endpoint: HTTP 503");
}

}  // namespace
}  // namespace engram
