#include "memory/scope_store.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/text.hpp"

namespace engram::memory {

namespace {

constexpr std::size_t kMaxIdBytes = 128;

Status ValidateId(const std::string& value, const char* field) {
  if (value.empty()) return Status::InvalidArgument(std::string(field) + ": must not be empty");
  return ValidateIdText(value, field);
}

}  // namespace

Status ValidateIdText(const std::string& value, const char* field) {
  if (value.size() > kMaxIdBytes) {
    return Status::InvalidArgument(std::string(field) + ": longer than 128 bytes");
  }
  if (!text::IsValidUtf8(value)) {
    return Status::InvalidArgument(std::string(field) + ": not valid UTF-8");
  }
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(std::string(field) + ": contains a control character");
    }
  }
  return Status::Ok();
}

Status RejectReservedId(const std::string& value, const char* field) {
  if (value == kNoScopeId) {
    return Status::InvalidArgument(std::string(field) + ": \"-\" is reserved (it stands for no " + field + ")");
  }
  return Status::Ok();
}

Status ValidateScope(const Scope& scope) {
  ENGRAM_RETURN_IF_ERROR(ValidateId(scope.tenant, "tenant"));
  ENGRAM_RETURN_IF_ERROR(ValidateId(scope.user, "user"));
  return ValidateId(scope.assistant, "assistant");
}

Status ValidateDialogueScope(const Scope& scope) {
  ENGRAM_RETURN_IF_ERROR(ValidateScope(scope));
  ENGRAM_RETURN_IF_ERROR(RejectReservedId(scope.user, "user"));
  return RejectReservedId(scope.assistant, "assistant");
}

}  // namespace engram::memory
