// A look at a store from beside the engine, as another process would see it:
// the first column of the first row a statement gives, as text.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "store/db.hpp"

namespace engram::testing {

// "" when the statement gives no row; a failure to open or prepare fails the
// test. Numbers come back as their decimal text on both backends.
inline std::string FirstValue(const std::string& location, const std::string& sql) {
  auto db = sql::Db::Open(location, {});
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return "";
  auto st = (*db)->Prepare(sql);
  EXPECT_TRUE(st.ok()) << st.status().ToString() << "\n" << sql;
  if (!st.ok()) return "";
  auto row = (*st)->Step();
  EXPECT_TRUE(row.ok()) << row.status().ToString() << "\n" << sql;
  const std::string v = row.ok() && *row ? (*st)->Text(0) : "";
  (*st)->Reset();
  return v;
}

// The same value as a number (a count); -1 when the statement gives no row.
inline std::int64_t FirstInt(const std::string& location, const std::string& sql) {
  const std::string v = FirstValue(location, sql);
  return v.empty() ? -1 : std::stoll(v);
}

}  // namespace engram::testing
