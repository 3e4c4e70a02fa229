// ProviderConfig: layering (file < env < flags), fallbacks, TOML errors, redaction.
#include "models/openai/provider_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "testing/temp_dir.hpp"

namespace engram {
namespace {

using testing::TempDir;
using testing::WriteFile;

EnvFn FakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

const EnvFn kNoEnv = FakeEnv({});

TEST(ProviderConfig, NothingConfiguredGivesDefaults) {
  TempDir dir;
  auto c = LoadProviderConfig(dir.path(), {}, kNoEnv);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->HasLlm());
  EXPECT_FALSE(c->HasEmbed());
  EXPECT_EQ(c->connect_timeout_ms, 5000);
  EXPECT_EQ(c->total_timeout_ms, 120000);
  EXPECT_EQ(c->max_retries, 4);
  EXPECT_LT(c->temperature, 0);
  EXPECT_EQ(c->max_tokens, 0);
}

// An empty engram.toml (found by fuzz_config) made every command fail with
// "cannot read": it is a file without settings. A folder of that name is
// still unreadable.
TEST(ProviderConfig, AnEmptyFileIsNoSettings) {
  TempDir dir;
  WriteFile(dir.File("engram.toml"), "");
  auto c = LoadProviderConfig(dir.path(), {}, kNoEnv);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->HasLlm());
  EXPECT_EQ(c->max_retries, 4);
  TempDir other;
  std::filesystem::create_directory(other.File("engram.toml"));
  EXPECT_EQ(LoadProviderConfig(other.path(), {}, kNoEnv).status().code(), StatusCode::kIoError);
}

TEST(ProviderConfig, FileThenEnvThenFlags) {
  TempDir dir;
  WriteFile(dir.File("engram.toml"), R"(# engram providers
timeout_s = 30
[llm]
base_url = "http://file.example/v1/"   # trailing slash dropped
model = "file-model"
api_key = 'file-key'
max_retries = 2
temperature = 0.2
max_tokens = 1_024

[embed]
model = "file-embed"
connect_timeout_s = 1.5
)");
  auto env = FakeEnv({{"ENGRAM_LLM_MODEL", "env-model"},
                      {"ENGRAM_EMBED_MODEL", "env-embed"},
                      {"ENGRAM_EMBED_BASE_URL", "http://env.example/v1"},
                      {"OPENAI_API_KEY", "openai-key"}});
  auto c = LoadProviderConfig(dir.path(), {{"embed_model", "flag-embed"}, {"max_retries", "3"}}, env);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->llm_base_url, "http://file.example/v1");  // file only
  EXPECT_EQ(c->llm_model, "env-model");                   // env over file
  EXPECT_EQ(c->embed_model, "flag-embed");                // flag over env over file
  EXPECT_EQ(c->embed_base_url, "http://env.example/v1");
  EXPECT_EQ(c->llm_api_key, "file-key");                  // OPENAI_API_KEY is only a fallback
  EXPECT_EQ(c->embed_api_key, "file-key");                // falls back to the LLM key
  EXPECT_EQ(c->total_timeout_ms, 30000);
  EXPECT_EQ(c->connect_timeout_ms, 1500);
  EXPECT_EQ(c->max_retries, 3);
  EXPECT_DOUBLE_EQ(c->temperature, 0.2);
  EXPECT_EQ(c->max_tokens, 1024);
  EXPECT_TRUE(c->HasLlm());
  EXPECT_TRUE(c->HasEmbed());
}

TEST(ProviderConfig, KeyFallbacks) {
  auto only_openai = LoadProviderConfig("", {}, FakeEnv({{"OPENAI_API_KEY", "openai-key"}}));
  ASSERT_TRUE(only_openai.ok());
  EXPECT_EQ(only_openai->llm_api_key, "openai-key");
  EXPECT_EQ(only_openai->embed_api_key, "openai-key");

  auto env = FakeEnv({{"ENGRAM_LLM_API_KEY", "llm-key"}, {"OPENAI_API_KEY", "openai-key"}});
  auto llm_only = LoadProviderConfig("", {}, env);
  ASSERT_TRUE(llm_only.ok());
  EXPECT_EQ(llm_only->llm_api_key, "llm-key");
  EXPECT_EQ(llm_only->embed_api_key, "llm-key");

  auto both = LoadProviderConfig("", {{"embed_api_key", "flag-embed-key"}}, env);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->embed_api_key, "flag-embed-key");
  EXPECT_EQ(both->llm_api_key, "llm-key");
}

TEST(ProviderConfig, BaseUrlDefaultsAndFallbacks) {
  auto c = LoadProviderConfig("", {{"llm_model", "gpt-4o-mini"}, {"embed_model", "text-embedding-3-small"}}, kNoEnv);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->llm_base_url, kOpenAiDefaultBaseUrl);
  EXPECT_EQ(c->embed_base_url, kOpenAiDefaultBaseUrl);

  auto local = LoadProviderConfig(
      "", {{"llm_base_url", "http://127.0.0.1:8080/v1"}, {"llm_model", "m"}, {"embed_model", "e"}}, kNoEnv);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->embed_base_url, "http://127.0.0.1:8080/v1");

  auto bad = LoadProviderConfig("", {{"llm_base_url", "ftp://x"}}, kNoEnv);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ProviderConfig, FlagErrors) {
  auto unknown = LoadProviderConfig("", {{"llm_modle", "x"}}, kNoEnv);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "unknown provider flag llm_modle");
  auto nan = LoadProviderConfig("", {{"timeout_s", "soon"}}, kNoEnv);
  ASSERT_FALSE(nan.ok());
  EXPECT_EQ(nan.status().message(), "flag timeout_s: must be a number");
  auto range = LoadProviderConfig("", {{"max_retries", "99"}}, kNoEnv);
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.status().message(), "flag max_retries: max_retries must be an integer 0..10");
}

Status ParseToml(const std::string& text) {
  ProviderConfig c;
  return ParseProviderToml(text, "engram.toml", c);
}

TEST(ProviderConfig, TomlErrorsNameTheLine) {
  EXPECT_EQ(ParseToml("[llm]\nmodel = \"m\"\nfoo = 1\n").message(), "engram.toml:3: unknown key foo");
  EXPECT_EQ(ParseToml("\n[chat]\n").message(), "engram.toml:2: unknown table (expected [llm] or [embed])");
  EXPECT_EQ(ParseToml("[llm]\nmodel = \"a\"\nmodel = \"b\"\n").message(), "engram.toml:3: duplicate key model");
  EXPECT_EQ(ParseToml("[llm]\nmodel \"a\"\n").message(), "engram.toml:2: expected '=' after model");
  // A key pasted on a line of its own is never repeated (found by fuzz_config).
  EXPECT_EQ(ParseToml("[llm]\nsk-proj-Abc123secret\n").message(), "engram.toml:2: expected 'key = value'");
  EXPECT_EQ(ParseToml("model = \"a\"\n").message(), "engram.toml:1: model must be inside [llm] or [embed]");
  EXPECT_EQ(ParseToml("[embed]\ntemperature = 0.5\n").message(), "engram.toml:2: temperature is only valid in [llm]");
  EXPECT_EQ(ParseToml("[llm]\nmax_retries = \"3\"\n").message(), "engram.toml:2: max_retries must be a number");
  EXPECT_EQ(ParseToml("[llm]\nmodel = 3\n").message(), "engram.toml:2: model must be a string");
  EXPECT_EQ(ParseToml("[llm]\nmodel = \"a\" extra\n").message(), "engram.toml:2: model: unexpected text after the value");
  EXPECT_EQ(ParseToml("[llm]\ntimeout_s = -1\n").message(), "engram.toml:2: timeout_s must be in (0, 86400] seconds");
  EXPECT_EQ(ParseToml("[llm\n").message(), "engram.toml:1: missing ']'");
  // A broken secret line is reported without its value.
  const Status st = ParseToml("[llm]\n# key below\napi_key = \"sk-leaky-secret\n");
  EXPECT_EQ(st.message(), "engram.toml:3: api_key: unterminated string");
  EXPECT_EQ(st.message().find("leaky"), std::string::npos);
}

TEST(ProviderConfig, TomlStringForms) {
  ProviderConfig c;
  ASSERT_TRUE(ParseProviderToml("[llm]\r\nmodel = \"a\\\"b\\u00e9#\" # comment\r\napi_key='C:\\raw'\r\n", "f", c).ok());
  EXPECT_EQ(c.llm_model, "a\"b\xC3\xA9#");
  EXPECT_EQ(c.llm_api_key, "C:\\raw");
}

TEST(ProviderConfig, FileErrorsAreReportedByLoad) {
  TempDir dir;
  WriteFile(dir.File("engram.toml"), "[llm]\nmodel = \n");
  auto c = LoadProviderConfig(dir.path(), {}, kNoEnv);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(), "engram.toml:2: model: missing value");
}

TEST(ProviderConfig, RedactedNeverShowsKeys) {
  ProviderConfig c;
  c.llm_base_url = "https://user:pw@api.example.com/v1?api-key=sk-in-query";
  c.llm_model = "gpt-4o-mini";
  c.llm_api_key = "sk-very-secret-1";
  c.embed_api_key = "sk-very-secret-2";
  const std::string r = c.Redacted();
  EXPECT_EQ(r.find("sk-"), std::string::npos) << r;
  EXPECT_EQ(r.find("pw"), std::string::npos) << r;
  EXPECT_NE(r.find("https://api.example.com/v1"), std::string::npos) << r;
  EXPECT_NE(r.find("gpt-4o-mini"), std::string::npos) << r;
  EXPECT_NE(r.find("api_key=set"), std::string::npos) << r;
}

}  // namespace
}  // namespace engram
