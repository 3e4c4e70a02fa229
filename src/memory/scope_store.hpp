// Scope rows and small storage helpers shared by the tiers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "core/json_lists.hpp"
#include "engram/types.hpp"
#include "models/embedder.hpp"
#include "store/db.hpp"
#include "store/fulltext.hpp"
#include "store/scopes.hpp"

namespace engram::memory {

using store::ScopeRow;

// Validates tenant, user and assistant ids (non-empty, <= 128 bytes, valid
// UTF-8, no control characters); the message names the field. Scope rows of
// the fact API (ListScopes) pass.
Status ValidateScope(const Scope& scope);
// ValidateScope, and neither user nor assistant kNoScopeId: the check of a
// dialogue a caller names (turns go in, a context comes out).
Status ValidateDialogueScope(const Scope& scope);

// The checks of one id's text (<= 128 bytes, valid UTF-8, no control
// characters; empty passes), and the refusal of kNoScopeId; the messages
// name the field.
Status ValidateIdText(const std::string& value, const char* field);
Status RejectReservedId(const std::string& value, const char* field);

// The scopes repository (store/scopes.hpp), used throughout the tiers.
using store::BumpDataVersion;
using store::EnsureScope;
using store::FindScope;
using store::ListScopes;
using store::ListTenantScopes;
using store::ListTenantUsers;
using store::LoadScope;

// The full-text index documents (store/fulltext.hpp).
using store::FtsDocument;
using store::ScopeToken;

// JSON array helpers for id and keyword lists.
using json_lists::IdsFromJson;
using json_lists::IdsToJson;
using json_lists::StringsFromJson;
using json_lists::StringsToJson;

}  // namespace engram::memory
