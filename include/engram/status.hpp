// engram public API: Status, the error value every fallible call returns.
// No exceptions cross the library boundary; callers inspect Status instead.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace engram {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the caller's input is wrong; message names the field
  kNotFound,           // no such item in the caller's scope
  kAlreadyExists,
  kFailedPrecondition, // state does not allow the operation (e.g. embedder mismatch)
  kCorruption,         // the store is damaged or not an engram store
  kIoError,            // the filesystem or database failed
  kUnavailable,        // a dependency (model endpoint) failed; retrying may help
  kAborted,            // a concurrent change was detected; retrying will help
  kPermissionDenied,
  kResourceExhausted,  // a quota of the caller is reached; nothing was written
  kInternal,
};

// Returns a stable lower-case name such as "invalid_argument".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: user: must not be empty"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace engram

// Propagates a non-ok Status from the current function.
#define ENGRAM_RETURN_IF_ERROR(expr)              \
  do {                                            \
    ::engram::Status _engram_st = (expr);         \
    if (!_engram_st.ok()) return _engram_st;      \
  } while (0)
