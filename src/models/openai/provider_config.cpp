// ProviderConfig loading: a small TOML-subset reader, environment and flags.
#include "models/openai/provider_config.hpp"

#include "core/text.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace engram {
namespace {

bool IsBareKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

void AppendUtf8(std::string& out, unsigned long cp) { text::AppendUtf8(out, static_cast<char32_t>(cp)); }

// A number in TOML spelling (optional sign, digits, '_' separators, fraction,
// exponent). nullopt when the text is not one.
std::optional<double> ParseNumber(std::string_view text) {
  std::string clean;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '_') {
      const bool between = i > 0 && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i - 1])) &&
                           std::isdigit(static_cast<unsigned char>(text[i + 1]));
      if (!between) return std::nullopt;
      continue;
    }
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E'))
      return std::nullopt;
    clean += c;
  }
  if (clean.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(clean.c_str(), &end);
  if (errno != 0 || end != clean.c_str() + clean.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

struct TomlValue {
  bool is_string = false;
  std::string text;   // string value
  double number = 0;  // numeric value
};

// Parses the value starting at line[pos]; the rest of the line may only hold
// a comment. On error returns a message (never containing the value).
std::optional<std::string> ParseValue(std::string_view line, std::size_t pos, TomlValue& out) {
  auto rest_ok = [&](std::size_t from) {
    while (from < line.size() && (line[from] == ' ' || line[from] == '\t')) ++from;
    return from >= line.size() || line[from] == '#';
  };
  if (pos >= line.size()) return "missing value";
  const char q = line[pos];
  if (q == '"' || q == '\'') {
    if (line.substr(pos, 3) == (q == '"' ? "\"\"\"" : "'''")) return "multi-line strings are not supported";
    out.is_string = true;
    std::size_t i = pos + 1;
    for (; i < line.size() && line[i] != q; ++i) {
      if (q == '\'' || line[i] != '\\') {
        out.text += line[i];
        continue;
      }
      if (++i >= line.size()) return "unterminated string";
      switch (line[i]) {
        case '"': out.text += '"'; break;
        case '\\': out.text += '\\'; break;
        case 'n': out.text += '\n'; break;
        case 't': out.text += '\t'; break;
        case 'r': out.text += '\r'; break;
        case 'b': out.text += '\b'; break;
        case 'f': out.text += '\f'; break;
        case 'u':
        case 'U': {
          const std::size_t n = line[i] == 'u' ? 4 : 8;
          if (i + n >= line.size()) return "bad unicode escape";
          unsigned long cp = 0;
          for (std::size_t k = 1; k <= n; ++k) {
            const char h = line[i + k];
            if (!std::isxdigit(static_cast<unsigned char>(h))) return "bad unicode escape";
            cp = cp * 16 + static_cast<unsigned long>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                                                                         : (std::tolower(h) - 'a' + 10));
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return "bad unicode escape";
          AppendUtf8(out.text, cp);
          i += n;
          break;
        }
        default:
          return "unknown escape sequence in string";
      }
    }
    if (i >= line.size()) return "unterminated string";
    if (!rest_ok(i + 1)) return "unexpected text after the value";
    return std::nullopt;
  }
  std::size_t end = pos;
  while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '#') ++end;
  auto num = ParseNumber(line.substr(pos, end - pos));
  if (!num) return "expected a quoted string or a number";
  if (!rest_ok(end)) return "unexpected text after the value";
  out.number = *num;
  return std::nullopt;
}

// Applies one numeric key shared by the file and the flags. `where` prefixes
// errors. Returns false when the key is not a numeric setting.
std::optional<Status> ApplyNumeric(const std::string& key, double v, const std::string& where,
                                   ProviderConfig& c) {
  const bool integral = std::floor(v) == v;
  if (key == "timeout_s" || key == "connect_timeout_s") {
    if (!(v > 0 && v <= 86400)) return Status::InvalidArgument(where + key + " must be in (0, 86400] seconds");
    const int ms = static_cast<int>(std::lround(v * 1000.0));
    (key == "timeout_s" ? c.total_timeout_ms : c.connect_timeout_ms) = ms < 1 ? 1 : ms;
  } else if (key == "max_retries") {
    if (!integral || v < 0 || v > 10) return Status::InvalidArgument(where + "max_retries must be an integer 0..10");
    c.max_retries = static_cast<int>(v);
  } else if (key == "temperature") {
    if (!(v >= 0 && v <= 2)) return Status::InvalidArgument(where + "temperature must be in [0, 2]");
    c.temperature = v;
  } else if (key == "max_tokens") {
    if (!integral || v < 0 || v > 10000000) return Status::InvalidArgument(where + "max_tokens must be an integer >= 0");
    c.max_tokens = static_cast<int>(v);
  } else {
    return std::nullopt;
  }
  return Status::Ok();
}

std::string* StringField(ProviderConfig& c, const std::string& table, const std::string& key) {
  const bool llm = table == "llm";
  if (key == "base_url") return llm ? &c.llm_base_url : &c.embed_base_url;
  if (key == "model") return llm ? &c.llm_model : &c.embed_model;
  if (key == "api_key") return llm ? &c.llm_api_key : &c.embed_api_key;
  return nullptr;
}

Status NormalizeBaseUrl(std::string& url, const char* which) {
  while (!url.empty() && (url.back() == '/' || url.back() == ' ')) url.pop_back();
  if (url.empty()) return Status::Ok();
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    return Status::InvalidArgument(std::string(which) + " base URL must start with http:// or https://");
  if (url.find_first_of("\r\n\t ") != std::string::npos)
    return Status::InvalidArgument(std::string(which) + " base URL contains whitespace");
  return Status::Ok();
}

// Drops "user:pass@" and any query or fragment from a URL.
std::string RedactUrl(const std::string& url) {
  if (url.empty()) return "unset";
  std::string out = url.substr(0, url.find_first_of("?#"));
  const std::size_t scheme = out.find("://");
  const std::size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  const std::size_t slash = out.find('/', host);
  const std::size_t at = out.rfind('@', slash == std::string::npos ? out.size() : slash);
  if (at != std::string::npos && at >= host) out.erase(host, at + 1 - host);
  return out;
}

}  // namespace

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

Status ParseProviderToml(const std::string& text, const std::string& file_label, ProviderConfig& c) {
  try {
    std::istringstream in(text);
    std::string raw;
    std::string table;  // "" = top level
    std::set<std::string> seen_tables, seen_keys;
    int line_no = 0;
    while (std::getline(in, raw)) {
      ++line_no;
      const std::string where = file_label + ":" + std::to_string(line_no) + ": ";
      std::string_view line(raw);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      std::size_t p = 0;
      while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
      if (p == line.size() || line[p] == '#') continue;
      if (line[p] == '[') {
        if (line.substr(p, 2) == "[[") return Status::InvalidArgument(where + "arrays of tables are not supported");
        const std::size_t close = line.find(']', p);
        if (close == std::string_view::npos) return Status::InvalidArgument(where + "missing ']'");
        std::string name(line.substr(p + 1, close - p - 1));
        while (!name.empty() && name.back() == ' ') name.pop_back();
        while (!name.empty() && name.front() == ' ') name.erase(0, 1);
        std::size_t q = close + 1;
        while (q < line.size() && (line[q] == ' ' || line[q] == '\t')) ++q;
        if (q < line.size() && line[q] != '#') return Status::InvalidArgument(where + "unexpected text after table");
        if (name != "llm" && name != "embed")
          return Status::InvalidArgument(where + "unknown table (expected [llm] or [embed])");
        if (!seen_tables.insert(name).second) return Status::InvalidArgument(where + "table [" + name + "] defined twice");
        table = name;
        continue;
      }
      std::size_t k = p;
      while (k < line.size() && IsBareKeyChar(line[k])) ++k;
      if (k == p) return Status::InvalidArgument(where + "expected 'key = value'");
      const std::string key(line.substr(p, k - p));
      while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
      if (k >= line.size() || line[k] != '=') {
        // A line without '=' may be a pasted secret: only a known key is named.
        static const std::set<std::string> kKnown = {"base_url", "model", "api_key", "timeout_s", "connect_timeout_s",
                                                     "max_retries", "temperature", "max_tokens"};
        return Status::InvalidArgument(where + (kKnown.count(key) ? "expected '=' after " + key : "expected 'key = value'"));
      }
      ++k;
      while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
      TomlValue value;
      if (auto err = ParseValue(line, k, value)) return Status::InvalidArgument(where + key + ": " + *err);
      if (!seen_keys.insert(table + "." + key).second)
        return Status::InvalidArgument(where + "duplicate key " + key);

      if (std::string* field = table.empty() ? nullptr : StringField(c, table, key)) {
        if (!value.is_string) return Status::InvalidArgument(where + key + " must be a string");
        *field = value.text;
        continue;
      }
      if (table.empty() && StringField(c, "llm", key))
        return Status::InvalidArgument(where + key + " must be inside [llm] or [embed]");
      if ((key == "temperature" || key == "max_tokens") && table != "llm")
        return Status::InvalidArgument(where + key + " is only valid in [llm]");
      if (value.is_string) {
        if (key == "timeout_s" || key == "connect_timeout_s" || key == "max_retries" || key == "temperature" ||
            key == "max_tokens")
          return Status::InvalidArgument(where + key + " must be a number");
        return Status::InvalidArgument(where + "unknown key " + key);
      }
      auto applied = ApplyNumeric(key, value.number, where, c);
      if (!applied) return Status::InvalidArgument(where + "unknown key " + key);
      ENGRAM_RETURN_IF_ERROR(*applied);
    }
    return Status::Ok();
  } catch (const std::exception&) {
    return Status::Internal(file_label + ": failed to parse");
  }
}

Result<ProviderConfig> LoadProviderConfig(const std::string& home_dir,
                                          const std::map<std::string, std::string>& flags, const EnvFn& env) {
  try {
    ProviderConfig c;
    // 1. The file.
    if (!home_dir.empty()) {
      const std::filesystem::path path = std::filesystem::path(home_dir) / "engram.toml";
      std::error_code ec;
      if (std::filesystem::exists(path, ec)) {
        // Read to the end: an empty file is no settings (inserting its empty
        // buffer into a stream would fail); a read error throws from the
        // stream buffer.
        const Status unreadable = Status::IoError("engram.toml: cannot read " + path.string());
        if (std::filesystem::is_directory(path, ec)) return unreadable;
        std::ifstream in(path, std::ios::binary);
        if (!in.is_open()) return unreadable;
        std::string text;
        try {
          text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        } catch (const std::exception&) {
          return unreadable;
        }
        if (in.bad()) return unreadable;
        ENGRAM_RETURN_IF_ERROR(ParseProviderToml(text, "engram.toml", c));
      }
    }
    // 2. The environment.
    auto get = [&](const char* name) -> std::optional<std::string> {
      if (!env) return std::nullopt;
      auto v = env(name);
      if (v && v->empty()) return std::nullopt;
      return v;
    };
    const std::pair<const char*, std::string ProviderConfig::*> kStringKeys[] = {
        {"llm_base_url", &ProviderConfig::llm_base_url},     {"llm_model", &ProviderConfig::llm_model},
        {"llm_api_key", &ProviderConfig::llm_api_key},       {"embed_base_url", &ProviderConfig::embed_base_url},
        {"embed_model", &ProviderConfig::embed_model},       {"embed_api_key", &ProviderConfig::embed_api_key},
    };
    for (const auto& [key, field] : kStringKeys) {
      std::string env_name = "ENGRAM_";
      for (const char* s = key; *s; ++s) env_name += static_cast<char>(std::toupper(static_cast<unsigned char>(*s)));
      if (auto v = get(env_name.c_str())) c.*field = *v;
    }
    // 3. The flags.
    for (const auto& [name, value] : flags) {
      bool done = false;
      for (const auto& [key, field] : kStringKeys) {
        if (name == key) {
          if (!value.empty()) c.*field = value;
          done = true;
        }
      }
      if (done) continue;
      const std::string where = "flag " + name + ": ";
      auto num = ParseNumber(value);
      auto applied = ApplyNumeric(name, num ? *num : 0.0, where, c);
      if (!applied) return Status::InvalidArgument("unknown provider flag " + name);
      if (!num) return Status::InvalidArgument(where + "must be a number");
      ENGRAM_RETURN_IF_ERROR(*applied);
    }
    // Fallbacks.
    if (c.llm_api_key.empty()) c.llm_api_key = get("OPENAI_API_KEY").value_or("");
    if (c.embed_api_key.empty()) c.embed_api_key = c.llm_api_key;
    ENGRAM_RETURN_IF_ERROR(NormalizeBaseUrl(c.llm_base_url, "llm"));
    ENGRAM_RETURN_IF_ERROR(NormalizeBaseUrl(c.embed_base_url, "embed"));
    if (c.embed_base_url.empty()) c.embed_base_url = c.llm_base_url;
    if (c.llm_base_url.empty() && !c.llm_model.empty()) c.llm_base_url = kOpenAiDefaultBaseUrl;
    if (c.embed_base_url.empty() && !c.embed_model.empty()) c.embed_base_url = kOpenAiDefaultBaseUrl;
    return c;
  } catch (const std::exception&) {
    return Status::Internal("provider configuration: unexpected failure");
  }
}

std::string ProviderConfig::Redacted() const {
  std::ostringstream out;
  out << "llm{model=" << (llm_model.empty() ? "unset" : llm_model) << " base_url=" << RedactUrl(llm_base_url)
      << " api_key=" << (llm_api_key.empty() ? "unset" : "set") << "} embed{model="
      << (embed_model.empty() ? "unset" : embed_model) << " base_url=" << RedactUrl(embed_base_url)
      << " api_key=" << (embed_api_key.empty() ? "unset" : "set") << "} connect_timeout_ms=" << connect_timeout_ms
      << " total_timeout_ms=" << total_timeout_ms << " max_retries=" << max_retries << " temperature=";
  if (temperature < 0) out << "unset"; else out << temperature;
  out << " max_tokens=";
  if (max_tokens <= 0) out << "unset"; else out << max_tokens;
  return out.str();
}

}  // namespace engram
