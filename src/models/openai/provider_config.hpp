// ProviderConfig: where the OpenAI-compatible model endpoints are and how to
// call them, merged from <home>/engram.toml < environment < flags.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "engram/result.hpp"

namespace engram {

struct ProviderConfig {
  // Chat completions endpoint. base_url includes the API version path, e.g.
  // "https://api.openai.com/v1" or "http://127.0.0.1:8000/v1" (no trailing '/').
  std::string llm_base_url, llm_model, llm_api_key;
  // Embeddings endpoint (same conventions).
  std::string embed_base_url, embed_model, embed_api_key;
  int connect_timeout_ms = 5000;
  int total_timeout_ms = 120000;
  int max_retries = 4;       // extra attempts after the first
  double temperature = -1;   // < 0: unset (the server's default)
  int max_tokens = 0;        // 0: unset

  // A chat model is configured (base URL and model known).
  bool HasLlm() const { return !llm_base_url.empty() && !llm_model.empty(); }
  // An embedding model is configured.
  bool HasEmbed() const { return !embed_base_url.empty() && !embed_model.empty(); }

  // One line for diagnostics: models, base URLs (user info and query string
  // removed), timeouts, and whether each key is set - never a key itself.
  std::string Redacted() const;
};

// Reads an environment variable; nullopt when unset. Injected so tests decide.
using EnvFn = std::function<std::optional<std::string>(const std::string& name)>;
// The process environment (getenv).
std::optional<std::string> ProcessEnv(const std::string& name);

// The default base URL used when a model is named but no base URL is given.
inline constexpr const char* kOpenAiDefaultBaseUrl = "https://api.openai.com/v1";

// Builds the configuration. Layers, later ones winning per key:
//   1. <home_dir>/engram.toml when it exists (skipped when home_dir is "");
//      a TOML subset:
//        # comment
//        timeout_s = 60            # top level: applies to both endpoints
//        [llm]
//        base_url = "http://127.0.0.1:8000/v1"
//        model = "qwen3-8b"
//        api_key = "..."
//        timeout_s = 120           # total timeout, seconds (fractions allowed)
//        connect_timeout_s = 5
//        max_retries = 4
//        temperature = 0.2         # [llm] only
//        max_tokens = 1024         # [llm] only
//        [embed]
//        base_url = "..."  model = "..."  api_key = "..."
//      Values are "basic" or 'literal' strings, integers or floats. The
//      timeout/retry keys are shared by both endpoints (the last one read
//      wins). Unknown tables or keys, duplicate keys and malformed lines are
//      kInvalidArgument "engram.toml:<line>: <problem>" (values never quoted).
//   2. environment: ENGRAM_LLM_BASE_URL, ENGRAM_LLM_MODEL, ENGRAM_LLM_API_KEY,
//      ENGRAM_EMBED_BASE_URL, ENGRAM_EMBED_MODEL, ENGRAM_EMBED_API_KEY
//      (empty values count as unset);
//   3. flags: the same names lower-cased without "ENGRAM_" ("llm_base_url",
//      "llm_model", "llm_api_key", "embed_base_url", "embed_model",
//      "embed_api_key"), plus "timeout_s", "connect_timeout_s", "max_retries",
//      "temperature", "max_tokens". Other keys are kInvalidArgument.
// Then fallbacks for what is still unset: the LLM key from OPENAI_API_KEY;
// the embed key from the LLM key, then OPENAI_API_KEY; the embed base URL from
// the LLM base URL; a base URL of a named model from kOpenAiDefaultBaseUrl.
// Base URLs must be http(s) and lose trailing slashes. An unreadable file is
// kIoError. No message ever contains a key.
[[nodiscard]] Result<ProviderConfig> LoadProviderConfig(const std::string& home_dir,
                                                        const std::map<std::string, std::string>& flags,
                                                        const EnvFn& env = ProcessEnv);

// Parses engram.toml text into `config` (layer 1 alone, no fallbacks).
// `file_label` prefixes error messages ("engram.toml").
[[nodiscard]] Status ParseProviderToml(const std::string& text, const std::string& file_label,
                                       ProviderConfig& config);

}  // namespace engram
