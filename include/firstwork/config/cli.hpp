#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/config/config.hpp"
#include "firstwork/core/clock.hpp"
#include "firstwork/log/log.hpp"

namespace firstwork::config {

/// Exit codes of firstworkd. 2 means "you asked for something invalid" (bad command line, bad
/// config — nothing was started); 1 means a failure while running (cannot bind, store unwritable).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// Version and git revision baked in at build time (`firstwork_build_info`, `--version`).
std::string_view buildVersion();
std::string_view buildRevision();
/// `firstworkd 0.1.0 (revision 0123456789ab)`.
std::string versionText();

enum class Command : uint8_t { Run, CheckConfig, Demo, Report, Help, Version };
/// `run`, `check-config`, `demo`, `report`, `help`, `version`.
std::string_view commandName(Command command);

enum class ReportFormat : uint8_t { Markdown, Csv, Json };

/// A half-open period [from, to).
struct TimeRange {
  SystemTime from;
  SystemTime to;
};

/// `firstworkd run --config F [--listen ADDR] [--store F] [--log-level L] [--kubeconfig F]
/// [--shard I/N]`. Without --config, --kubeconfig alone runs one standalone cluster.
struct RunArgs {
  std::string config;
  std::optional<std::string> listen;
  std::optional<std::string> store;
  std::optional<log::Level> logLevel;
  std::optional<std::string> kubeconfig;
  std::optional<ShardConfig> shard;
};

/// `firstworkd check-config --config F`.
struct CheckConfigArgs {
  std::string config;
};

/// `firstworkd demo [--listen ADDR] [--speed X] [--scenario NAME[,NAME...]] [--once]
/// [--store F] [--start T] [--log-level L]`.
struct DemoArgs {
  std::optional<std::string> listen;
  double speed = 60.0;   // simulated seconds per real second (a drill minute per second); > 0
  std::string scenario;  // empty: every scenario in turn; else a comma-separated list, in order
  bool once = false;     // play the scenarios once and exit instead of looping
  std::optional<log::Level> logLevel;
  /// Keep the daemon's store in this file (default: a temporary file, removed at exit), e.g. to
  /// run `firstworkd report` on the drills afterwards.
  std::optional<std::string> store;
  /// The simulated clock starts at this time and the drills follow a fixed schedule, so every
  /// event time (and so the report on them) is the same from run to run.
  std::optional<SystemTime> start;
};

/// `firstworkd report --store F [--from T] [--to T] [--last D] [--format md|csv|json[,...]]
/// [--output DIR] [--baseline FROM..TO] [--ownership-cost X] [--rate-per-gpu-hour X]
/// [--currency C]`. `--since`/`--until` and `--out` are accepted as synonyms.
/// Times: RFC 3339, a date `YYYY-MM-DD` (00:00 UTC), or a duration back from now (`7d`, `12h`);
/// `--last 7d` is the period [now − 7d, now).
struct ReportArgs {
  std::string store;
  std::optional<SystemTime> since;
  std::optional<SystemTime> until;
  std::vector<ReportFormat> formats{ReportFormat::Markdown};
  std::string outDir = ".";
  std::optional<TimeRange> baseline;      // the "before" period to compare against
  std::optional<double> ownershipCost;    // cost of owning one GPU for an hour (currency), >= 0
  std::optional<double> ratePerGpuHour;   // allocation value per GPU-hour, >= 0
  std::string currency = "US$";           // printed before amounts
};

/// The parsed command line. Only the member of `command` is meaningful.
struct CliArgs {
  Command command = Command::Help;
  /// For Command::Help: the command whose usage was asked for (`run --help`, `help run`).
  std::optional<Command> helpFor;
  RunArgs run;
  CheckConfigArgs checkConfig;
  DemoArgs demo;
  ReportArgs report;
};

/// `errors` lists every problem found (not just the first), one message each, prefixed with the
/// command (`run: --listen needs a value`). Non-empty errors ⇒ print them and exit kExitUsage.
struct CliParse {
  CliArgs args;
  std::vector<std::string> errors;
  bool ok() const { return errors.empty(); }
};

/// Parses the arguments after the program name. Pure: `now` anchors relative report times.
/// Accepts `--opt value` and `--opt=value`; `-h` is `--help`.
CliParse parseCli(std::span<const std::string> args, SystemTime now);
CliParse parseCli(int argc, const char* const* argv, SystemTime now);

/// Usage text: the overview without a command, else that command's options.
std::string usage(std::optional<Command> command = std::nullopt);

/// Parses a report time (see ReportArgs) relative to `now`.
Result<SystemTime> parseReportTime(std::string_view text, SystemTime now);

/// Builds the config `run` starts with: the file (when --config is given) with --listen,
/// --store, --log-level, --kubeconfig and --shard applied, then validated. --kubeconfig replaces
/// the kubeconfig of the only cluster (and is an error with several); without --config it
/// defines a single standalone cluster named `default`. All problems are returned together.
ConfigLoad loadRunConfig(const RunArgs& run, const ValidateOptions& options = {});

}  // namespace firstwork::config
