// Every PromQL expression of every panel of dashboards/*.json returns data when a real Prometheus
// scrapes firstworkd while the drills that exercise the panels play (issue #6). Each is run as
// Grafana runs a panel: a range query over the dashboard's time range (here: the whole run), with
// the variables at Grafana's defaults — "All" for cluster and cluster queue (their allValue `.*`),
// a 1-minute rate interval, a 1-hour range. (Instant queries at the end would miss what only
// exists while a drill plays: the estate is cleared between drills, and a deleted ClusterQueue
// takes its series with it.)
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "ops_support.hpp"
#include "prometheus_support.hpp"

using namespace std::chrono_literals;
using firstwork::testing::Estate;
using firstwork::testing::eventually;

namespace {

/// Panel queries no drill can make return data, and why. Each is still run: it must parse and
/// come back empty (one that starts returning data must leave this list).
const std::map<std::string, std::string> kNoDataInAnyDrill{
    {"firstwork-health.json: panel \"Store errors\" A",
     "firstwork_store_errors_total exists only once a store write, prune or checkpoint has failed "
     "(tests/integration/store_fault_test.cpp provokes that; no drill does)"},
    {"firstwork-health.json: panel \"Decode errors\" A",
     "firstwork_decode_errors_total{cluster, resource} exists once an object failed to decode; "
     "the drills' objects are all well formed (tests/unit/model/robustness_test.cpp feeds "
     "malformed ones to the decoders)"},
    {"firstwork-health.json: panel \"PromQL useful-work queries by result\" A",
     "firstwork_useful_work_queries_total counts the PromQL useful-work probe's queries; the demo "
     "signals useful work by pod annotation and runs no probe "
     "(tests/integration/probe_e2e_test.cpp covers the probe)"},
};

/// Drills that together exercise every other panel.
const char* const kDrills =
    "reconnection-baseline,reclaim,dra-incomplete-pool,invalid-image,telemetry-gap";

}  // namespace

TEST_CASE("Every dashboard panel query returns data after the drills that exercise it",
          "[integration][prometheus][dashboards]") {
  std::vector<firstwork::ops::Expression> exprs;
  for (const auto& file : firstwork::ops::dashboardFiles(FIRSTWORK_SOURCE_DIR)) {
    auto d = firstwork::ops::dashboardExpressions(file);
    exprs.insert(exprs.end(), d.begin(), d.end());
  }
  REQUIRE(exprs.size() > 40);
  const std::map<std::string, std::string> values{
      {"cluster", ".*"},         {"cluster_queue", ".*"}, {"__rate_interval", "1m"},
      {"__interval", "15s"},     {"__range", "1h"},       {"__range_s", "3600"},
      {"datasource", "prometheus"}};
  auto listed = [&](const std::string& where) -> const std::string* {
    for (const auto& [suffix, reason] : kNoDataInAnyDrill)
      if (where.size() >= suffix.size() &&
          where.compare(where.size() - suffix.size(), suffix.size(), suffix) == 0)
        return &reason;
    return nullptr;
  };

  // The drills loop; once the demo starts the first one again, each has played through.
  const auto unixNow = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  };
  const double start = unixNow();
  Estate e({"--scenario", kDrills, "--speed", "240"});
  auto starts = [&] {
    size_t n = 0;
    auto out = e.demo->output();
    for (size_t p = out.find("\n== "); p != std::string::npos; p = out.find("\n== ", p + 1)) ++n;
    return n;
  };
  const size_t drills = std::count(kDrills, kDrills + std::char_traits<char>::length(kDrills), ',') + 1;
  bool allPlayed = eventually([&] { return starts() > drills || !e.demo->running(); }, 120s);
  INFO(e.demo->output());
  REQUIRE(allPlayed);
  REQUIRE(e.demo->running());

  // Until Prometheus has scraped after the drills played through, so their last state is in.
  const double played = unixNow();
  REQUIRE(eventually(
      [&] { return e.query("max(timestamp(firstwork_build_info))").value_or(0) > played; }, 30s));
  const double end = unixNow();
  auto run = [&](const std::string& promql, std::string* error) {
    return e.prometheus->queryRangeResult(promql, start, end, 2, error);
  };
  std::map<std::string, std::string> missing;  // where → expression
  for (const auto& x : exprs) {
    if (listed(x.where)) continue;
    const std::string promql = firstwork::ops::substituteGrafanaVariables(x.expr, values);
    std::string error;
    auto r = run(promql, &error);
    if (!r || !r->is_array() || r->empty())
      missing[x.where] = promql + (error.empty() ? "" : "\n    error: " + error);
  }
  std::string report;
  for (const auto& [where, promql] : missing) report += where + ":\n    " + promql + "\n";
  INFO("panel queries without data:\n" << report);
  CHECK(missing.empty());

  for (const auto& x : exprs) {
    const std::string* reason = listed(x.where);
    if (!reason) continue;
    std::string error;
    auto r = run(firstwork::ops::substituteGrafanaVariables(x.expr, values), &error);
    INFO(x.where << " (expected no data: " << *reason << ")");
    CHECK(error.empty());
    REQUIRE(r);
    CHECK(r->empty());
  }
  // Each listed panel exists (a renamed panel must not leave a stale entry behind).
  for (const auto& entry : kNoDataInAnyDrill) {
    const std::string_view suffix = entry.first;
    bool found = std::any_of(exprs.begin(), exprs.end(), [&](const auto& x) {
      return std::string_view(x.where).ends_with(suffix);
    });
    INFO(suffix);
    CHECK(found);
  }
}
