// End to end with a real Prometheus (Debian's package) scraping firstworkd every second while the
// embedded simulated estate plays the reconnection and reclaim drills. The figures are the
// drills' hand-worked ones (design §5), read back through Prometheus' HTTP API.
#include <catch2/catch.hpp>

#include "prometheus_support.hpp"

using namespace std::chrono_literals;
using firstwork::testing::Estate;
using firstwork::testing::eventually;

TEST_CASE("Prometheus scraping firstworkd sees the reconnection drill's 320 stranded GPU-minutes",
          "[integration][prometheus]") {
  Estate e("reconnection-baseline");
  // After each completed drill: 16 GPUs × 8 min + 16 GPUs × 12 min = 320 GPU-min = 19,200 GPU-s
  // per incident, one recovered incident per play-through.
  std::optional<double> recovered, stranded;
  bool seen = eventually(
      [&] {
        recovered = e.query("sum(firstwork_recoveries_total{cluster=\"worker-1\",outcome=\"recovered\"})");
        stranded = e.query("sum(firstwork_recovery_stranded_gpu_seconds_total{cluster=\"worker-1\",device_class=\"nvidia.com/gpu\",unit=\"gpu\"})");
        return recovered && *recovered >= 1 && stranded && *stranded > 0;
      },
      120s);
  INFO(e.demo->output());
  REQUIRE(seen);
  // Both series come from the same scrape; a drill may close between the two queries, so read
  // them together once more from one evaluation.
  auto ratio = e.query(
      "sum(firstwork_recovery_stranded_gpu_seconds_total{cluster=\"worker-1\",device_class=\"nvidia.com/gpu\",unit=\"gpu\"}) / "
      "sum(firstwork_recoveries_total{cluster=\"worker-1\",outcome=\"recovered\"})");
  REQUIRE(ratio);
  CHECK(*ratio == Approx(19200.0));
  CHECK(e.query("sum(firstwork_recoveries_total{outcome=\"failed\"})").value_or(0) == 0);
  // reconnect → first work: 16 workloads at 8 min and 16 at 12 min per incident, so the mean
  // is 10 min = 600 s, and 16 of every 32 samples are ≤ 600 s (bucket le="600").
  auto mean = e.query(
      "sum(firstwork_reconnect_to_first_work_seconds_sum{cluster=\"worker-1\"}) / "
      "sum(firstwork_reconnect_to_first_work_seconds_count{cluster=\"worker-1\"})");
  REQUIRE(mean);
  CHECK(*mean == Approx(600.0));
  auto share = e.query(
      "sum(firstwork_reconnect_to_first_work_seconds_bucket{cluster=\"worker-1\",le=\"600\"}) / "
      "sum(firstwork_reconnect_to_first_work_seconds_count{cluster=\"worker-1\"})");
  REQUIRE(share);
  CHECK(*share == Approx(0.5));
  // The live integral runs too (stranded GPU-seconds by phase, all phases > 0 over a drill).
  CHECK(e.query("sum(firstwork_stranded_gpu_seconds_total{cluster=\"worker-1\"})").value_or(0) > 0);
}

TEST_CASE("Prometheus scraping firstworkd sees the reclaim drill's 12-minute reclaims",
          "[integration][prometheus]") {
  Estate e("reclaim");
  // Four one-GPU jobs of team A per play-through reach first work 12 min = 720 s after
  // submission: every sample lies in the (600, 900] bucket.
  std::optional<double> count;
  bool seen = eventually(
      [&] {
        count = e.query("sum(firstwork_reclaim_to_first_work_seconds_count{cluster_queue=\"team-a-cq\"})");
        return count && *count >= 4;
      },
      120s);
  INFO(e.demo->output());
  REQUIRE(seen);
  auto mean = e.query(
      "sum(firstwork_reclaim_to_first_work_seconds_sum{cluster_queue=\"team-a-cq\"}) / "
      "sum(firstwork_reclaim_to_first_work_seconds_count{cluster_queue=\"team-a-cq\"})");
  REQUIRE(mean);
  CHECK(*mean == Approx(720.0));
  CHECK(e.query("sum(firstwork_reclaim_to_first_work_seconds_bucket{cluster_queue=\"team-a-cq\","
                "le=\"600\"})")
            .value_or(-1) == 0);
  auto completed = e.query("sum(firstwork_reclaims_total{cluster_queue=\"team-a-cq\","
                           "reason=\"InCohortReclamation\",outcome=\"completed\"})");
  REQUIRE(completed);
  CHECK(*completed >= 4);
  // Reservation to first work of the same jobs is recorded per admission cycle.
  CHECK(e.query("sum(firstwork_reservation_to_first_work_seconds_count{cluster_queue=\"team-a-cq\"})")
            .value_or(0) >= 4);
}
