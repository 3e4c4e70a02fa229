// CLI: engram worker, a process that runs maintenance only (promotion and
// consolidation of every scope of the store) for as long as it runs. It pairs
// with `engram serve --no-worker`; any number of workers, servers and
// `engram maintain` runs may share one store: jobs are leased in the store, so
// two processes never run the same job, and the job of a process that died is
// taken over when its lease expires (--job-lease), or at once when that
// process ran on this host and is gone. SIGTERM or SIGINT stops it cleanly:
// the maintenance run in progress is finished, the store closed, exit 0.
#include <iostream>

#include "cli/commands.hpp"
#include "server/serve.hpp"
#include "store/db.hpp"

namespace engram::cli {

namespace {

int RunWorker(Cli& cli, int job_lease_seconds) {
  // Before the engine starts its thread, so that every thread blocks the
  // signals and only the watcher takes them.
  server::StopSignals signals;
  EngineOptions opts;
  opts.background_maintenance = true;
  opts.job_lease_seconds = job_lease_seconds;
  if (Status st = cli.ConfigureModels(opts); !st.ok()) return Fail(st);
  opts.db_path = cli.DbPath();
  auto engine = Engine::Open(std::move(opts));
  if (!engine.ok()) return Fail(engine.status());
  std::cerr << "engram worker: running maintenance on " << sql::RedactLocation(cli.DbPath()) << " (maintainer "
            << (*engine)->MaintainerName() << ", job lease " << job_lease_seconds
            << " s); SIGTERM or SIGINT stops it" << std::endl;
  signals.Wait();
  std::cerr << "engram worker: stopping (finishing the maintenance in progress)" << std::endl;
  engine->reset();  // joins the worker thread after its current run, writes buffered receipts
  std::cerr << "engram worker: stopped" << std::endl;
  return 0;
}

}  // namespace

void AddJobLeaseOption(CLI::App* command, int& seconds) {
  command
      ->add_option("--job-lease", seconds,
                   "Seconds a maintenance job stays leased to this process without renewal (renewed before "
                   "every batch); the job of a process that died is taken over when its lease expires")
      ->check(CLI::Range(1, 86400));
}

void RegisterWorkerCommands(CLI::App& app, Cli& cli, int& code) {
  auto* worker = app.add_subcommand(
      "worker", "Run maintenance only (promotion, consolidation) until SIGTERM or SIGINT; pairs with serve --no-worker");
  static int job_lease = EngineOptions{}.job_lease_seconds;
  AddJobLeaseOption(worker, job_lease);
  worker->callback([&] { code = RunWorker(cli, job_lease); });
}

}  // namespace engram::cli
