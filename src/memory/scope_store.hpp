// Scope rows and small storage helpers shared by the tiers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "models/embedder.hpp"
#include "store/db.hpp"
#include "store/scopes.hpp"

namespace engram::memory {

using store::ScopeRow;

// Validates tenant, user and assistant ids (non-empty, <= 128 bytes, valid
// UTF-8, no control characters); the message names the field.
Status ValidateScope(const Scope& scope);

// The scopes repository (store/scopes.hpp), used throughout the tiers.
using store::BumpDataVersion;
using store::EnsureScope;
using store::FindScope;
using store::ListScopes;
using store::LoadScope;

// The FTS token that confines a lexical query to one scope ("s42").
std::string ScopeToken(std::int64_t scope_id);
// Index terms of a text as an FTS5 document (space-separated FtsTerms).
std::string FtsDocument(const std::string& text);
// An FTS5 MATCH expression: the scope token AND (any of the query's terms).
// Empty when the query has no index terms.
std::string FtsQuery(std::int64_t scope_id, const std::string& query);

// Vectors as float32 BLOBs.
inline const void* BlobData(const Vector& v) { return v.data(); }
inline int BlobBytes(const Vector& v) { return static_cast<int>(v.size() * sizeof(float)); }

// JSON array helpers for id and keyword lists.
std::string IdsToJson(const std::vector<std::int64_t>& ids);
std::vector<std::int64_t> IdsFromJson(const std::string& json);
std::string StringsToJson(const std::vector<std::string>& v);
std::vector<std::string> StringsFromJson(const std::string& json);

// Loads one scalar integer from a query with up to two int bindings.
Result<std::int64_t> QueryInt(sql::Db* db, std::string_view sql, std::int64_t a = 0,
                              std::int64_t b = 0, int nbind = 0);

}  // namespace engram::memory
