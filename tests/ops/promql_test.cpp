// Every PromQL expression of the alert rules and dashboards: parses (promtool), uses only metric
// families and labels firstworkd registers, deduplicates HA replicas, keeps device classes apart.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "ops_support.hpp"

using namespace firstwork::ops;

namespace {

const std::string kSource = FIRSTWORK_SOURCE_DIR;

std::vector<Expression> allExpressions() {
  auto out = ruleExpressions(kSource + "/deploy/rules/firstwork-alerts.yaml");
  for (const auto& file : dashboardFiles(kSource)) {
    auto d = dashboardExpressions(file);
    out.insert(out.end(), d.begin(), d.end());
  }
  return out;
}

}  // namespace

TEST_CASE("the metric families are read from firstworkd's sources", "[ops][promql]") {
  auto families = registeredFamilies(kSource);
  // The parser must find both sources' families, or every later check would pass vacuously.
  size_t engine = 0, self = 0, process = 0;
  for (const auto& [name, f] : families) {
    INFO(name);
    (f.process ? process : f.engine ? engine : self)++;
    CHECK(f.labels.empty() == f.process);  // the process's figures are one series each
    CHECK(name.starts_with(f.process ? "process_" : "firstwork_"));
    if (f.type == MetricType::Counter) CHECK(name.ends_with("_total"));
  }
  CHECK(engine >= 20);
  CHECK(self >= 10);
  CHECK(process == 6);
  CHECK(families["process_cpu_seconds_total"].type == MetricType::Counter);
  CHECK(families["process_resident_memory_bytes"].type == MetricType::Gauge);
  CHECK(families["process_open_fds"].process);
  REQUIRE(families.count("firstwork_stranded_gpus"));
  CHECK(families["firstwork_stranded_gpus"].labels ==
        std::set<std::string>{"cluster", "device_class", "unit", "phase"});
  CHECK(families["firstwork_gpus"].labels ==
        std::set<std::string>{"cluster", "device_class", "unit", "state"});
  CHECK(families["firstwork_recovery_stranded_gpu_seconds_total"].labels ==
        std::set<std::string>{"cluster", "device_class", "unit"});
  CHECK(families["firstwork_gpu_nodes"].labels == std::set<std::string>{"cluster", "mode"});
  CHECK(families["firstwork_reclaims_total"].labels ==
        std::set<std::string>{"cluster_queue", "reason", "outcome"});
  CHECK(families["firstwork_stage_seconds"].type == MetricType::Histogram);
  CHECK(families["firstwork_observation_lag_seconds"].type == MetricType::Histogram);
  CHECK_FALSE(families["firstwork_observation_lag_seconds"].engine);
  CHECK(families["firstwork_store_errors_total"].labels == std::set<std::string>{"operation"});
  CHECK(families["firstwork_metrics_renderings_total"].labels == std::set<std::string>{"freshness"});
  CHECK(families["firstwork_engine_steps_total"].labels == std::set<std::string>{"trigger"});
  CHECK(families["firstwork_engine_step_seconds"].type == MetricType::Histogram);
  CHECK(families["firstwork_engine_step_seconds"].labels == std::set<std::string>{"trigger"});
  CHECK(families["firstwork_build_info"].labels == std::set<std::string>{"version", "revision"});
}

TEST_CASE("the family parser and expression checks catch what they are for", "[ops][promql]") {
  const std::string engine = R"(
    a(gauge(r, "firstwork_g", "help")),
    h(histogram(
        r, "firstwork_h_seconds", "help")),
    c(counter(r, "firstwork_c_total", "help")) {}
    s.a.set({{"cluster", x}, {"device_class", y}}, 1);
    u(gauge(r, "firstwork_u", "help")),
    s.u.set({{"cluster", x}, {"device_class", y}, {"unit", z}}, 1);
    s_->h.Add({{"cluster", x}}, b).Observe(1);
    s_->c.Add({{"cluster_queue", q}}).Increment();
  )";
  const std::string self = R"(
    s.up = {&prometheus::BuildGauge()
                .Name("firstwork_up")
                .Help("1 while up, else 0.")
                .Register(registry),
            {"cluster", "resource"}, {}};
    SelfMetrics::~SelfMetrics() = default;
  )";
  const std::string process = R"(
    constexpr FamilyInfo kFamilies[] = {
        {"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
         prometheus::MetricType::Counter},
        {"process_open_fds", "Number of open file descriptors.", prometheus::MetricType::Gauge},
    };
  )";
  auto f = parseFamilies(engine, self, process);
  REQUIRE(f.size() == 7);
  CHECK(f["process_cpu_seconds_total"].type == MetricType::Counter);
  CHECK(f["process_open_fds"].type == MetricType::Gauge);
  CHECK(f["process_open_fds"].process);
  CHECK(f["process_open_fds"].labels.empty());
  // A process family is every exporter's: an expression scopes it to firstwork's targets.
  CHECK(nameProblems("process_open_fds and on (job, instance) firstwork_up", f).empty());
  CHECK(nameProblems("process_open_fds", f) == std::vector<std::string>{"uses no firstwork metric"});
  CHECK(nameProblems("process_open_fdz and on (job, instance) firstwork_up", f) ==
        std::vector<std::string>{"unknown metric process_open_fdz"});
  CHECK(nameProblems("sum by (cluster) (process_open_fds and on (job, instance) firstwork_g)", f)
            .empty());
  CHECK_FALSE(
      nameProblems("sum by (device) (process_open_fds and on (job, instance) firstwork_up)", f)
          .empty());
  CHECK(f["firstwork_g"].labels == std::set<std::string>{"cluster", "device_class"});
  CHECK(f["firstwork_h_seconds"].type == MetricType::Histogram);
  CHECK(f["firstwork_c_total"].type == MetricType::Counter);
  CHECK(f["firstwork_up"].labels == std::set<std::string>{"cluster", "resource"});
  CHECK_FALSE(f["firstwork_up"].engine);

  CHECK(nameProblems("rate(firstwork_h_seconds_bucket{cluster=\"a\"}[5m])", f).empty());
  CHECK_FALSE(nameProblems("firstwork_h_seconds", f).empty());        // histogram without suffix
  CHECK_FALSE(nameProblems("firstwork_renamed_total", f).empty());    // not registered
  CHECK_FALSE(nameProblems("firstwork_g{clutser=\"a\"}", f).empty()); // no such label
  CHECK_FALSE(nameProblems("sum by (cluster_queue) (firstwork_g)", f).empty());
  CHECK(nameProblems("sum by (instance, cluster) (firstwork_up)", f).empty());

  const std::string ok = "sum by (cluster, device_class) (max without (instance, pod) (firstwork_g))";
  CHECK(aggregationProblems(ok, f).empty());
  CHECK_FALSE(aggregationProblems("sum by (cluster, device_class) (firstwork_g)", f).empty());
  CHECK_FALSE(
      aggregationProblems("sum by (cluster) (max without (instance, pod) (firstwork_g))", f).empty());
  CHECK_FALSE(aggregationProblems("sum(max without (instance, pod) (firstwork_g))", f).empty());
  CHECK_FALSE(aggregationProblems(
                  "max without (instance, pod) (firstwork_g) / firstwork_g", f)
                  .empty());
  CHECK(aggregationProblems("firstwork_up == 0", f).empty());  // own health: per replica
  // A family with a unit label keeps it too: shares and the GPUs behind them share a device class.
  CHECK(aggregationProblems(
            "sum by (cluster, device_class, unit) (max without (instance, pod) (firstwork_u))", f)
            .empty());
  CHECK(aggregationProblems(
            "sum by (cluster, device_class) (max without (instance, pod) (firstwork_u))", f) ==
        std::vector<std::string>{"by-clause drops unit"});
}

TEST_CASE("Grafana variables take chosen values, others stand-ins PromQL accepts", "[ops][promql]") {
  CHECK(substituteGrafanaVariables(
            "rate(x{cluster=~\"$cluster\", q=~\"${cluster_queue}\"}[$__rate_interval]) offset "
            "$__range",
            {{"cluster", ".*"}, {"__rate_interval", "1m"}}) ==
        "rate(x{cluster=~\".*\", q=~\"x\"}[1m]) offset 1h");
  CHECK(substituteGrafanaVariables("y[$__interval]") == "y[1m]");
}

TEST_CASE("every rule and dashboard expression parses", "[ops][promql]") {
  const auto exprs = allExpressions();
  REQUIRE(exprs.size() > 40);
  // promtool parses PromQL when it checks a rule file: one recording rule per expression
  // (JSON is YAML).
  nlohmann::json rules;
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < exprs.size(); ++i)
    list.push_back({{"record", "ops_check:expr_" + std::to_string(i)},
                    {"expr", substituteGrafanaVariables(exprs[i].expr)}});
  rules["groups"] = nlohmann::json::array({{{"name", "ops-check"}, {"rules", list}}});
  TempDir dir;
  const std::string file = dir.path() + "/exprs.yaml";
  std::ofstream(file) << rules.dump(2);
  auto run = runTool({FIRSTWORK_PROMTOOL, "check", "rules", file});
  INFO(run.output);
  CHECK(run.exitCode == 0);
  CHECK(run.output.find("SUCCESS: " + std::to_string(exprs.size()) + " rules found") !=
        std::string::npos);
}

TEST_CASE("every expression uses only registered metric families and their labels",
          "[ops][promql]") {
  const auto families = registeredFamilies(kSource);
  std::set<std::string> used;
  for (const auto& e : allExpressions()) {
    INFO(e.where << "\n" << e.expr);
    CHECK(nameProblems(e.expr, families) == std::vector<std::string>{});
    for (auto& n : metricNames(e.expr)) used.insert(n);
  }
  // The dashboards and rules between them look at the whole contract.
  for (const char* name :
       {"firstwork_stranded_gpu_seconds_total", "firstwork_stranded_gpus",
        "firstwork_recovery_seconds_bucket", "firstwork_reconnect_to_first_work_seconds_bucket",
        "firstwork_recoveries_total", "firstwork_recovery_stranded_gpu_seconds_total",
        "firstwork_reclaim_to_first_work_seconds_bucket",
        "firstwork_reservation_to_first_work_seconds_bucket", "firstwork_stage_seconds_bucket",
        "firstwork_gpus", "firstwork_dra_pools", "firstwork_dra_pool_incomplete_seconds_total",
        "firstwork_stuck_workloads", "firstwork_workloads", "firstwork_gpu_seconds_total",
        "firstwork_watch_up", "firstwork_watch_restarts_total", "firstwork_decode_errors_total",
        "firstwork_observation_lag_seconds_bucket", "firstwork_cluster_clock_skew_seconds",
        "firstwork_store_errors_total", "firstwork_tracked_objects",
        "firstwork_duplicate_executions_total", "firstwork_reservations_without_capacity_total",
        "firstwork_metrics_renderings_total", "firstwork_engine_steps_total",
        "firstwork_engine_step_seconds_bucket", "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds"}) {
    INFO(name);
    CHECK(used.count(name));
  }
}

TEST_CASE("estate metrics are deduplicated across replicas and device classes stay apart",
          "[ops][promql]") {
  const auto families = registeredFamilies(kSource);
  for (const auto& e : allExpressions()) {
    if (e.variable) continue;  // a variable lists label values; nothing is counted
    INFO(e.where << "\n" << e.expr);
    CHECK(aggregationProblems(e.expr, families) == std::vector<std::string>{});
  }
}
