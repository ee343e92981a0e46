#include <catch2/catch.hpp>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/records/records.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using std::chrono::seconds;

namespace {

SystemTime t0() { return *parseRfc3339("2026-05-01T09:00:00Z"); }

Snapshot snapshot(double reserved, double productive, int64_t published, int64_t usable) {
  Snapshot s;
  s.gpuSeconds.push_back({"w1", "cq-a", "nvidia.com/gpu", "gpu", GpuState::Reserved, reserved});
  s.gpuSeconds.push_back({"w1", "cq-a", "nvidia.com/gpu", "gpu", GpuState::Productive, productive});
  s.gpus.push_back({"w1", "nvidia.com/gpu", "gpu", "published", published});
  s.gpus.push_back({"w1", "nvidia.com/gpu", "gpu", "usable", usable});
  s.gpus.push_back({"w1", "nvidia.com/gpu", "gpu", "allocated", 3});  // a gauge the recorder ignores
  return s;
}

double itemSeconds(const records::GpuSecondsPeriod& p, const std::string& state) {
  double sum = 0;
  for (const auto& i : p.items)
    if (i.state == state) sum += i.gpuSeconds;
  return sum;
}

}  // namespace

TEST_CASE("GPU-seconds become one durable record per period, as increments", "[records][gpu]") {
  records::GpuSecondsRecorder r(t0(), seconds(60));
  // Ticks every 20 s. Counters (cumulative) and gauges as the engine reports them.
  CHECK_FALSE(r.onSnapshot(snapshot(0, 0, 32, 30), t0() + seconds(20)));
  CHECK_FALSE(r.onSnapshot(snapshot(100, 0, 32, 30), t0() + seconds(40)));
  auto first = r.onSnapshot(snapshot(200, 50, 16, 16), t0() + seconds(60));
  REQUIRE(first);
  CHECK(first->kind == records::kGpuSecondsKind);
  CHECK(first->time == t0());
  CHECK(first->mode == store::WriteMode::InsertOnce);
  auto p = records::gpuSecondsFromJson(first->body);
  REQUIRE(p);
  CHECK(p->from == t0());
  CHECK(p->to == t0() + seconds(60));
  CHECK(itemSeconds(*p, "reserved") == Approx(200));
  CHECK(itemSeconds(*p, "productive") == Approx(50));
  // Gauges held from one call to the next: published 32 over [20 s, 60 s) = 1 280 GPU-s (the
  // interval before the first call is unknown), usable 30 × 40 s = 1 200.
  CHECK(itemSeconds(*p, "published") == Approx(1280));
  CHECK(itemSeconds(*p, "usable") == Approx(1200));
  CHECK(itemSeconds(*p, "allocated") == 0);
  for (const auto& i : p->items) {
    CHECK(i.cluster == "w1");
    CHECK(i.deviceClass == "nvidia.com/gpu");
    CHECK(i.unit == "gpu");
    CHECK(i.clusterQueue == (i.state == "published" || i.state == "usable" ? "" : "cq-a"));
  }

  // Next period: only the increase since the first record (reserved 260 − 200 = 60; productive
  // unchanged, so absent); published 16 × 30 s = 480 over [60 s, 90 s). A flush (shutdown)
  // writes the partial period.
  auto second = r.onSnapshot(snapshot(260, 50, 16, 16), t0() + seconds(90), true);
  REQUIRE(second);
  auto q = records::gpuSecondsFromJson(second->body);
  REQUIRE(q);
  CHECK(q->from == t0() + seconds(60));
  CHECK(q->to == t0() + seconds(90));
  CHECK(itemSeconds(*q, "reserved") == Approx(60));
  CHECK(itemSeconds(*q, "productive") == 0);
  CHECK(itemSeconds(*q, "published") == Approx(480));
  CHECK(second->key != first->key);

  // Nothing accrued: no record.
  auto idle = records::GpuSecondsRecorder(t0(), seconds(60));
  Snapshot empty;
  CHECK_FALSE(idle.onSnapshot(empty, t0() + seconds(30)));
  CHECK_FALSE(idle.onSnapshot(empty, t0() + seconds(90)));
}

TEST_CASE("a share class keeps its shares and the GPUs behind them apart", "[records][gpu][sharing]") {
  records::GpuSecondsRecorder r(t0(), seconds(60));
  // 8 shares of 2 GPUs usable (firstwork_gpus{device_class="nvidia.com/gpu.shared"} in units share
  // and gpu): over [0 s, 60 s) 8 × 60 = 480 share-seconds and 2 × 60 = 120 GPU-seconds, never 600.
  Snapshot s;
  s.gpus.push_back({"w1", "nvidia.com/gpu.shared", "share", "usable", 8});
  s.gpus.push_back({"w1", "nvidia.com/gpu.shared", "gpu", "usable", 2});
  CHECK_FALSE(r.onSnapshot(s, t0()));
  auto rec = r.onSnapshot(s, t0() + seconds(60));
  REQUIRE(rec);
  auto p = records::gpuSecondsFromJson(rec->body);
  REQUIRE(p);
  REQUIRE(p->items.size() == 2);
  for (const auto& i : p->items) {
    CHECK(i.deviceClass == "nvidia.com/gpu.shared");
    CHECK(i.gpuSeconds == Approx(i.unit == "share" ? 480 : 120));
  }
  CHECK(p->items[0].unit != p->items[1].unit);
}

TEST_CASE("gpuSecondsFromJson skips malformed items and rejects empty periods", "[records][gpu]") {
  CHECK_FALSE(records::gpuSecondsFromJson("[]"));
  CHECK_FALSE(records::gpuSecondsFromJson(
      R"({"from":"2026-05-01T09:01:00Z","to":"2026-05-01T09:01:00Z","items":[]})"));
  auto p = records::gpuSecondsFromJson(
      R"({"from":"2026-05-01T09:00:00Z","to":"2026-05-01T09:01:00Z","items":[
          {"cluster":"w1","state":"reserved","gpu_seconds":"x"},
          {"cluster":"w1","state":"reserved","device_class":"nvidia.com/gpu","gpu_seconds":60},
          {"state":"reserved","gpu_seconds":60}, 5]})");
  REQUIRE(p);
  REQUIRE(p->items.size() == 1);
  CHECK(p->items[0].gpuSeconds == Approx(60));
}
