#include "firstwork/app/commands.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "firstwork/app/daemon.hpp"
#include "firstwork/config/cli.hpp"
#include "firstwork/config/config.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/log/log.hpp"
#include "firstwork/report/render.hpp"
#include "firstwork/report/report.hpp"
#include "firstwork/store/store.hpp"

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

/// `firstworkd report`: reads the store (read-only), writes the capacity review. Exit 2 for what
/// the caller asked wrongly (no such store, not a store, a baseline that overlaps the period),
/// 1 for failures while reading or writing.
int report(const config::ReportArgs& args, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(args.store, ec)) {
    err << "report: --store " << args.store << ": no such file\n";
    return kExitUsage;
  }
  {
    // Every SQLite database begins with this header; anything else is the wrong file.
    char header[16] = {};
    std::ifstream in(args.store, std::ios::binary);
    in.read(header, sizeof header);
    if (std::string_view(header, static_cast<size_t>(in.gcount())) !=
        std::string_view("SQLite format 3\0", 16)) {
      err << "report: --store " << args.store << " is not a firstwork store (not an SQLite "
          << "database)\n";
      return kExitUsage;
    }
  }
  store::SqliteOptions so;
  so.readOnly = true;
  auto st = store::openSqliteStore(args.store, so);
  if (!st.ok()) {
    err << "report: --store " << args.store << " cannot be read as a firstwork store: "
        << st.error() << "\n";
    return kExitUsage;
  }
  auto current = report::loadPeriod(**st, args.since, args.until);
  if (!current.ok()) {
    err << "report: " << current.error() << "\n";
    return kExitFailure;
  }
  std::optional<report::PeriodData> baseline;
  if (args.baseline) {
    const auto& p = current->period;
    if (args.baseline->from < p.to && p.from < args.baseline->to) {
      err << "report: --baseline " << formatRfc3339(args.baseline->from) << ".."
          << formatRfc3339(args.baseline->to) << " overlaps the period "
          << formatRfc3339(p.from) << ".." << formatRfc3339(p.to)
          << "; give --from/--to for the period to compare\n";
      return kExitUsage;
    }
    auto b = report::loadPeriod(**st, args.baseline->from, args.baseline->to);
    if (!b.ok()) {
      err << "report: baseline: " << b.error() << "\n";
      return kExitFailure;
    }
    baseline = std::move(*b);
  }
  report::Options options;
  options.ownershipCostPerGpuHour = args.ownershipCost;
  options.ratePerGpuHour = args.ratePerGpuHour;
  options.currency = args.currency;
  auto rep = report::buildReport(*current, baseline ? &*baseline : nullptr, options);
  std::vector<report::Format> formats;
  for (auto f : args.formats)
    formats.push_back(f == config::ReportFormat::Csv    ? report::Format::Csv
                      : f == config::ReportFormat::Json ? report::Format::Json
                                                        : report::Format::Markdown);
  auto written = report::writeReport(rep, formats, args.outDir);
  if (!written.ok()) {
    err << "report: " << written.error() << "\n";
    return kExitFailure;
  }
  for (const auto& path : *written) out << path << "\n";
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
      return report(a.report, out, err);
  }
  return kExitUsage;
}

}  // namespace firstwork::app
