// Status names and rendering.
#include "engram/status.hpp"

namespace engram {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kAlreadyExists: return "already_exists";
    case StatusCode::kFailedPrecondition: return "failed_precondition";
    case StatusCode::kCorruption: return "corruption";
    case StatusCode::kIoError: return "io_error";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kAborted: return "aborted";
    case StatusCode::kPermissionDenied: return "permission_denied";
    case StatusCode::kResourceExhausted: return "resource_exhausted";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(StatusCodeName(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace engram
