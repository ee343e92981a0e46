#include "firstwork/metrics/self_metrics.hpp"

#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

using namespace firstwork::metrics;

namespace {

// Sample lines only (no # HELP / # TYPE), sorted: the order of series inside a family is a
// hash-map order in prometheus-cpp.
std::vector<std::string> samples(const prometheus::Registry& registry) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

bool has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

}  // namespace

TEST_CASE("watch health series carry the contract names and labels", "[metrics][self]") {
  prometheus::Registry registry;
  SelfMetrics m(registry, {1, 10}, "0.1.0", "abc123");
  m.watchUp("w1", "pods", true);
  m.watchEvent("w1", "pods", "ADDED", 3);
  m.watchEvent("w1", "pods", "ADDED");
  m.watchRestart("w1", "pods", "expired");
  m.decodeError("w1", "pods");
  m.trackedObjects("w1", "pods", 42);
  m.clockSkew("w1", -1.5);
  m.insecureTls("w1", true);
  m.storeError("write");
  m.usefulWorkQuery("ok");
  m.metricsRendering("stale", 0);  // the series exists before the first stale rendering
  m.metricsRendering("current");
  m.metricsRendering("current");
  m.engineStep("tick", 0);
  m.engineStep("scrape");
  m.engineStep("events", 2);

  auto lines = samples(registry);
  CHECK(has(lines, R"(firstwork_build_info{revision="abc123",version="0.1.0"} 1)"));
  CHECK(has(lines, R"(firstwork_watch_up{cluster="w1",resource="pods"} 1)"));
  CHECK(has(lines, R"(firstwork_watch_events_total{cluster="w1",resource="pods",type="ADDED"} 4)"));
  CHECK(has(lines,
            R"(firstwork_watch_restarts_total{cluster="w1",reason="expired",resource="pods"} 1)"));
  CHECK(has(lines, R"(firstwork_decode_errors_total{cluster="w1",resource="pods"} 1)"));
  CHECK(has(lines, R"(firstwork_tracked_objects{cluster="w1",resource="pods"} 42)"));
  CHECK(has(lines, R"(firstwork_cluster_clock_skew_seconds{cluster="w1"} -1.5)"));
  CHECK(has(lines, R"(firstwork_cluster_insecure_tls{cluster="w1"} 1)"));
  CHECK(has(lines, R"(firstwork_store_errors_total{operation="write"} 1)"));
  CHECK(has(lines, R"(firstwork_useful_work_queries_total{result="ok"} 1)"));
  CHECK(has(lines, R"(firstwork_metrics_renderings_total{freshness="stale"} 0)"));
  CHECK(has(lines, R"(firstwork_metrics_renderings_total{freshness="current"} 2)"));
  CHECK(has(lines, R"(firstwork_engine_steps_total{trigger="tick"} 0)"));
  CHECK(has(lines, R"(firstwork_engine_steps_total{trigger="scrape"} 1)"));
  CHECK(has(lines, R"(firstwork_engine_steps_total{trigger="events"} 2)"));
}

TEST_CASE("observation lag uses the given buckets and clamps negative lags", "[metrics][self]") {
  prometheus::Registry registry;
  SelfMetrics m(registry, {1, 10}, "v", "r");
  m.observationLag("w1", "pods", 0.5);
  m.observationLag("w1", "pods", 5);
  m.observationLag("w1", "pods", -3);  // API server ahead of us: counted as 0
  m.observationLag("w1", "pods", 20);
  auto lines = samples(registry);
  // le=1: 0.5 and 0 (clamped) → 2; le=10: + 5 → 3; +Inf: + 20 → 4; sum 0.5 + 5 + 0 + 20 = 25.5
  CHECK(has(lines, R"(firstwork_observation_lag_seconds_bucket{cluster="w1",resource="pods",le="1"} 2)"));
  CHECK(has(lines, R"(firstwork_observation_lag_seconds_bucket{cluster="w1",resource="pods",le="10"} 3)"));
  CHECK(has(lines, R"(firstwork_observation_lag_seconds_bucket{cluster="w1",resource="pods",le="+Inf"} 4)"));
  CHECK(has(lines, R"(firstwork_observation_lag_seconds_count{cluster="w1",resource="pods"} 4)"));
  CHECK(has(lines, R"(firstwork_observation_lag_seconds_sum{cluster="w1",resource="pods"} 25.5)"));
}

TEST_CASE("engine step durations: series from the start, 1 ms to 10 s buckets, by trigger",
          "[metrics][self]") {
  prometheus::Registry registry;
  SelfMetrics m(registry, {1}, "v", "r");
  m.engineStep("stop", 0);  // the histogram's series exists before the first stop
  m.engineStep("tick");
  m.engineStepSeconds("tick", 0.0004);
  m.engineStepSeconds("tick", 0.03);
  m.engineStepSeconds("tick", 12);
  m.engineStepSeconds("scrape", -1);  // a clock that stepped back: counted as 0
  auto lines = samples(registry);
  CHECK(has(lines, R"(firstwork_engine_step_seconds_count{trigger="stop"} 0)"));
  // le=0.001: 0.0004 → 1; le=0.05: + 0.03 → 2; le=10: 2; +Inf: + 12 → 3; sum 12.0304
  CHECK(has(lines, R"(firstwork_engine_step_seconds_bucket{trigger="tick",le="0.001"} 1)"));
  CHECK(has(lines, R"(firstwork_engine_step_seconds_bucket{trigger="tick",le="0.025"} 1)"));
  CHECK(has(lines, R"(firstwork_engine_step_seconds_bucket{trigger="tick",le="0.05"} 2)"));
  CHECK(has(lines, R"(firstwork_engine_step_seconds_bucket{trigger="tick",le="10"} 2)"));
  CHECK(has(lines, R"(firstwork_engine_step_seconds_bucket{trigger="tick",le="+Inf"} 3)"));
  CHECK(has(lines, R"(firstwork_engine_step_seconds_count{trigger="tick"} 3)"));
  CHECK(has(lines, R"(firstwork_engine_step_seconds_sum{trigger="tick"} 12.0304)"));
  CHECK(has(lines, R"(firstwork_engine_step_seconds_bucket{trigger="scrape",le="0.001"} 1)"));
  CHECK(SelfMetrics::stepBuckets().size() == 13);
}

TEST_CASE(
    "the engine's skipped inputs follow its running totals, pods without a Workload by cluster",
    "[metrics][self]") {
  prometheus::Registry registry;
  SelfMetrics m(registry, {1}, "v", "r");
  m.engineInputsSkipped("rejected", 0);  // the series from the start
  m.engineInputsSkipped("invalid_signal", 2);
  m.engineInputsSkipped("invalid_signal", 5);  // a total: 5, not 7
  m.engineInputsSkipped("invalid_signal", 4);  // never down (a counter)
  m.podsWithoutWorkload("w1", 12);
  m.podsWithoutWorkload("w1", 7);  // a gauge: the last count
  auto lines = samples(registry);
  CHECK(has(lines, R"(firstwork_engine_inputs_skipped_total{reason="rejected"} 0)"));
  CHECK(has(lines, R"(firstwork_engine_inputs_skipped_total{reason="invalid_signal"} 5)"));
  CHECK(has(lines, R"(firstwork_pods_without_workload{cluster="w1"} 7)"));
}

TEST_CASE("removing a cluster removes exactly its series", "[metrics][self]") {
  prometheus::Registry registry;
  SelfMetrics m(registry, SelfMetrics::defaultLagBuckets(), "v", "r");
  for (const char* c : {"w1", "w2"}) {
    m.watchUp(c, "pods", true);
    m.watchEvent(c, "pods", "MODIFIED");
    m.watchRestart(c, "pods", "network");
    m.decodeError(c, "pods");
    m.trackedObjects(c, "pods", 1);
    m.clockSkew(c, 0);
    m.observationLag(c, "pods", 1);
    m.insecureTls(c, false);
    m.podsWithoutWorkload(c, 3);
  }
  m.storeError("open");
  m.removeCluster("w1");
  auto lines = samples(registry);
  for (const auto& line : lines) {
    INFO(line);
    CHECK(line.find("cluster=\"w1\"") == std::string::npos);
  }
  CHECK(has(lines, R"(firstwork_watch_up{cluster="w2",resource="pods"} 1)"));
  CHECK(has(lines, R"(firstwork_cluster_insecure_tls{cluster="w2"} 0)"));
  CHECK(has(lines, R"(firstwork_pods_without_workload{cluster="w2"} 3)"));
  CHECK(has(lines, R"(firstwork_store_errors_total{operation="open"} 1)"));
  // A removed cluster that comes back starts from zero.
  m.watchEvent("w1", "pods", "MODIFIED");
  CHECK(has(samples(registry),
            R"(firstwork_watch_events_total{cluster="w1",resource="pods",type="MODIFIED"} 1)"));
}

TEST_CASE("series whose label values share a beginning are kept apart and found again",
          "[metrics][self]") {
  // Series are looked up by views of the values: one value a prefix of another, and a value
  // that runs into the next one's place when joined, are different series.
  prometheus::Registry registry;
  SelfMetrics m(registry, {1}, "v", "r");
  m.watchEvent("w1", "pods", "ADDED");
  m.watchEvent("w1", "podsx", "ADDED", 2);
  m.watchEvent("w1p", "ods", "ADDED", 4);
  m.watchEvent("w1", "pods", "ADDED", 8);
  m.watchEvent("w1", "pod", "sADDED", 16);
  m.watchEvent("w1", "pods", "ADDE", 32);
  m.watchEvent("w1p", "ods", "ADDED");
  auto lines = samples(registry);
  // Each by hand: pods/ADDED 1 + 8, podsx 2, w1p/ods 4 + 1, pod/sADDED 16, pods/ADDE 32.
  CHECK(has(lines, R"(firstwork_watch_events_total{cluster="w1",resource="pods",type="ADDED"} 9)"));
  CHECK(
      has(lines, R"(firstwork_watch_events_total{cluster="w1",resource="podsx",type="ADDED"} 2)"));
  CHECK(has(lines, R"(firstwork_watch_events_total{cluster="w1p",resource="ods",type="ADDED"} 5)"));
  CHECK(
      has(lines, R"(firstwork_watch_events_total{cluster="w1",resource="pod",type="sADDED"} 16)"));
  CHECK(has(lines, R"(firstwork_watch_events_total{cluster="w1",resource="pods",type="ADDE"} 32)"));
  CHECK(std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
          return l.rfind("firstwork_watch_events_total", 0) == 0;
        }) == 5);
}

TEST_CASE("default lag buckets are strictly increasing", "[metrics][self]") {
  auto b = SelfMetrics::defaultLagBuckets();
  REQUIRE(b.size() == 12);
  CHECK(std::is_sorted(b.begin(), b.end()));
  CHECK(std::adjacent_find(b.begin(), b.end()) == b.end());
}
