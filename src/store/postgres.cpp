// Placeholder until the libpq implementation lands (being written now).
#include "store/postgres.hpp"

namespace engram::sql {
struct PgDb::Impl {};
PgDb::PgDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PgDb::~PgDb() = default;
Result<std::unique_ptr<PgDb>> PgDb::Open(const std::string&, const OpenOptions&) {
  return Status::Unavailable("PostgreSQL backend not built");
}
Status PgDb::Exec(std::string_view) { return Status::Internal("unreachable"); }
Result<Stmt*> PgDb::Prepare(std::string_view) { return Status::Internal("unreachable"); }
int PgDb::Changes() const { return 0; }
std::int64_t PgDb::LastInsertRowId() { return 0; }
const std::string& PgDb::path() const { static std::string s; return s; }
Status PgDb::BeginWrite() { return Status::Internal("unreachable"); }
Status PgDb::BeginRead() { return Status::Internal("unreachable"); }
Status PgDb::Commit() { return Status::Internal("unreachable"); }
Status PgDb::Rollback() { return Status::Internal("unreachable"); }
std::string PgDb::RewritePlaceholders(std::string_view sql) { return std::string(sql); }
}  // namespace engram::sql
