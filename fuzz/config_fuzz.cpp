// The config file reader (models/openai/provider_config: engram.toml, a TOML
// subset), both alone and as `LoadProviderConfig` reads it from a home folder
// (with an empty environment). Invariants: errors are InvalidArgument (an
// Internal error means an exception was caught); accepted settings are in
// their documented ranges; base URLs are http(s) without trailing slashes; no
// error message and no Redacted() line contains an API key ("sk-...").
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "fuzz_support.hpp"
#include "models/openai/provider_config.hpp"

namespace {

engram::fuzz::ScratchDir& Home() {
  static engram::fuzz::ScratchDir dir;
  return dir;
}

// `input`: the file; a key that also appears in it elsewhere (as a key name,
// say) may be named as that.
bool Leaks(const std::string& text, const engram::ProviderConfig& c, const std::string& input) {
  for (const std::string* key : {&c.llm_api_key, &c.embed_api_key}) {
    if (input.find(*key) != input.rfind(*key)) continue;
    // Only keys of the usual shape: a short or plain one may coincide with
    // the wording of a message ("se: expected a").
    if (key->size() < 12 || key->rfind("sk-", 0) != 0) continue;
    // A key that is also a URL or model name may be printed as that.
    bool also_public = false;
    for (const std::string* pub : {&c.llm_base_url, &c.embed_base_url, &c.llm_model, &c.embed_model}) {
      if (pub->find(*key) != std::string::npos) also_public = true;
    }
    if (!also_public && text.find(*key) != std::string::npos) return true;
  }
  return false;
}

void CheckRanges(const engram::ProviderConfig& c) {
  FUZZ_CHECK(c.connect_timeout_ms >= 1 && c.connect_timeout_ms <= 86400000, std::to_string(c.connect_timeout_ms));
  FUZZ_CHECK(c.total_timeout_ms >= 1 && c.total_timeout_ms <= 86400000, std::to_string(c.total_timeout_ms));
  FUZZ_CHECK(c.max_retries >= 0 && c.max_retries <= 10, std::to_string(c.max_retries));
  FUZZ_CHECK(c.temperature == -1 || (c.temperature >= 0 && c.temperature <= 2), std::to_string(c.temperature));
  FUZZ_CHECK(c.max_tokens >= 0, std::to_string(c.max_tokens));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(engram::fuzz::AsText(data, size));
  engram::ProviderConfig c;
  engram::Status st = engram::ParseProviderToml(text, "engram.toml", c);
  if (!st.ok()) {
    FUZZ_CHECK(st.code() == engram::StatusCode::kInvalidArgument, st.ToString());
    FUZZ_CHECK(st.message().rfind("engram.toml:", 0) == 0, st.ToString());
    FUZZ_CHECK(!Leaks(st.message(), c, text), "an error message quotes a key: " + st.message());
  } else {
    CheckRanges(c);
    FUZZ_CHECK(!Leaks(c.Redacted(), c, text), "Redacted() shows a key: " + c.Redacted());
  }

  {
    std::ofstream out(Home().path() + "/engram.toml", std::ios::binary | std::ios::trunc);
    out << text;
  }
  const engram::EnvFn no_env = [](const std::string&) { return std::optional<std::string>(); };
  auto loaded = engram::LoadProviderConfig(Home().path(), {}, no_env);
  FUZZ_CHECK(!loaded.ok() || st.ok(), "the file failed alone but loaded");
  if (!loaded.ok()) {
    FUZZ_CHECK(loaded.status().code() == engram::StatusCode::kInvalidArgument, loaded.status().ToString());
    FUZZ_CHECK(!Leaks(loaded.status().message(), c, text), "an error message quotes a key: " + loaded.status().message());
    return 0;
  }
  const engram::ProviderConfig& l = *loaded;
  CheckRanges(l);
  for (const std::string* url : {&l.llm_base_url, &l.embed_base_url}) {
    if (url->empty()) continue;
    FUZZ_CHECK(url->rfind("http://", 0) == 0 || url->rfind("https://", 0) == 0, *url);
    FUZZ_CHECK(url->back() != '/', *url);
  }
  FUZZ_CHECK(!Leaks(l.Redacted(), l, text), "Redacted() shows a key: " + l.Redacted());
  return 0;
}
