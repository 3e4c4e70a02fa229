// `engram reembed`, the real binary against the fake OpenAI-compatible
// embeddings endpoint on loopback: built-in -> endpoint (interrupted, then
// resumed), what other commands say meanwhile, and back to the built-in
// embedder.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/fake_openai_server.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace engram {
namespace {

using nlohmann::json;
namespace et = engram::testing;

class ReembedCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok());
    et::WriteFile(dir_.File("engram.toml"), "max_retries = 0\ntimeout_s = 5\n");
  }
  et::ProcessResult Run(std::vector<std::string> args, bool with_embed) const {
    args.insert(args.begin(), ENGRAM_BINARY);
    std::vector<std::string> env = {"ENGRAM_HOME=" + dir_.path(), "ENGRAM_DB=", "ENGRAM_USER=priya",
                                    "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1", "OPENAI_API_KEY=sk-test-secret",
                                    "ENGRAM_LLM_BASE_URL=", "ENGRAM_LLM_MODEL="};
    env.push_back("ENGRAM_EMBED_BASE_URL=" + (with_embed ? server_.base_url() : std::string()));
    env.push_back(std::string("ENGRAM_EMBED_MODEL=") + (with_embed ? "fake-embed" : ""));
    return et::RunProcess(args, "", env, std::chrono::seconds(60));
  }
  json Stats(bool with_embed) const {
    auto r = Run({"stats", "--json"}, with_embed);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }
  // One valid embeddings reply with a single vector (answers the probe).
  static et::FakeReply ProbeReply() {
    et::FakeReply r;
    r.body = json({{"object", "list"},
                   {"data", {{{"object", "embedding"}, {"index", 0},
                              {"embedding", et::FakeOpenAiServer::VectorFor("dimension probe", 64)}}}}})
                 .dump();
    return r;
  }
  et::TempDir dir_;
  et::FakeOpenAiServer server_;
};

TEST_F(ReembedCli, MigratesToTheEndpointResumableAndBack) {
  ASSERT_EQ(Run({"import", ENGRAM_SOURCE_DIR "/samples/dialogue.jsonl"}, false).exit_code, 0);
  ASSERT_EQ(Run({"maintain"}, false).exit_code, 0);
  const json before = Stats(false);
  const int pages = before["mtm_pages"].get<int>() + before["archived_pages"].get<int>();
  ASSERT_GT(pages, 0);

  // Without a configured endpoint there is nothing to migrate to.
  auto none = Run({"reembed"}, false);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--embed-model"), std::string::npos) << none.err;

  // The endpoint answers the probe, then is down: the migration starts and stops.
  server_.QueueEmbed(ProbeReply());
  server_.QueueEmbed(et::FakeOpenAiServer::Error(503));
  auto broken = Run({"reembed", "--json"}, true);
  EXPECT_EQ(broken.exit_code, 1) << broken.out << broken.err;
  EXPECT_NE(broken.err.find("503"), std::string::npos) << broken.err;

  // Meanwhile: the new embedder is told to finish, the old one still works.
  auto blocked = Run({"stats"}, true);
  EXPECT_EQ(blocked.exit_code, 1);
  EXPECT_NE(blocked.err.find("is being migrated to openai:fake-embed (0 of "), std::string::npos) << blocked.err;
  EXPECT_NE(blocked.err.find("run `engram reembed` to finish"), std::string::npos) << blocked.err;
  EXPECT_EQ(Stats(false)["mtm_pages"], before["mtm_pages"]);

  auto r = Run({"reembed", "--json"}, true);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["from"], "builtin-hash-v1");
  EXPECT_EQ(j["to"], "openai:fake-embed");
  EXPECT_EQ(j["to_dim"], 64);
  EXPECT_EQ(j["pages"], pages);
  EXPECT_EQ(j["segments"], before["mtm_segments"].get<int>() + before["archived_segments"].get<int>());
  EXPECT_TRUE(j["resumed"].get<bool>());
  EXPECT_TRUE(j.contains("facts"));

  // The store now works with the endpoint and refuses the built-in embedder.
  auto ret = Run({"retrieve", "When do my flights to Hanoi leave?"}, true);
  ASSERT_EQ(ret.exit_code, 0) << ret.err;
  EXPECT_NE(ret.out.find("Hanoi"), std::string::npos) << ret.out;
  auto old = Run({"stats"}, false);
  EXPECT_EQ(old.exit_code, 1);
  EXPECT_NE(old.err.find("was built with embedder openai:fake-embed"), std::string::npos) << old.err;

  // And back, without a request to the endpoint.
  const int requests = server_.embed_requests();
  auto back = Run({"reembed", "--builtin", "--json"}, true);
  ASSERT_EQ(back.exit_code, 0) << back.err;
  auto b = json::parse(back.out, nullptr, false);
  EXPECT_EQ(b["from"], "openai:fake-embed");
  EXPECT_EQ(b["to"], "builtin-hash-v1");
  EXPECT_EQ(b["pages"], pages);
  EXPECT_FALSE(b["resumed"].get<bool>());
  EXPECT_EQ(server_.embed_requests(), requests);
  EXPECT_EQ(Stats(false)["mtm_pages"], before["mtm_pages"]);
  auto again = Run({"reembed", "--builtin"}, false);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("nothing to migrate"), std::string::npos) << again.out;
}

}  // namespace
}  // namespace engram
