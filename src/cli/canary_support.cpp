#include "cli/canary_support.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>

#include "lineage/receipts.hpp"
#include "models/llm.hpp"

namespace engram::cli {

namespace {

class CanaryLlm final : public Llm {
 public:
  std::string Name() const override { return "canary-fixed-reply"; }
  Result<ChatResult> Chat(const ChatRequest& request) override {
    ChatResult r;
    r.content = "canary reply";
    r.finish_reason = "stop";
    if (request.on_delta) request.on_delta(r.content);
    return r;
  }
};

}  // namespace

std::shared_ptr<Llm> MakeCanaryLlm() { return std::make_shared<CanaryLlm>(); }

namespace canary {

std::string RandomLetters(int n) {
  std::random_device rd;
  std::mt19937_64 rng(rd());
  std::uniform_int_distribution<int> d(0, 25);
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>('a' + d(rng));
  return s;
}

std::vector<Scope> Scopes(const std::string& id) {
  std::vector<Scope> out;
  for (const char* u : {"u1", "u2"}) {
    for (const char* a : {"a1", "a2"}) {
      out.push_back(Scope{kTenant, "canary-" + id + "-" + u, "canary-" + id + "-" + a});
    }
  }
  return out;
}

std::string Token(const std::string& id, std::size_t lane) {
  return id + "lane" + static_cast<char>('a' + lane);
}

TurnInput Turn(const std::string& token, int n) {
  TurnInput t;
  t.user_text = "canary probe " + token + " entry " + std::to_string(n);
  t.assistant_text = "canary ack " + token + " entry " + std::to_string(n);
  t.source_ref = "canary:" + std::to_string(n);
  return t;
}

std::string VersionList(const std::vector<RetrievedItem>& items) {
  std::vector<lineage::VersionRef> refs;
  for (const auto& i : items) {
    if (i.kind != ItemKind::kProfile) refs.push_back({ItemKindName(i.kind), i.id, i.version});
  }
  return lineage::FormatVersionRefs(refs);
}

int CapacityOf(const std::string& source_version) {
  std::size_t at = source_version.find(";stm=");
  if (at == std::string::npos) return 0;
  int v = 0;
  for (std::size_t i = at + 5; i < source_version.size() && source_version[i] >= '0' && source_version[i] <= '9'; ++i) {
    v = v * 10 + (source_version[i] - '0');
  }
  return v;
}

Lane LaneOf(Engine& e, const Scope& s) {
  Lane l;
  if (auto t = e.ListTurns(s, 0, 10000); t.ok()) {
    for (const auto& x : *t) l.turns.insert(x.id);
  }
  if (auto p = e.ListPageLinks(s); p.ok()) {
    for (const auto& x : *p) l.pages.insert(x.page_id);
  }
  if (auto f = e.ListFacts(s, ""); f.ok()) {
    for (const auto& x : *f) l.facts.insert(x.id);
  }
  return l;
}

bool Owns(const Lane& l, const RetrievedItem& i) {
  switch (i.kind) {
    case ItemKind::kStmTurn: return l.turns.count(i.id) > 0;
    case ItemKind::kPage: return l.pages.count(i.id) > 0 && l.turns.count(i.turn_id) > 0;
    case ItemKind::kUserFact:
    case ItemKind::kAssistantFact: return l.facts.count(i.id) > 0;
    case ItemKind::kProfile: return true;  // rendered from the scope's own profile
  }
  return false;
}

std::vector<ReceiptInfo> ReceiptsOf(Engine& e, const Scope& s, const std::string& kind, const std::string& run) {
  ReceiptQuery q;
  q.scope = s;
  q.memory_kind = kind;
  q.run_id = run;
  q.limit = 100000;
  auto r = e.ListReceipts(q);
  return r.ok() ? std::move(r).value() : std::vector<ReceiptInfo>{};
}

int RunChild(const CanaryRestart& restart, const std::vector<std::string>& tail, std::string* out) {
  std::vector<std::string> args{restart.exe};
  args.insert(args.end(), restart.global_args.begin(), restart.global_args.end());
  args.insert(args.end(), tail.begin(), tail.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The environment of this process, with ENGRAM_DB naming the store.
  std::vector<std::string> env_text;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "ENGRAM_DB=", 10) != 0) env_text.emplace_back(*e);
  }
  if (!restart.db.empty()) env_text.push_back("ENGRAM_DB=" + restart.db);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  std::cout.flush();
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return -1;
  }
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out->append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace canary
}  // namespace engram::cli
