#include "firstwork/app/commands.hpp"

#include <chrono>
#include <ostream>

#include "firstwork/app/daemon.hpp"
#include "firstwork/config/cli.hpp"
#include "firstwork/config/config.hpp"
#include "firstwork/log/log.hpp"

namespace firstwork::app {
namespace {

using config::kExitFailure;
using config::kExitOk;
using config::kExitUsage;

int checkConfig(const config::CheckConfigArgs& args, std::ostream& out, std::ostream& err) {
  auto load = config::loadConfigDetailed(args.config);
  if (!load.ok()) {
    err << config::formatProblems(load.problems);
    err << load.problems.size() << (load.problems.size() == 1 ? " problem" : " problems")
        << " in " << args.config << "\n";
    return kExitUsage;
  }
  out << args.config << ": OK (" << load.config.clusters.size() << " clusters)\n";
  return kExitOk;
}

int run(const config::RunArgs& args, std::ostream& err) {
  auto load = config::loadRunConfig(args);
  if (!load.ok()) {
    err << config::formatProblems(load.problems);
    return kExitUsage;
  }
  config::Config cfg = std::move(load.config);
  auto logOpts = config::loggingOptions(cfg.logging);
  if (!logOpts.ok()) {
    err << logOpts.error() << "\n";
    return kExitUsage;
  }
  log::configure(*logOpts);

  DaemonOptions opts;
  opts.config = cfg;
  Daemon daemon(std::move(opts));
  if (auto s = daemon.start(); !s) {
    err << "firstworkd: cannot start:\n" << s.error() << "\n";
    return kExitFailure;
  }
  daemon.waitForShutdownSignal();
  daemon.stop();
  return kExitOk;
}

}  // namespace

int runCommandLine(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  auto parse = config::parseCli(argc, argv, std::chrono::system_clock::now());
  if (!parse.ok()) {
    for (const auto& e : parse.errors) err << e << "\n";
    err << "Run 'firstworkd --help' for usage.\n";
    return kExitUsage;
  }
  using config::kExitFailure;
  using config::kExitOk;
  using config::kExitUsage;
  const auto& a = parse.args;
  switch (a.command) {
    case config::Command::Help:
      out << config::usage(a.helpFor);
      return kExitOk;
    case config::Command::Version:
      out << config::versionText() << "\n";
      return kExitOk;
    case config::Command::CheckConfig:
      return checkConfig(a.checkConfig, out, err);
    case config::Command::Run:
      return run(a.run, err);
    case config::Command::Demo:
      return runDemo(a.demo, out, err);
    case config::Command::Report:
      err << "firstworkd report: not available in this build yet (capacity-review reports are "
             "tracked separately)\n";
      return kExitFailure;
  }
  return kExitUsage;
}

}  // namespace firstwork::app
