// Tool errors from engine statuses (argument checking is wire::Args).
#include "mcp/tools.hpp"
#include "store/errors.hpp"

namespace engram::mcp {

ToolOutcome FromStatus(const Status& st, const std::string& hint) {
  std::string m = st.message();
  switch (st.code()) {
    case StatusCode::kInvalidArgument: m = "invalid argument: " + m; break;
    case StatusCode::kNotFound: m = "not found: " + m; break;
    case StatusCode::kUnavailable: m = "temporarily unavailable (retry later): " + m; break;
    case StatusCode::kIoError:
      m = sql::IsStoreFull(st) ? "storage full (nothing was written; free space, then retry): " + m : st.ToString();
      break;
    default: m = st.ToString(); break;
  }
  if (!hint.empty()) m += ". " + hint;
  return ToolOutcome::Error(m);
}

}  // namespace engram::mcp
