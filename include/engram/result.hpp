// engram public API: Result<T>, a value or a non-ok Status (std::expected is
// not available on the supported toolchains).
#pragma once

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

#include "engram/status.hpp"

namespace engram {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "Result constructed from an ok Status without a value");
    if (status_.ok()) status_ = Status::Internal("Result built from ok status without value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok(). Reading the value of an error is a bug: it aborts with
  // the error's message in every build type (never undefined behaviour).
  T& value() & { RequireValue(); return *value_; }
  const T& value() const& { RequireValue(); return *value_; }
  T&& value() && { RequireValue(); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void RequireValue() const {
    if (value_.has_value()) return;
    std::fprintf(stderr, "engram: Result::value() called on an error: %s\n", status_.ToString().c_str());
    std::abort();
  }
  std::optional<T> value_;
  Status status_;
};

}  // namespace engram

#define ENGRAM_CONCAT_INNER(a, b) a##b
#define ENGRAM_CONCAT(a, b) ENGRAM_CONCAT_INNER(a, b)
// ENGRAM_ASSIGN_OR_RETURN(auto x, Call()); propagates the Status on error.
#define ENGRAM_ASSIGN_OR_RETURN(lhs, expr) \
  ENGRAM_ASSIGN_OR_RETURN_IMPL(ENGRAM_CONCAT(_engram_res_, __LINE__), lhs, expr)
#define ENGRAM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
