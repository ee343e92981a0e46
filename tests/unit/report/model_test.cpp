#include <catch2/catch.hpp>

#include <map>

#include "firstwork/core/rfc3339.hpp"
#include "report_fixtures.hpp"

using namespace firstwork;
using namespace firstwork::testing;
using report::percentile;
using std::chrono::seconds;

namespace {

const std::string kIncident = "incident/w1/multikueue/" + std::to_string(unixMs(at(seconds(0))));

SystemTime t(const char* s) { return parseRfc3339(s).value(); }

}  // namespace

TEST_CASE("Percentiles are nearest-rank and stated only from 20 observations", "[report][model]") {
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i);
  // Rank ceil(p/100 × 20): p50 → 10th, p90 → 18th, p99 → ceil(19.8) = 20th.
  CHECK(percentile(twenty, 50) == 10);
  CHECK(percentile(twenty, 90) == 18);
  CHECK(percentile(twenty, 99) == 20);
  CHECK(percentile({480, 720}, 50) == 480);  // rank ceil(1) = 1: the typical of drill 1
  CHECK_FALSE(percentile({}, 50));
  report::LatencySummary s;
  s.seconds = twenty;
  CHECK(s.hasPercentiles());
  s.seconds.pop_back();
  CHECK_FALSE(s.hasPercentiles());
  CHECK(s.max() == 19);
  s.cluster = "w1";
  s.stage = "running_to_first_work";
  CHECK(s.labelText() == "cluster=w1, stage=running_to_first_work");
}

TEST_CASE("An incident from the store: milestones, stranded figure, first work and recovery curve",
          "[report][model]") {
  auto rep = report::buildPeriodReport(drillData(kBaselineDrill), {});
  REQUIRE(rep.incidents.size() == 1);
  CHECK(rep.telemetryGaps.empty());
  const auto& v = rep.incidents[0];
  CHECK(v.record.id == kIncident);
  CHECK(v.record.outcome == engine::IncidentOutcome::Recovered);
  // 32 × 8 min + 16 × 4 min = 320 GPU-minutes = 19 200 GPU-seconds.
  CHECK(v.record.strandedGpuSeconds == Approx(19200));
  CHECK(rep.strandedGpuSeconds() == Approx(19200));
  CHECK(rep.recovered() == 1);
  CHECK(rep.failed() == 0);
  // Reconnection R = +600 s; dispatch R+60 s; first work of job A at R+480 s, of B at R+720 s.
  CHECK(*v.record.firstDispatchedAt == at(seconds(660)));
  CHECK(*v.record.firstWorkAt == at(seconds(1080)));
  CHECK(v.reconnectToFirstWork == std::vector<double>{480, 720});
  CHECK(v.typicalFirstWork() == 480);
  CHECK(v.slowestFirstWork() == 720);
  // Each job is 2 pods × 8 GPUs: 16 GPUs productive from R+480 s, 32 from R+720 s (the close).
  REQUIRE(v.curve);
  CHECK(v.curve->endSeconds == Approx(720));
  REQUIRE(v.curve->points.size() == 3);
  CHECK(v.curve->points[0].seconds == 0);
  CHECK(v.curve->points[0].gpus == 0);
  CHECK(v.curve->points[1].seconds == Approx(480));
  CHECK(v.curve->points[1].gpus == 16);
  CHECK(v.curve->points[2].seconds == Approx(720));
  CHECK(v.curve->points[2].gpus == 32);
  CHECK(v.curve->workloadsWithoutGpus == 0);
  // Latency summaries per histogram and label set (2 observations: no percentiles).
  const report::LatencySummary* rtfw = nullptr;
  for (const auto& g : rep.latencies)
    if (g.metric == "reconnect_to_first_work_seconds") rtfw = &g;
  REQUIRE(rtfw);
  CHECK(rtfw->cluster == "w1");
  CHECK(rtfw->seconds == std::vector<double>{480, 720});
  CHECK_FALSE(rtfw->hasPercentiles());
  CHECK(rep.latencies.front().metric == "reconnect_to_first_work_seconds");  // recovery first
  CHECK(rep.unreadableRecords == 0);
}

TEST_CASE("A failed recovery is kept and listed with its stranded figure", "[report][model]") {
  auto rep = report::buildPeriodReport(drillData(kFailedDrill), {});
  REQUIRE(rep.incidents.size() == 1);
  const auto& v = rep.incidents[0];
  CHECK(v.record.outcome == engine::IncidentOutcome::Failed);
  CHECK(v.record.failureReason == "budget");
  CHECK(rep.failed() == 1);
  // 32 GPUs stranded for the whole 30-minute budget: 32 × 1 800 = 57 600 GPU-seconds.
  CHECK(v.record.strandedGpuSeconds == Approx(57600));
  REQUIRE(v.curve);
  CHECK(v.curve->endSeconds == Approx(1800));
  CHECK(v.curve->points.size() == 1);  // nobody productive before the failure
}

TEST_CASE("Before/after: drill 1 against drill 2 is 320 → 128 GPU-minutes, 60 % less",
          "[report][model][compare]") {
  report::Options o;
  o.ratePerGpuHour = 4;
  auto base = drillData(kBaselineDrill);
  auto cur = drillData(kImprovedDrill);
  auto r = report::buildReport(cur, &base, o);
  REQUIRE(r.comparison);
  const auto& c = *r.comparison;
  REQUIRE(c.incidents.size() == 1);
  const auto& i = c.incidents[0];
  CHECK(i.cluster == "w1");
  CHECK(i.ordinal == 1);
  // Drill 2: 32 × 3 min + 16 × 2 min = 128 GPU-minutes = 7 680 GPU-s.
  CHECK(i.current->record.strandedGpuSeconds == Approx(7680));
  // 19 200 − 7 680 = 11 520 GPU-s = 192 GPU-minutes = 3.2 GPU-h; 192 / 320 = 60 %;
  // 3.2 GPU-h × US$4 = US$12.80.
  CHECK(*i.reduction == Approx(11520));
  CHECK(*i.reductionPercent == Approx(60));
  CHECK(*i.value == Approx(12.80));
  CHECK(i.current->typicalFirstWork() == 180);
  CHECK(i.current->slowestFirstWork() == 300);
  CHECK(i.callouts.empty());
  CHECK(c.callouts.empty());
  CHECK(c.strandedBefore == Approx(19200));
  CHECK(c.strandedAfter == Approx(7680));
  CHECK(*c.strandedValue == Approx(12.80));
}

TEST_CASE("A slower tail is called out even when the typical first work improved",
          "[report][model][compare]") {
  // Job A at R+3 min (typical 8 → 3 min), job B at R+15 min (slowest 12 → 15 min).
  // Stranded: 32 × 3 min + 16 × 12 min = 96 + 192 = 288 GPU-minutes = 17 280 GPU-s; a reduction
  // of 1 920 GPU-s (10 %), worth 1 920 / 3 600 × US$4 = US$2.13.
  report::Options o;
  o.ratePerGpuHour = 4;
  auto base = drillData(kBaselineDrill);
  auto cur = drillData({seconds(120), seconds(180), seconds(150), seconds(900)});
  auto r = report::buildReport(cur, &base, o);
  const auto& i = r.comparison->incidents.at(0);
  CHECK(i.current->record.strandedGpuSeconds == Approx(17280));
  CHECK(*i.reduction == Approx(1920));
  CHECK(*i.reductionPercent == Approx(10));
  CHECK(*i.value == Approx(2.1333).epsilon(1e-3));
  REQUIRE(i.callouts.size() == 1);
  CHECK(i.callouts[0] ==
        "w1 incident 1: SLOWER TAIL — slowest reconnection to first work 12m 00s → 15m 00s "
        "(typical 8m 00s → 3m 00s)");
  CHECK(r.comparison->callouts == i.callouts);
}

TEST_CASE("A new failure is called out, with more stranded GPUs", "[report][model][compare]") {
  auto base = drillData(kBaselineDrill);
  auto cur = drillData(kFailedDrill);
  auto r = report::buildReport(cur, &base, {});
  const auto& i = r.comparison->incidents.at(0);
  // 19 200 − 57 600 = −38 400 GPU-s: 200 % more.
  CHECK(*i.reduction == Approx(-38400));
  CHECK(*i.reductionPercent == Approx(-200));
  CHECK_FALSE(i.value);  // no rate given
  // The jobs did reach useful work, at R+4 000 s = 1h 06m 40s, after the failure: a slower tail.
  REQUIRE(i.callouts.size() == 3);
  CHECK(i.callouts[0] == "w1 incident 1: NEW FAILURE — the recovery failed (budget), the "
                         "baseline's recovered");
  CHECK(i.callouts[1] == "w1 incident 1: SLOWER TAIL — slowest reconnection to first work "
                         "12m 00s → 1h 06m 40s (typical 8m 00s → 1h 06m 40s)");
  CHECK(i.callouts[2] == "w1 incident 1: MORE STRANDED — 320.0 → 960.0 GPU-minutes");

  // An incident without a counterpart is listed on its own; failing, it is a new failure.
  report::PeriodReport empty;
  auto alone = report::compare(empty, r.current, {});
  REQUIRE(alone.incidents.size() == 1);
  CHECK_FALSE(alone.incidents[0].baseline);
  CHECK_FALSE(alone.incidents[0].reduction);
  CHECK(alone.callouts ==
        std::vector<std::string>{"w1 incident 1: no baseline counterpart — NEW FAILURE: the "
                                 "recovery failed"});
}

TEST_CASE("Reclaims pair per queue and reason: earlier access, slower tail, new failure",
          "[report][model][compare]") {
  // compare() is pure arithmetic over reclaim records; these are written as the engine writes
  // them for four one-GPU reclaims of team-a-cq (the drill figures come from the daemon in the
  // integration test).
  auto reclaim = [](int k, double ttfw, engine::ReclaimOutcome outcome, double lost) {
    report::ReclaimView v;
    v.record.id = "reclaim/mgr/uid-" + std::to_string(k) + "/1";
    v.record.cluster = "w1";
    v.record.preemptor = {"mgr", "team-a", "job-a-new-" + std::to_string(k), "uid", "team-a-cq", "lq"};
    v.record.reason = "InCohortReclamation";
    v.record.outcome = outcome;
    v.record.queuedAt = t("2026-05-01T10:05:00Z");
    v.record.startedAt = t("2026-05-01T10:05:01Z");
    if (outcome == engine::ReclaimOutcome::Completed) v.record.reclaimToFirstWorkSeconds = ttfw;
    v.record.interruptedGpuSeconds = lost;
    v.preemptorGpus = 1;
    return v;
  };
  using engine::ReclaimOutcome;
  report::PeriodReport before, after;
  const double lost[] = {60, 120, 300, 600};  // victims' work since their checkpoints
  for (int k = 0; k < 4; ++k) before.reclaims.push_back(reclaim(k, 720, ReclaimOutcome::Completed, lost[k]));
  for (int k = 0; k < 3; ++k) after.reclaims.push_back(reclaim(k, 180, ReclaimOutcome::Completed, lost[k]));
  after.reclaims.push_back(reclaim(3, 900, ReclaimOutcome::Completed, 600));
  after.reclaims.push_back(reclaim(4, 0, ReclaimOutcome::Failed, 0));
  report::Options o;
  o.ratePerGpuHour = 3;
  auto c = report::compare(before, after, o);
  REQUIRE(c.reclaimGroups.size() == 1);
  const auto& g = c.reclaimGroups[0];
  CHECK(g.baselineCount == 4);
  CHECK(g.currentCount == 5);
  CHECK(g.typicalBefore == 720);
  CHECK(g.typicalAfter == 180);  // [180, 180, 180, 900]: rank ceil(2) = 2
  CHECK(g.slowestAfter == 900);
  CHECK(g.failedAfter == 1);
  CHECK(g.interruptedBefore == Approx(1080));
  CHECK(g.interruptedAfter == Approx(1080));
  // (720 − 180) × 1 GPU × 3 + (720 − 900) × 1 GPU = 1 620 − 180 = 1 440 GPU-s; the fifth has no
  // counterpart. 1 440 GPU-s = 0.4 GPU-h × US$3 = US$1.20.
  CHECK(g.earlierAccessGpuSeconds == Approx(1440));
  CHECK(*g.value == Approx(1.20));
  REQUIRE(c.reclaims.size() == 5);
  CHECK(*c.reclaims[0].earlierAccessGpuSeconds == Approx(540));
  CHECK(*c.reclaims[3].earlierAccessGpuSeconds == Approx(-180));
  CHECK_FALSE(c.reclaims[4].baseline);
  CHECK(c.callouts == std::vector<std::string>{
                          "reclaims of team-a-cq (InCohortReclamation): NEW FAILURE — 1 failed, 0 "
                          "in the baseline",
                          "reclaims of team-a-cq (InCohortReclamation): SLOWER TAIL — slowest "
                          "submission to first work 12m 00s → 15m 00s (typical 12m 00s → 3m 00s)",
                          "reclaims of team-a-cq (InCohortReclamation): 4 in the baseline, 5 now; "
                          "the extra ones have no counterpart"});
}

TEST_CASE("GPU-hours count each recorded period by its share inside the period and allocate cost",
          "[report][model][gpu]") {
  // GPU-second periods as GpuSecondsRecorder writes them (pure arithmetic under test).
  report::PeriodData d;
  d.period = {t("2026-05-01T10:00:00Z"), t("2026-05-01T11:00:00Z")};
  auto item = [](const char* queue, const char* state, double secs) {
    return records::GpuSecondsItem{"w1", queue, "nvidia.com/gpu", "gpu", state, secs};
  };
  d.gpuSeconds.push_back({t("2026-05-01T10:00:00Z"), t("2026-05-01T10:01:00Z"),
                          {item("cq-a", "reserved", 120), item("cq-a", "allocated", 90),
                           item("cq-a", "productive", 60), item("", "published", 1920),
                           item("", "usable", 1800)}});
  // Half of this one lies inside the period: productive 120 → 60, published 1 920 → 960.
  d.gpuSeconds.push_back({t("2026-05-01T10:59:30Z"), t("2026-05-01T11:00:30Z"),
                          {item("cq-a", "productive", 120), item("", "published", 1920),
                           item("cq-a", "future_state", 5)}});
  report::Options o;
  o.ownershipCostPerGpuHour = 2;
  o.ratePerGpuHour = 3;
  auto r = report::buildPeriodReport(d, o);
  REQUIRE(r.gpuUse.size() == 1);
  CHECK(r.gpuUse[0].reserved == Approx(120));
  CHECK(r.gpuUse[0].allocated == Approx(90));
  CHECK(r.gpuUse[0].productive == Approx(120));
  REQUIRE(r.capacity.size() == 1);
  CHECK(r.capacity[0].published == Approx(2880));
  CHECK(r.capacity[0].usable == Approx(1800));
  CHECK(r.totals.productive == Approx(120));
  // Owned 2 880 GPU-s = 0.8 GPU-h × US$2 = US$1.60; over 120 GPU-s = 1/30 productive GPU-h:
  // US$48 per productive GPU-hour. Allocated 90 GPU-s = 0.025 GPU-h × US$3 = US$0.075.
  CHECK(*r.costs.ownershipCost == Approx(1.60));
  CHECK(*r.costs.costPerProductiveGpuHour == Approx(48));
  CHECK(*r.costs.allocatedValue == Approx(0.075));

  report::PeriodData none;
  none.period = d.period;
  auto z = report::buildPeriodReport(none, o);
  CHECK_FALSE(z.costs.ownershipCost);  // nothing owned recorded: no figure, not a zero
  CHECK_FALSE(z.costs.costPerProductiveGpuHour);
  CHECK(*z.costs.allocatedValue == 0);
}

TEST_CASE("GPU-hours keep device classes and units apart, totals and costs count whole GPUs only",
          "[report][model][gpu][sharing]") {
  report::PeriodData d;
  d.period = {t("2026-05-01T10:00:00Z"), t("2026-05-01T11:00:00Z")};
  // One minute of a worker with 4 exclusive GPUs, a T4 node time-sliced ×4 (8 shares of 2 GPUs)
  // and 7 MIG instances, as GpuSecondsRecorder writes it (units as in firstwork_gpus).
  auto item = [](const char* cls, const char* unit, const char* state, double secs) {
    return records::GpuSecondsItem{"w1", "", cls, unit, state, secs};
  };
  d.gpuSeconds.push_back({t("2026-05-01T10:00:00Z"), t("2026-05-01T10:01:00Z"),
                          {item("nvidia.com/gpu", "gpu", "published", 240),
                           item("nvidia.com/gpu.shared", "share", "published", 480),
                           item("nvidia.com/gpu.shared", "gpu", "published", 120),
                           item("nvidia.com/mig-1g.10gb", "mig", "published", 420)}});
  report::Options o;
  o.ownershipCostPerGpuHour = 3;
  auto r = report::buildPeriodReport(d, o);
  std::map<std::string, double> rows;
  for (const auto& c : r.capacity) rows[c.deviceClass] = c.published;
  CHECK(rows == std::map<std::string, double>{{"nvidia.com/gpu", 240},
                                              {"nvidia.com/gpu.shared (share)", 480},
                                              {"nvidia.com/gpu.shared (gpu)", 120},
                                              {"nvidia.com/mig-1g.10gb (mig)", 420}});
  // Owned whole GPUs: 240 + 120 (behind the shares) = 360 GPU-s = 0.1 GPU-h × US$3 = US$0.30;
  // never 240 + 480 + 120 + 420.
  CHECK(r.totals.published == Approx(360));
  CHECK(*r.costs.ownershipCost == Approx(0.30));
}

TEST_CASE("loadPeriod: bounds, the store's own span, unreadable records", "[report][load]") {
  auto s = storeFromDrill(kBaselineDrill);
  // A record the report cannot read is skipped and counted.
  REQUIRE(s->commit({store::Record{records::kIncidentKind, "incident/broken", "w1", "",
                                   at(seconds(30)), "{not json", store::WriteMode::Upsert}})
              .ok());
  auto all = report::loadPeriod(*s, std::nullopt, std::nullopt);
  REQUIRE(all.ok());
  // Without bounds: from the earliest record (the outage at t0) to just after the latest.
  CHECK(all->period.from == at(seconds(0)));
  CHECK(all->period.to > at(seconds(600 + 720)));
  CHECK(all->incidents.size() == 1);
  CHECK(all->unreadableRecords == 1);
  // A period that holds only the outage still reads the incident's milestones after its end.
  auto early = report::loadPeriod(*s, at(seconds(-10)), at(seconds(10)));
  REQUIRE(early.ok());
  REQUIRE(early->incidents.size() == 1);
  auto rep = report::buildPeriodReport(*early, {});
  CHECK(rep.incidents[0].reconnectToFirstWork == std::vector<double>{480, 720});
  CHECK(rep.latencies.empty());  // the samples themselves lie after the period
  // Nothing there.
  auto later = report::loadPeriod(*s, at(seconds(90000)), at(seconds(90060)));
  REQUIRE(later.ok());
  CHECK(later->incidents.empty());
  auto empty = store::makeMemoryStore();
  auto none = report::loadPeriod(*empty, std::nullopt, std::nullopt);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error() == "the store holds no records: there is nothing to report");
}
