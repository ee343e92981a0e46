#include "firstwork/config/cli.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include "firstwork/config/duration.hpp"
#include "firstwork/core/rfc3339.hpp"

#ifndef FIRSTWORK_VERSION
#define FIRSTWORK_VERSION "0.0.0"
#endif
#ifndef FIRSTWORK_REVISION
#define FIRSTWORK_REVISION "unknown"
#endif

namespace firstwork::config {
namespace {

struct Option {
  std::string_view name;  // without the leading --
  bool takesValue;
  std::function<void(std::string_view value, std::vector<std::string>& errors)> apply;
};

Result<double> parseNumber(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    return makeError(fmt::format("\"{}\" is not a number", text));
  }
  return v;
}

std::optional<Command> commandFromName(std::string_view name) {
  if (name == "run") return Command::Run;
  if (name == "check-config") return Command::CheckConfig;
  if (name == "demo") return Command::Demo;
  if (name == "report") return Command::Report;
  if (name == "help") return Command::Help;
  if (name == "version") return Command::Version;
  return std::nullopt;
}

constexpr std::string_view kOverview =
    "firstworkd: how long GPUs sit without useful work on Kueue/MultiKueue estates.\n"
    "\n"
    "Usage: firstworkd <command> [options]\n"
    "\n"
    "Commands:\n"
    "  run            watch the clusters of a config file and serve metrics and the API\n"
    "  check-config   validate a config file, print every problem (exit 2 if any)\n"
    "  demo           run against an embedded simulated estate (no cluster needed)\n"
    "  report         write the capacity review from a store\n"
    "  help [CMD]     show this text, or the options of CMD\n"
    "\n"
    "Options:\n"
    "  -h, --help     show help (after a command: that command's options)\n"
    "  --version      print the version and exit\n"
    "\n"
    "Exit codes: 0 ok, 1 runtime failure, 2 bad command line or bad config.\n";

constexpr std::string_view kRunUsage =
    "Usage: firstworkd run --config FILE [options]\n"
    "       firstworkd run --kubeconfig FILE [options]\n"
    "\n"
    "Watches every cluster of the config and serves /metrics, /healthz, /readyz and /api/v1/.\n"
    "\n"
    "Options:\n"
    "  --config FILE      YAML config (see config/firstwork.example.yaml)\n"
    "  --listen ADDR      override server.listen: host:port, [ipv6]:port or :port (port 0 = any)\n"
    "  --store FILE       override store.path (SQLite database)\n"
    "  --log-level LEVEL  override logging.level: trace, debug, info, warn, error, off\n"
    "  --kubeconfig FILE  kubeconfig of the only cluster; without --config, watch that one\n"
    "                     cluster as role standalone\n"
    "  --shard I/N        run shard I of N (0 <= I < N): watch the management cluster and the\n"
    "                     other clusters whose name hashes to I\n"
    "  -h, --help         show this text\n";

constexpr std::string_view kCheckConfigUsage =
    "Usage: firstworkd check-config --config FILE\n"
    "\n"
    "Loads and validates FILE, including referenced files (kubeconfigs, token and TLS files).\n"
    "Prints one line per problem as `key.path: message` and exits 2 if there is any, else prints\n"
    "`config ok` and exits 0.\n"
    "\n"
    "Options:\n"
    "  --config FILE  the YAML config to check\n"
    "  -h, --help     show this text\n";

constexpr std::string_view kDemoUsage =
    "Usage: firstworkd demo [options]\n"
    "\n"
    "Runs the daemon against an in-process simulated estate served over real HTTP watch streams,\n"
    "playing the drills of the design (reconnection, reclaim, stale DRA pools) in a loop.\n"
    "\n"
    "Options:\n"
    "  --listen ADDR      address to serve on (default 127.0.0.1:9500)\n"
    "  --speed X          simulated seconds per real second (default 60; > 0)\n"
    "  --scenario NAMES   play only these scenarios, comma-separated, in that order (default: all)\n"
    "  --once             play once and exit instead of looping\n"
    "  --store FILE       keep the daemon's store in FILE (default: a temporary file), e.g. for\n"
    "                     `firstworkd report --store FILE`\n"
    "  --start T          the simulated clock starts at T (RFC 3339) and the drills follow a\n"
    "                     fixed schedule, so every event time is the same from run to run\n"
    "  --log-level LEVEL  trace, debug, info, warn, error, off (default info)\n"
    "  -h, --help         show this text\n";

constexpr std::string_view kReportUsage =
    "Usage: firstworkd report --store FILE [options]\n"
    "\n"
    "Writes the capacity review from a store: reconnection incidents with every milestone and\n"
    "their stranded GPU-minutes, reclaims, per-queue latency summaries, reserved, allocated and\n"
    "productive GPU-hours, SVG plots, and optionally a before/after comparison.\n"
    "\n"
    "Options:\n"
    "  --store FILE               the SQLite store written by `run` (opened read-only)\n"
    "  --from T, --to T           period [from, to) (synonyms --since, --until); default:\n"
    "                             everything in the store. T is RFC 3339\n"
    "                             (2026-05-01T00:00:00Z), a date (2026-05-01, midnight UTC) or a\n"
    "                             duration back from now (7d, 12h)\n"
    "  --last D                   the period [now - D, now), e.g. --last 7d\n"
    "  --format F[,F...]          md, csv, json (default md)\n"
    "  --output DIR               output directory (synonym --out; default .); the Markdown's\n"
    "                             SVG plots are written beside it\n"
    "  --baseline FROM..TO        an earlier period to compare against, drill by drill (times\n"
    "                             as above)\n"
    "  --ownership-cost X         what owning one GPU for an hour costs, for the effective cost\n"
    "                             per productive GPU-hour (an allocation, not cash)\n"
    "  --rate-per-gpu-hour X      value of one GPU-hour: allocated capacity, and the\n"
    "                             before/after difference (an allocation, not cash)\n"
    "  --currency C               printed before amounts (default US$)\n"
    "  -h, --help                 show this text\n";

class CliParser {
 public:
  CliParser(std::span<const std::string> args, SystemTime now) : args_(args), now_(now) {}

  CliParse parse() {
    CliParse out;
    if (args_.empty()) {
      out.errors.push_back("no command given (try firstworkd --help)");
      return out;
    }
    std::string_view first = args_[0];
    if (first == "--help" || first == "-h") {
      out.args.command = Command::Help;
      if (args_.size() > 1) out.errors.push_back(fmt::format("unexpected argument \"{}\"", args_[1]));
      return out;
    }
    if (first == "--version") {
      out.args.command = Command::Version;
      if (args_.size() > 1) out.errors.push_back(fmt::format("unexpected argument \"{}\"", args_[1]));
      return out;
    }
    auto cmd = commandFromName(first);
    if (!cmd) {
      out.errors.push_back(first.rfind("-", 0) == 0
                               ? fmt::format("unknown option \"{}\" (a command comes first)", first)
                               : fmt::format("unknown command \"{}\"", first));
      return out;
    }
    out.args.command = *cmd;
    std::span<const std::string> rest = args_.subspan(1);
    switch (*cmd) {
      case Command::Help:
        if (!rest.empty()) {
          auto topic = commandFromName(rest[0]);
          if (!topic) out.errors.push_back(fmt::format("help: unknown command \"{}\"", rest[0]));
          else out.args.helpFor = *topic;
          if (rest.size() > 1) {
            out.errors.push_back(fmt::format("help: unexpected argument \"{}\"", rest[1]));
          }
        }
        return out;
      case Command::Version:
        if (!rest.empty()) {
          out.errors.push_back(fmt::format("version: unexpected argument \"{}\"", rest[0]));
        }
        return out;
      case Command::Run: parseRun(rest, out); break;
      case Command::CheckConfig: parseCheckConfig(rest, out); break;
      case Command::Demo: parseDemo(rest, out); break;
      case Command::Report: parseReport(rest, out); break;
    }
    return out;
  }

 private:
  // Runs the option table over `rest`; returns false when --help was asked (then `out` becomes a
  // help request for `cmd` and other errors are dropped: asking for help is never an error).
  bool applyOptions(Command cmd, std::span<const std::string> rest, std::vector<Option>& table,
                    CliParse& out) {
    std::string prefix = std::string(commandName(cmd));
    std::map<std::string_view, int> seen;
    std::vector<std::string> errors;
    for (size_t i = 0; i < rest.size(); ++i) {
      std::string_view arg = rest[i];
      if (arg == "--help" || arg == "-h") {
        out.args.command = Command::Help;
        out.args.helpFor = cmd;
        out.errors.clear();
        return false;
      }
      if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
        errors.push_back(fmt::format("unexpected argument \"{}\"", arg));
        continue;
      }
      std::string_view body = arg.substr(2);
      std::optional<std::string_view> inline_value;
      if (size_t eq = body.find('='); eq != std::string_view::npos) {
        inline_value = body.substr(eq + 1);
        body = body.substr(0, eq);
      }
      Option* opt = nullptr;
      for (auto& o : table) {
        if (o.name == body) opt = &o;
      }
      if (opt == nullptr) {
        errors.push_back(fmt::format("unknown option --{}", body));
        continue;
      }
      if (++seen[opt->name] == 2) errors.push_back(fmt::format("--{} given more than once", body));
      if (!opt->takesValue) {
        if (inline_value) errors.push_back(fmt::format("--{} takes no value", body));
        else opt->apply("", errors);
        continue;
      }
      std::string_view value;
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < rest.size() && rest[i + 1].rfind("--", 0) != 0) {
        value = rest[++i];
      } else {
        errors.push_back(fmt::format("--{} needs a value", body));
        continue;
      }
      if (value.empty()) {
        errors.push_back(fmt::format("--{} needs a non-empty value", body));
        continue;
      }
      opt->apply(value, errors);
    }
    for (auto& e : errors) out.errors.push_back(fmt::format("{}: {}", prefix, e));
    return true;
  }

  static Option stringOpt(std::string_view name, std::string& target) {
    return {name, true, [&target](std::string_view v, auto&) { target = std::string(v); }};
  }
  static Option optionalStringOpt(std::string_view name, std::optional<std::string>& target) {
    return {name, true, [&target](std::string_view v, auto&) { target = std::string(v); }};
  }
  static Option levelOpt(std::optional<log::Level>& target) {
    return {"log-level", true, [&target](std::string_view v, std::vector<std::string>& errors) {
              auto level = log::parseLevel(v);
              if (level.ok()) target = *level;
              else errors.push_back(fmt::format("--log-level: {}", level.error()));
            }};
  }
  Option timeOpt(std::string_view name, std::optional<SystemTime>& target) {
    return {name, true, [this, name, &target](std::string_view v, std::vector<std::string>& e) {
              auto t = parseReportTime(v, now_);
              if (t.ok()) target = *t;
              else e.push_back(fmt::format("--{}: {}", name, t.error()));
            }};
  }
  static Option nonNegativeOpt(std::string_view name, std::optional<double>& target) {
    return {name, true, [name, &target](std::string_view v, std::vector<std::string>& e) {
              auto n = parseNumber(v);
              if (!n.ok()) e.push_back(fmt::format("--{}: {}", name, n.error()));
              else if (*n < 0) e.push_back(fmt::format("--{}: must not be negative", name));
              else target = *n;
            }};
  }

  void parseRun(std::span<const std::string> rest, CliParse& out) {
    RunArgs& r = out.args.run;
    std::vector<Option> table{
        stringOpt("config", r.config),
        optionalStringOpt("listen", r.listen),
        optionalStringOpt("store", r.store),
        levelOpt(r.logLevel),
        optionalStringOpt("kubeconfig", r.kubeconfig),
        {"shard", true,
         [&r](std::string_view v, std::vector<std::string>& e) {
           size_t slash = v.find('/');
           uint32_t index = 0, count = 0;
           bool ok = slash != std::string_view::npos;
           if (ok) {
             auto [p1, e1] = std::from_chars(v.data(), v.data() + slash, index);
             auto [p2, e2] = std::from_chars(v.data() + slash + 1, v.data() + v.size(), count);
             ok = e1 == std::errc() && p1 == v.data() + slash && e2 == std::errc() &&
                  p2 == v.data() + v.size();
           }
           if (!ok) e.push_back(fmt::format("--shard: \"{}\" is not I/N (e.g. 0/3)", v));
           else if (count < 1 || index >= count) e.push_back("--shard: need 0 <= I < N");
           else r.shard = ShardConfig{index, count};
         }},
    };
    if (!applyOptions(Command::Run, rest, table, out)) return;
    if (r.config.empty() && !r.kubeconfig) {
      out.errors.push_back("run: --config FILE is required (or --kubeconfig FILE for a single "
                           "cluster)");
    }
  }

  void parseCheckConfig(std::span<const std::string> rest, CliParse& out) {
    std::vector<Option> table{stringOpt("config", out.args.checkConfig.config)};
    if (!applyOptions(Command::CheckConfig, rest, table, out)) return;
    if (out.args.checkConfig.config.empty()) {
      out.errors.push_back("check-config: --config FILE is required");
    }
  }

  void parseDemo(std::span<const std::string> rest, CliParse& out) {
    DemoArgs& d = out.args.demo;
    std::vector<Option> table{
        optionalStringOpt("listen", d.listen),
        {"speed", true,
         [&d](std::string_view v, std::vector<std::string>& e) {
           auto n = parseNumber(v);
           if (!n.ok()) e.push_back(fmt::format("--speed: {}", n.error()));
           else if (*n <= 0) e.push_back("--speed: must be greater than 0");
           else d.speed = *n;
         }},
        stringOpt("scenario", d.scenario),
        {"once", false, [&d](std::string_view, auto&) { d.once = true; }},
        levelOpt(d.logLevel),
        optionalStringOpt("store", d.store),
        {"start", true,
         [&d](std::string_view v, std::vector<std::string>& e) {
           auto t = parseRfc3339(v);
           if (t.ok()) d.start = *t;
           else e.push_back(fmt::format("--start: \"{}\": {}", v, t.error()));
         }},
    };
    applyOptions(Command::Demo, rest, table, out);
  }

  void parseReport(std::span<const std::string> rest, CliParse& out) {
    ReportArgs& r = out.args.report;
    std::vector<Option> table{
        stringOpt("store", r.store),
        timeOpt("since", r.since),
        timeOpt("until", r.until),
        timeOpt("from", r.since),
        timeOpt("to", r.until),
        {"last", true,
         [this, &r](std::string_view v, std::vector<std::string>& e) {
           auto d = parseDuration(v);
           if (!d.ok() || d->count() <= 0) {
             e.push_back(fmt::format("--last: \"{}\" is not a positive duration such as 7d", v));
             return;
           }
           r.since = now_ - std::chrono::duration_cast<SystemTime::duration>(*d);
           r.until = now_;
         }},
        {"format", true,
         [&r](std::string_view v, std::vector<std::string>& e) {
           r.formats.clear();
           size_t start = 0;
           while (start <= v.size()) {
             size_t comma = v.find(',', start);
             std::string_view f = v.substr(start, comma == std::string_view::npos ? v.npos
                                                                                  : comma - start);
             ReportFormat fmt_value{};
             if (f == "md" || f == "markdown") fmt_value = ReportFormat::Markdown;
             else if (f == "csv") fmt_value = ReportFormat::Csv;
             else if (f == "json") fmt_value = ReportFormat::Json;
             else {
               e.push_back(fmt::format("--format: unknown format \"{}\" (md, csv, json)", f));
               fmt_value = ReportFormat::Markdown;
             }
             if (std::find(r.formats.begin(), r.formats.end(), fmt_value) == r.formats.end()) {
               r.formats.push_back(fmt_value);
             }
             if (comma == std::string_view::npos) break;
             start = comma + 1;
           }
         }},
        stringOpt("out", r.outDir),
        stringOpt("output", r.outDir),
        stringOpt("currency", r.currency),
        {"baseline", true,
         [this, &r](std::string_view v, std::vector<std::string>& e) {
           size_t dots = v.find("..");
           if (dots == std::string_view::npos) {
             e.push_back(fmt::format("--baseline: \"{}\" is not FROM..TO", v));
             return;
           }
           auto from = parseReportTime(v.substr(0, dots), now_);
           auto to = parseReportTime(v.substr(dots + 2), now_);
           if (!from.ok()) e.push_back(fmt::format("--baseline: {}", from.error()));
           if (!to.ok()) e.push_back(fmt::format("--baseline: {}", to.error()));
           if (from.ok() && to.ok()) {
             if (*from >= *to) e.push_back("--baseline: FROM must be before TO");
             else r.baseline = TimeRange{*from, *to};
           }
         }},
        nonNegativeOpt("ownership-cost", r.ownershipCost),
        nonNegativeOpt("rate-per-gpu-hour", r.ratePerGpuHour),
    };
    if (!applyOptions(Command::Report, rest, table, out)) return;
    // Synonyms set the same thing: giving both is as ambiguous as giving one twice.
    auto given = [&](std::string_view name) {
      return std::any_of(rest.begin(), rest.end(), [&](const std::string& a) {
        return a == fmt::format("--{}", name) || a.rfind(fmt::format("--{}=", name), 0) == 0;
      });
    };
    for (auto [a, b] : {std::pair{"since", "from"}, {"until", "to"}, {"out", "output"}})
      if (given(a) && given(b))
        out.errors.push_back(fmt::format("report: --{} and --{} are the same option", a, b));
    const bool lastConflict =
        given("last") && (given("since") || given("from") || given("until") || given("to"));
    if (lastConflict)
      out.errors.push_back("report: --last cannot be combined with --from/--to (--since/--until)");
    if (r.store.empty()) out.errors.push_back("report: --store FILE is required");
    if (!lastConflict && r.since && r.until && *r.since >= *r.until) {
      out.errors.push_back("report: --from (--since) must be before --to (--until)");
    }
    if (r.baseline && r.since && r.until && r.baseline->from < *r.until &&
        *r.since < r.baseline->to) {
      out.errors.push_back("report: --baseline must not overlap the period it is compared with");
    }
  }

  std::span<const std::string> args_;
  SystemTime now_;
};

}  // namespace

std::string_view buildVersion() { return FIRSTWORK_VERSION; }
std::string_view buildRevision() { return FIRSTWORK_REVISION; }
std::string versionText() {
  return fmt::format("firstworkd {} (revision {})", buildVersion(), buildRevision());
}

std::string_view commandName(Command command) {
  switch (command) {
    case Command::Run: return "run";
    case Command::CheckConfig: return "check-config";
    case Command::Demo: return "demo";
    case Command::Report: return "report";
    case Command::Help: return "help";
    case Command::Version: return "version";
  }
  return "help";
}

Result<SystemTime> parseReportTime(std::string_view text, SystemTime now) {
  if (text.empty()) return makeError("empty time");
  if (text.find('T') != std::string_view::npos || text.find('t') != std::string_view::npos) {
    auto t = parseRfc3339(text);
    if (!t.ok()) return makeError(fmt::format("\"{}\": {}", text, t.error()));
    return *t;
  }
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    auto t = parseRfc3339(fmt::format("{}T00:00:00Z", text));
    if (!t.ok()) return makeError(fmt::format("\"{}\" is not a valid date", text));
    return *t;
  }
  auto d = parseDuration(text);
  if (!d.ok()) {
    return makeError(fmt::format("\"{}\" is neither RFC 3339, YYYY-MM-DD nor a duration such as "
                                 "7d", text));
  }
  return now - std::chrono::duration_cast<SystemTime::duration>(*d);
}

CliParse parseCli(std::span<const std::string> args, SystemTime now) {
  return CliParser(args, now).parse();
}

CliParse parseCli(int argc, const char* const* argv, SystemTime now) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parseCli(std::span<const std::string>(args), now);
}

std::string usage(std::optional<Command> command) {
  if (!command) return std::string(kOverview);
  switch (*command) {
    case Command::Run: return std::string(kRunUsage);
    case Command::CheckConfig: return std::string(kCheckConfigUsage);
    case Command::Demo: return std::string(kDemoUsage);
    case Command::Report: return std::string(kReportUsage);
    case Command::Help:
    case Command::Version: return std::string(kOverview);
  }
  return std::string(kOverview);
}

ConfigLoad loadRunConfig(const RunArgs& run, const ValidateOptions& options) {
  ConfigLoad load;
  if (!run.config.empty()) {
    // Parse without the semantic pass: the overrides below may fix what it would report.
    load = loadConfigDetailed(run.config, options);
    // Keep only syntax/type problems; semantic ones are recomputed after the overrides.
    ConfigProblems semantic = validateConfig(load.config, options);
    std::erase_if(load.problems, [&](const ConfigProblem& p) {
      return std::find(semantic.begin(), semantic.end(), p) != semantic.end();
    });
  }
  Config& c = load.config;
  if (run.kubeconfig) {
    if (run.config.empty()) {
      ClusterConfig single;
      single.name = "default";
      single.role = ClusterRole::Standalone;
      single.kubeconfig = *run.kubeconfig;
      c.clusters = {std::move(single)};
    } else if (c.clusters.size() == 1) {
      c.clusters[0].kubeconfig = *run.kubeconfig;
      c.clusters[0].inCluster = false;
    } else {
      load.problems.push_back({"--kubeconfig", fmt::format("the config has {} clusters; "
                                                           "--kubeconfig needs exactly one",
                                                           c.clusters.size())});
    }
  }
  if (run.listen) c.server.listen = *run.listen;
  if (run.store) c.store.path = *run.store;
  if (run.logLevel) c.logging.level = *run.logLevel;
  if (run.shard) c.shard = *run.shard;
  size_t parse_problems = load.problems.size();
  for (auto& p : validateConfig(c, options)) {
    // A value that failed to parse kept its default; a second problem at that path is noise.
    bool duplicate = std::any_of(load.problems.begin(),
                                 load.problems.begin() + static_cast<std::ptrdiff_t>(parse_problems),
                                 [&](const ConfigProblem& q) { return q.path == p.path; });
    if (!duplicate) load.problems.push_back(std::move(p));
  }
  return load;
}

}  // namespace firstwork::config
