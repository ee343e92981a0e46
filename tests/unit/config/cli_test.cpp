#include "firstwork/config/cli.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "firstwork/core/rfc3339.hpp"

using namespace firstwork;
using namespace firstwork::config;
using namespace std::chrono_literals;

namespace {
const SystemTime kNow = parseRfc3339("2026-05-10T12:00:00Z").value();

CliParse parse(std::vector<std::string> args) { return parseCli(args, kNow); }
}  // namespace

TEST_CASE("run takes its config and overrides", "[config][cli]") {
  auto p = parse({"run", "--config", "/etc/fw.yaml", "--listen=[::1]:0", "--store", "/tmp/s.db",
                  "--log-level", "debug", "--shard", "1/3"});
  REQUIRE(p.ok());
  CHECK(p.args.command == Command::Run);
  CHECK(p.args.run.config == "/etc/fw.yaml");
  CHECK(p.args.run.listen == "[::1]:0");
  CHECK(p.args.run.store == "/tmp/s.db");
  CHECK(p.args.run.logLevel == log::Level::Debug);
  REQUIRE(p.args.run.shard);
  CHECK(p.args.run.shard->index == 1);
  CHECK(p.args.run.shard->count == 3);
  CHECK_FALSE(p.args.run.kubeconfig);
}

TEST_CASE("every command-line error is listed, prefixed with the command", "[config][cli]") {
  auto p = parse({"run", "--listen", "--log-level", "loud", "--bogus", "x", "--shard", "3/3",
                  "--store", "a", "--store", "b"});
  CHECK(p.errors == std::vector<std::string>{
                        "run: --listen needs a value",
                        "run: --log-level: unknown log level \"loud\" (expected trace, debug, "
                        "info, warn, error or off)",
                        "run: unknown option --bogus",
                        "run: unexpected argument \"x\"",
                        "run: --shard: need 0 <= I < N",
                        "run: --store given more than once",
                        "run: --config FILE is required (or --kubeconfig FILE for a single "
                        "cluster)"});
}

TEST_CASE("help and version work globally and per command", "[config][cli]") {
  CHECK(parse({"--help"}).args.command == Command::Help);
  CHECK_FALSE(parse({"-h"}).args.helpFor);
  CHECK(parse({"--version"}).args.command == Command::Version);
  auto run_help = parse({"run", "--bogus", "--help"});
  REQUIRE(run_help.ok());  // asking for help is never an error
  CHECK(run_help.args.command == Command::Help);
  CHECK(run_help.args.helpFor == Command::Run);
  CHECK(parse({"help", "report"}).args.helpFor == Command::Report);
  CHECK(parse({"help", "nope"}).errors == std::vector<std::string>{
                                              "help: unknown command \"nope\""});
  CHECK(usage(Command::Report).find("--rate-per-gpu-hour") != std::string::npos);
  CHECK(usage(Command::Run).find("--kubeconfig FILE") != std::string::npos);
  CHECK(usage(Command::Demo).find("--once") != std::string::npos);
  CHECK(usage(Command::CheckConfig).find("exits 2") != std::string::npos);
  CHECK(usage().find("Exit codes: 0 ok, 1 runtime failure, 2 bad command line") !=
        std::string::npos);
  CHECK(versionText().rfind("firstworkd " + std::string(buildVersion()) + " (revision ", 0) == 0);
}

TEST_CASE("no command or an unknown one is a usage error", "[config][cli]") {
  CHECK(parse({}).errors == std::vector<std::string>{"no command given (try firstworkd --help)"});
  CHECK(parse({"serve"}).errors == std::vector<std::string>{"unknown command \"serve\""});
  CHECK(parse({"--config", "x"}).errors ==
        std::vector<std::string>{"unknown option \"--config\" (a command comes first)"});
  CHECK(kExitUsage == 2);
}

TEST_CASE("check-config requires its file", "[config][cli]") {
  CHECK(parse({"check-config", "--config", "f.yaml"}).args.checkConfig.config == "f.yaml");
  CHECK(parse({"check-config"}).errors ==
        std::vector<std::string>{"check-config: --config FILE is required"});
}

TEST_CASE("demo options parse and validate the speed", "[config][cli]") {
  auto p = parse({"demo", "--speed", "60", "--scenario", "reconnect", "--once", "--listen",
                  "127.0.0.1:0"});
  REQUIRE(p.ok());
  CHECK(p.args.demo.speed == 60.0);
  CHECK(p.args.demo.scenario == "reconnect");
  CHECK(p.args.demo.once);
  CHECK(p.args.demo.listen == "127.0.0.1:0");
  CHECK(parse({"demo"}).args.demo.speed == 60.0);  // a drill minute per real second
  CHECK(parse({"demo", "--speed", "0"}).errors ==
        std::vector<std::string>{"demo: --speed: must be greater than 0"});
  CHECK(parse({"demo", "--speed", "fast"}).errors ==
        std::vector<std::string>{"demo: --speed: \"fast\" is not a number"});
  CHECK(parse({"demo", "--once=yes"}).errors ==
        std::vector<std::string>{"demo: --once takes no value"});
}

TEST_CASE("report times accept RFC 3339, dates and durations back from now", "[config][cli]") {
  auto p = parse({"report", "--store", "s.db", "--since", "7d", "--until", "2026-05-10",
                  "--format", "md,csv,json", "--out", "/tmp/r", "--baseline",
                  "2026-04-01..2026-04-08T00:00:00Z", "--ownership-cost", "1200.5",
                  "--rate-per-gpu-hour", "4"});
  REQUIRE(p.ok());
  const ReportArgs& r = p.args.report;
  CHECK(r.store == "s.db");
  // 7 days before 2026-05-10T12:00:00Z is 2026-05-03T12:00:00Z.
  CHECK(r.since == parseRfc3339("2026-05-03T12:00:00Z").value());
  CHECK(r.until == parseRfc3339("2026-05-10T00:00:00Z").value());
  CHECK(r.formats == std::vector<ReportFormat>{ReportFormat::Markdown, ReportFormat::Csv,
                                               ReportFormat::Json});
  CHECK(r.outDir == "/tmp/r");
  REQUIRE(r.baseline);
  CHECK(r.baseline->from == parseRfc3339("2026-04-01T00:00:00Z").value());
  CHECK(r.baseline->to == parseRfc3339("2026-04-08T00:00:00Z").value());
  CHECK(r.ownershipCost == 1200.5);
  CHECK(r.ratePerGpuHour == 4.0);

  auto defaults = parse({"report", "--store", "s.db"});
  REQUIRE(defaults.ok());
  CHECK(defaults.args.report.formats == std::vector<ReportFormat>{ReportFormat::Markdown});
  CHECK(defaults.args.report.outDir == ".");
  CHECK_FALSE(defaults.args.report.since);
}

TEST_CASE("report rejects bad times, formats and amounts together", "[config][cli]") {
  auto p = parse({"report", "--since", "2026-05-10", "--until", "2026-05-01", "--format", "pdf",
                  "--baseline", "2026-04-08..2026-04-01", "--ownership-cost", "-1"});
  CHECK(p.errors == std::vector<std::string>{
                        "report: --format: unknown format \"pdf\" (md, csv, json)",
                        "report: --baseline: FROM must be before TO",
                        "report: --ownership-cost: must not be negative",
                        "report: --store FILE is required",
                        "report: --from (--since) must be before --to (--until)"});
  CHECK_FALSE(parseReportTime("2026-13-01", kNow).ok());
  CHECK_FALSE(parseReportTime("yesterday", kNow).ok());
}

TEST_CASE("report --from/--to, --last, --output and --currency", "[config][cli]") {
  auto p = parse({"report", "--store", "s.db", "--from", "2026-05-01T09:00:00Z", "--to",
                  "2026-05-01T10:00:00Z", "--output", "/tmp/r", "--currency", "EUR"});
  REQUIRE(p.ok());
  CHECK(p.args.report.since == parseRfc3339("2026-05-01T09:00:00Z").value());
  CHECK(p.args.report.until == parseRfc3339("2026-05-01T10:00:00Z").value());
  CHECK(p.args.report.outDir == "/tmp/r");
  CHECK(p.args.report.currency == "EUR");
  CHECK(parse({"report", "--store", "s.db"}).args.report.currency == "US$");
  // --last 7d: [now − 7 d, now) with now = 2026-05-10T12:00:00Z.
  auto last = parse({"report", "--store", "s.db", "--last", "7d"});
  REQUIRE(last.ok());
  CHECK(last.args.report.since == parseRfc3339("2026-05-03T12:00:00Z").value());
  CHECK(last.args.report.until == kNow);

  CHECK(parse({"report", "--store", "s.db", "--last", "soon"}).errors ==
        std::vector<std::string>{"report: --last: \"soon\" is not a positive duration such as 7d"});
  CHECK(parse({"report", "--store", "s.db", "--last", "7d", "--to", "2026-05-01"}).errors ==
        std::vector<std::string>{
            "report: --last cannot be combined with --from/--to (--since/--until)"});
  CHECK(parse({"report", "--store", "s.db", "--from", "1d", "--since", "2d"}).errors ==
        std::vector<std::string>{"report: --since and --from are the same option"});
  CHECK(parse({"report", "--store", "s.db", "--out=a", "--output", "b"}).errors ==
        std::vector<std::string>{"report: --out and --output are the same option"});
  CHECK(parse({"report", "--store", "s.db", "--from", "2026-05-01", "--to", "2026-05-08",
               "--baseline", "2026-05-07..2026-05-09"})
            .errors == std::vector<std::string>{
                           "report: --baseline must not overlap the period it is compared with"});
}

TEST_CASE("demo --store, --start and a scenario list", "[config][cli]") {
  auto p = parse({"demo", "--scenario", "reclaim,reclaim-improved", "--store", "/tmp/fw.db",
                  "--start", "2026-03-02T09:00:00Z"});
  REQUIRE(p.ok());
  CHECK(p.args.demo.scenario == "reclaim,reclaim-improved");
  CHECK(p.args.demo.store == "/tmp/fw.db");
  CHECK(p.args.demo.start == parseRfc3339("2026-03-02T09:00:00Z").value());
  CHECK_FALSE(parse({"demo"}).args.demo.start);
  CHECK(parse({"demo", "--start", "monday"}).errors.size() == 1);
  CHECK(usage(Command::Demo).find("--start") != std::string::npos);
  CHECK(usage(Command::Report).find("--last") != std::string::npos);
}

TEST_CASE("run config applies overrides then validates", "[config][cli]") {
  std::string dir = (std::filesystem::temp_directory_path() / "fw-cli-XXXXXX").string();
  REQUIRE(mkdtemp(dir.data()) != nullptr);
  std::string file = dir + "/fw.yaml";
  std::ofstream(file) << "clusters: [{name: only, role: standalone, inCluster: true}]\n"
                         "server: {listen: 'bad'}\n";
  RunArgs run;
  run.config = file;
  run.listen = "127.0.0.1:0";  // fixes the bad listen address of the file
  run.store = "/tmp/x.db";
  run.logLevel = log::Level::Warn;
  run.kubeconfig = "/k.yaml";
  run.shard = ShardConfig{0, 2};
  auto load = loadRunConfig(run, ValidateOptions{.checkFiles = false});
  INFO(formatProblems(load.problems));
  REQUIRE(load.ok());
  CHECK(load.config.server.listen == "127.0.0.1:0");
  CHECK(load.config.store.path == "/tmp/x.db");
  CHECK(load.config.logging.level == log::Level::Warn);
  CHECK(load.config.clusters[0].kubeconfig == "/k.yaml");
  CHECK_FALSE(load.config.clusters[0].inCluster);
  CHECK(load.config.shard.count == 2);

  RunArgs only_kubeconfig;
  only_kubeconfig.kubeconfig = "/k.yaml";
  auto single = loadRunConfig(only_kubeconfig, ValidateOptions{.checkFiles = false});
  REQUIRE(single.ok());
  REQUIRE(single.config.clusters.size() == 1);
  CHECK(single.config.clusters[0].name == "default");
  CHECK(single.config.clusters[0].role == ClusterRole::Standalone);

  std::ofstream(file) << "clusters: [{name: a, role: standalone, inCluster: true},"
                         " {name: b, role: standalone, inCluster: true}]\n";
  RunArgs two;
  two.config = file;
  two.kubeconfig = "/k.yaml";
  auto ambiguous = loadRunConfig(two, ValidateOptions{.checkFiles = false});
  CHECK(formatProblems(ambiguous.problems) ==
        "--kubeconfig: the config has 2 clusters; --kubeconfig needs exactly one");
  std::filesystem::remove_all(dir);
}
