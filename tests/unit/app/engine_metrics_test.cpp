// The exporter's queue lifecycle, driven directly: snapshots name the ClusterQueues that exist,
// facts (histogram samples, closed reclaims) arrive one by one.
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "firstwork/app/engine_metrics.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/engine/outputs.hpp"
#include "firstwork/inventory/inventory.hpp"

using namespace firstwork;

namespace {

SystemTime at(int seconds) {
  return parseRfc3339("2026-08-20T10:00:00Z").value() + std::chrono::seconds(seconds);
}

struct Exporter {
  prometheus::Registry registry;
  app::EngineMetrics metrics{registry, {60, 600}};

  void snapshot(int seconds, std::vector<std::string> queues) {
    engine::Snapshot s;
    s.at = at(seconds);
    s.clusterQueues = std::move(queues);
    metrics.apply(s, inventory::InventorySnapshot{});
  }
  void sample(const std::string& queue, double secs) {
    engine::Observation o;
    o.histogram = engine::HistogramKind::ReservationToFirstWork;
    o.cluster = "c1";
    o.clusterQueue = queue;
    o.seconds = secs;
    metrics.observe(o);
  }
  std::string text() const {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, registry.Collect());
    return out.str();
  }
};

const char* const kCount =
    "firstwork_reservation_to_first_work_seconds_count{cluster=\"c1\",cluster_queue=\"cq-a\"} ";

}  // namespace

TEST_CASE("A re-created queue's first facts survive until its object is seen", "[app][exposition]") {
  Exporter e;
  e.snapshot(0, {"cq-a"});
  e.sample("cq-a", 30);
  CHECK(e.text().find(std::string(kCount) + "1\n") != std::string::npos);
  // Deleted at +60 s; gone after 10 minutes: its series go.
  e.snapshot(60, {});
  e.snapshot(60 + 600, {});
  CHECK(e.text().find(kCount) == std::string::npos);
  // Created again: its Workloads' samples arrive before the ClusterQueue object does. They start
  // a new series (1 sample, not 2), which the next snapshot — still without the queue — keeps.
  e.sample("cq-a", 45);
  e.snapshot(700, {});
  CHECK(e.text().find(std::string(kCount) + "1\n") != std::string::npos);
  e.metrics.reclaimClosed("cq-a", "InCohortReclamation", "completed");
  e.snapshot(701, {});
  CHECK(e.text().find("firstwork_reclaims_total{cluster_queue=\"cq-a\",outcome=\"completed\","
                      "reason=\"InCohortReclamation\"} 1\n") != std::string::npos);
  e.snapshot(702, {"cq-a"});
  CHECK(e.text().find(std::string(kCount) + "1\n") != std::string::npos);
}
