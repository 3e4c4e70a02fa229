// PostgreSQL statements: placeholders, server-side preparation, bindings and
// the rows of a result (read in text format).
#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/text.hpp"
#include "store/postgres.hpp"

namespace engram::sql {

namespace {

constexpr Oid kByteaOid = 17;

struct ResultClearer {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultClearer>;

bool IsIdentChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || c == '$' || u >= 0x80;
}
bool IsTagStart(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;
}

// bytea text output ("\x0a1b..." or the old escape format) as raw bytes.
std::string DecodeBytea(const char* text, int length) {
  std::string out;
  if (length >= 2 && text[0] == '\\' && text[1] == 'x') {
    out.reserve(static_cast<std::size_t>(length - 2) / 2);
    for (int i = 2; i + 1 < length; i += 2) {
      const int hi = engram::text::HexDigitValue(text[i]), lo = engram::text::HexDigitValue(text[i + 1]);
      if (hi < 0 || lo < 0) break;
      out.push_back(static_cast<char>(hi * 16 + lo));
    }
    return out;
  }
  std::size_t n = 0;
  unsigned char* raw = PQunescapeBytea(reinterpret_cast<const unsigned char*>(text), &n);
  if (raw) out.assign(reinterpret_cast<const char*>(raw), n);
  PQfreemem(raw);
  return out;
}

std::int64_t Truncate(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9.223372036854775807e18) return std::numeric_limits<std::int64_t>::max();
  if (d <= -9.223372036854775808e18) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(d);
}

}  // namespace

std::string PgDb::RewritePlaceholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 8);
  const std::size_t n = sql.size();
  int largest = 0;
  std::size_t i = 0;
  auto copy_to = [&](std::size_t end) {
    end = std::min(end, n);
    out.append(sql.substr(i, end - i));
    i = end;
  };
  while (i < n) {
    const char c = sql[i];
    const bool after_ident = i > 0 && IsIdentChar(sql[i - 1]);
    if (c == '\'') {  // a string; E'...' strings also escape with backslashes
      const bool escapes =
          i > 0 && (sql[i - 1] == 'E' || sql[i - 1] == 'e') && (i < 2 || !IsIdentChar(sql[i - 2]));
      std::size_t j = i + 1;
      while (j < n) {
        if (escapes && sql[j] == '\\') {
          j += 2;
        } else if (sql[j] == '\'') {
          if (j + 1 < n && sql[j + 1] == '\'') {
            j += 2;
          } else {
            ++j;
            break;
          }
        } else {
          ++j;
        }
      }
      copy_to(j);
    } else if (c == '"') {  // a quoted identifier ("" inside reads as two)
      const auto end = sql.find('"', i + 1);
      copy_to(end == std::string_view::npos ? n : end + 1);
    } else if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
      copy_to(sql.find('\n', i));
    } else if (c == '/' && i + 1 < n && sql[i + 1] == '*') {  // comments nest
      std::size_t j = i + 2;
      for (int depth = 1; j < n && depth > 0;) {
        if (sql.substr(j, 2) == "/*") {
          ++depth, j += 2;
        } else if (sql.substr(j, 2) == "*/") {
          --depth, j += 2;
        } else {
          ++j;
        }
      }
      copy_to(j);
    } else if (c == '$' && !after_ident) {  // $tag$ ... $tag$ (not $1)
      std::size_t j = i + 1;
      if (j < n && IsTagStart(sql[j])) {
        while (j < n && IsIdentChar(sql[j]) && sql[j] != '$') ++j;
      }
      if (j < n && sql[j] == '$') {
        const std::string_view tag = sql.substr(i, j - i + 1);
        const auto end = sql.find(tag, j + 1);
        copy_to(end == std::string_view::npos ? n : end + tag.size());
      } else {
        out.push_back(c);
        ++i;
      }
    } else if (c == '?') {
      std::size_t j = i + 1;
      long index = 0;
      while (j < n && std::isdigit(static_cast<unsigned char>(sql[j]))) {
        if (index < 1000000) index = index * 10 + (sql[j] - '0');
        ++j;
      }
      if (j == i + 1) index = largest + 1;
      largest = static_cast<int>(std::min<long>(std::max<long>(largest, index), 1000000));
      out += "$" + std::to_string(index);
      i = j;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

class PgStmt final : public Stmt {
 public:
  PgStmt(PgDb* db, std::string sql) : db_(db), sql_(std::move(sql)) {}

  // Prepares the statement on the server and learns its parameter types.
  Status PrepareOnServer();

  using Stmt::Bind;
  Stmt& Bind(int i, std::int64_t v) override { return Set(i, Kind::kText, std::to_string(v)); }
  Stmt& Bind(int i, double v) override;
  Stmt& Bind(int i, std::string_view v) override;
  Stmt& BindBlob(int i, const void* data, int bytes) override;
  Stmt& BindNull(int i) override { return Set(i, Kind::kNull, {}); }
  Result<bool> Step() override;
  Status Run() override;
  void Reset() override;
  std::int64_t Int(int col) const override;
  double Double(int col) const override;
  std::string Text(int col) const override;
  bool IsNull(int col) const override { return Cell(col) == nullptr; }
  std::vector<float> Floats(int col) const override;

 private:
  enum class Kind { kNull, kText, kBlob };
  struct Param {
    Kind kind = Kind::kNull;
    std::string value;
  };
  struct Variant {
    std::string mask;  // '1' where a blob goes to a parameter not typed bytea
    std::string name;
  };

  Stmt& Set(int i, Kind kind, std::string value);
  Status Execute(std::string_view context);
  Status ExecuteOnce(std::string_view context);
  // A SELECT (read only: safe to run again).
  bool IsQuery() const;
  Result<const std::string*> NameFor(const std::string& mask);
  // The current row's value in `col`, or nullptr (NULL, no row, no column).
  const char* Cell(int col) const;
  std::string Bytes(int col) const;

  PgDb* db_;
  std::string sql_;  // with $N placeholders
  std::string name_;
  std::vector<Oid> types_;  // of the parameters, as the server inferred them
  std::vector<Variant> variants_;
  std::uint64_t generation_ = 0;
  std::vector<Param> params_;
  Status bind_error_;
  ResultPtr res_;
  int row_ = -1;
};

Result<std::unique_ptr<Stmt>> PgDb::NewStmt(PgDb* db, std::string_view sql) {
  auto stmt = std::make_unique<PgStmt>(db, RewritePlaceholders(sql));
  ENGRAM_RETURN_IF_ERROR(stmt->PrepareOnServer());
  return std::unique_ptr<Stmt>(std::move(stmt));
}

Status PgStmt::PrepareOnServer() {
  std::string name = db_->NextName();
  ResultPtr prepared(PQprepare(db_->conn(), name.c_str(), sql_.c_str(), 0, nullptr));
  ENGRAM_RETURN_IF_ERROR(db_->Check(prepared.get(), "prepare"));
  ResultPtr described(PQdescribePrepared(db_->conn(), name.c_str()));
  ENGRAM_RETURN_IF_ERROR(db_->Check(described.get(), "prepare"));
  const int n = PQnparams(described.get());
  types_.resize(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) types_[static_cast<std::size_t>(k)] = PQparamtype(described.get(), k);
  params_.resize(types_.size());
  name_ = std::move(name);
  variants_.clear();
  generation_ = db_->generation();
  return Status::Ok();
}

Stmt& PgStmt::Set(int i, Kind kind, std::string value) {
  if (i < 1 || static_cast<std::size_t>(i) > params_.size()) {
    if (bind_error_.ok()) {
      bind_error_ = Status::IoError("bind: parameter index " + std::to_string(i) +
                                    " out of range (the statement has " +
                                    std::to_string(params_.size()) + ")");
    }
    return *this;
  }
  params_[static_cast<std::size_t>(i - 1)] = Param{kind, std::move(value)};
  return *this;
}

Stmt& PgStmt::Bind(int i, double v) {
  if (std::isnan(v)) return Set(i, Kind::kText, "NaN");
  if (std::isinf(v)) return Set(i, Kind::kText, v > 0 ? "Infinity" : "-Infinity");
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact form
  return Set(i, Kind::kText, std::string(buf, ec == std::errc() ? end : buf));
}

Stmt& PgStmt::Bind(int i, std::string_view v) {
  if (v.find('\0') != std::string_view::npos) {
    if (bind_error_.ok())
      bind_error_ = Status::InvalidArgument("bind: text holds a NUL byte (PostgreSQL refuses it)");
    return *this;
  }
  return Set(i, Kind::kText, std::string(v));
}

Stmt& PgStmt::BindBlob(int i, const void* data, int bytes) {
  std::string value;
  if (data && bytes > 0)
    value.assign(static_cast<const char*>(data), static_cast<std::size_t>(bytes));
  return Set(i, Kind::kBlob, std::move(value));
}

Result<const std::string*> PgStmt::NameFor(const std::string& mask) {
  if (mask.find('1') == std::string::npos) return &name_;
  for (const auto& v : variants_) {
    if (v.mask == mask) return &v.name;
  }
  std::vector<Oid> types = types_;
  for (std::size_t k = 0; k < mask.size(); ++k) {
    if (mask[k] == '1') types[k] = kByteaOid;
  }
  std::string name = db_->NextName();
  ResultPtr prepared(PQprepare(db_->conn(), name.c_str(), sql_.c_str(),
                               static_cast<int>(types.size()), types.data()));
  ENGRAM_RETURN_IF_ERROR(db_->Check(prepared.get(), "prepare"));
  variants_.push_back(Variant{mask, std::move(name)});
  return &variants_.back().name;
}

Status PgStmt::Execute(std::string_view context) {
  // A query run outside a transaction that finds the connection lost (the
  // server restarted, the idle session was terminated) is run once more on a
  // new connection: reading twice is harmless. Writes are not: outside a
  // transaction the first may have committed.
  const bool outside = PQtransactionStatus(db_->conn()) == PQTRANS_IDLE;
  Status st = ExecuteOnce(context);
  if (st.ok() || !outside || !IsQuery() || !db_->LostOutsideTxn()) return st;
  return ExecuteOnce(context);
}

bool PgStmt::IsQuery() const {
  std::size_t i = sql_.find_first_not_of(" \t\r\n(");
  if (i == std::string::npos || sql_.size() - i < 7) return false;
  std::string head = sql_.substr(i, 7);
  std::transform(head.begin(), head.end(), head.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return head == "SELECT " || head == "SELECT\n";
}

Status PgStmt::ExecuteOnce(std::string_view context) {
  ENGRAM_RETURN_IF_ERROR(db_->Ready(context));
  if (generation_ != db_->generation()) ENGRAM_RETURN_IF_ERROR(PrepareOnServer());
  const std::size_t n = params_.size();
  std::string mask(n, '0');
  std::vector<const char*> values(n, nullptr);
  std::vector<int> lengths(n, 0), formats(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const Param& p = params_[k];
    if (p.kind == Kind::kNull) continue;
    values[k] = p.value.c_str();
    lengths[k] = static_cast<int>(p.value.size());
    const bool bytea = types_[k] == kByteaOid;
    if (p.kind == Kind::kBlob && !bytea) mask[k] = '1';
    // Bytes for bytea go in binary: text input would read backslashes as escapes.
    formats[k] = p.kind == Kind::kBlob || bytea ? 1 : 0;
  }
  ENGRAM_ASSIGN_OR_RETURN(const std::string* name, NameFor(mask));
  ResultPtr res(PQexecPrepared(db_->conn(), name->c_str(), static_cast<int>(n), values.data(),
                               lengths.data(), formats.data(), /*resultFormat=*/0));
  ENGRAM_RETURN_IF_ERROR(db_->Check(res.get(), context));
  res_ = std::move(res);
  row_ = -1;
  return Status::Ok();
}

Result<bool> PgStmt::Step() {
  if (!res_) {
    if (!bind_error_.ok()) {
      Status st = bind_error_;
      Reset();
      return st;
    }
    ENGRAM_RETURN_IF_ERROR(Execute("step"));
  }
  if (++row_ < PQntuples(res_.get())) return true;
  res_.reset();  // done: the next Step runs the statement again (as SQLite)
  row_ = -1;
  return false;
}

Status PgStmt::Run() {
  if (!res_) {
    if (!bind_error_.ok()) {
      Status st = bind_error_;
      Reset();
      return st;
    }
    ENGRAM_RETURN_IF_ERROR(Execute("step"));
  }
  Reset();
  return Status::Ok();
}

void PgStmt::Reset() {
  res_.reset();
  row_ = -1;
  for (auto& p : params_) p = Param{};
  bind_error_ = Status::Ok();
}

const char* PgStmt::Cell(int col) const {
  if (!res_ || row_ < 0 || row_ >= PQntuples(res_.get()) || col < 0 ||
      col >= PQnfields(res_.get()) || PQgetisnull(res_.get(), row_, col))
    return nullptr;
  return PQgetvalue(res_.get(), row_, col);
}

std::string PgStmt::Bytes(int col) const {
  const char* p = Cell(col);
  if (!p) return {};
  const int length = PQgetlength(res_.get(), row_, col);
  if (PQftype(res_.get(), col) == kByteaOid) return DecodeBytea(p, length);
  return std::string(p, static_cast<std::size_t>(length));
}

std::int64_t PgStmt::Int(int col) const {
  const char* p = Cell(col);
  if (!p) return 0;
  const char* end = p + PQgetlength(res_.get(), row_, col);
  if (std::strcmp(p, "t") == 0) return 1;
  if (std::strcmp(p, "f") == 0) return 0;
  std::int64_t v = 0;
  const auto r = std::from_chars(p, end, v);
  if (r.ec == std::errc() && r.ptr == end) return v;
  double d = 0;  // numeric / float text: truncated, as SQLite reads a REAL
  const auto rd = std::from_chars(p, end, d);
  if (rd.ec == std::errc() && rd.ptr != p) return Truncate(d);
  return r.ec == std::errc() ? v : 0;
}

double PgStmt::Double(int col) const {
  const char* p = Cell(col);
  if (!p) return 0;
  if (std::strcmp(p, "t") == 0) return 1;
  double d = 0;
  std::from_chars(p, p + PQgetlength(res_.get(), row_, col), d);
  return d;
}

std::string PgStmt::Text(int col) const { return Bytes(col); }

std::vector<float> PgStmt::Floats(int col) const {
  const std::string bytes = Bytes(col);
  std::vector<float> v(bytes.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

}  // namespace engram::sql
