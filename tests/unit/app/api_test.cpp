#include <catch2/catch.hpp>

#include "firstwork/app/api.hpp"
#include "firstwork/app/records.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/log/redact.hpp"

using namespace firstwork;
using namespace firstwork::engine;

namespace {

SystemTime t(const char* s) { return *parseRfc3339(s); }

ReclaimRecord pendingReclaim() {
  ReclaimRecord r;
  r.id = "reclaim/c1/a-new-1/1777627200000";
  r.cycleId = "1777627200000";
  r.cluster = "c1";
  r.reason = "InCohortReclamation";
  r.outcome = ReclaimOutcome::Pending;
  r.preemptor = {"c1", "team-a", "job-new-1", "a-new-1", "cq-a", "lq-a"};
  r.queuedAt = t("2026-05-01T09:20:00Z");
  r.startedAt = t("2026-05-01T09:20:30Z");
  ReclaimVictim v;
  v.workload = {"c1", "team-b", "job-b9", "b-run-9", "cq-b", "lq-b"};
  v.cluster = "c1";
  v.reason = "InCohortReclamation";
  v.evictedAt = t("2026-05-01T09:20:30Z");
  v.gpus = 1;
  v.workSince = t("2026-05-01T09:10:00Z");
  v.interruptedGpuSeconds = 630;  // 1 GPU × (09:20:30 − 09:10:00) = 630 s
  r.victims.push_back(v);
  ReclaimVictim idle = v;  // evicted before it ever did useful work
  idle.workload = {"c1", "team-b", "job-b10", "b-run-10", "cq-b", "lq-b"};
  idle.gpus = 8;
  idle.workSince.reset();
  idle.interruptedGpuSeconds = 0;
  r.victims.push_back(idle);
  r.interruptedGpuSeconds = 630;
  r.observedAt = t("2026-05-01T09:20:31.250Z");
  return r;
}

}  // namespace

TEST_CASE("reclaimFromJson reads back what reclaimJson wrote", "[app][reclaim]") {
  const ReclaimRecord in = pendingReclaim();
  auto out = app::reclaimFromJson(app::reclaimJson(in, log::Redactor()));
  REQUIRE(out);
  CHECK(out->id == in.id);
  CHECK(out->cycleId == "1777627200000");  // not in the body: the id's last segment
  CHECK(out->cluster == "c1");
  CHECK(out->reason == "InCohortReclamation");
  CHECK(out->outcome == ReclaimOutcome::Pending);
  CHECK(out->preemptor.cluster == "c1");
  CHECK(out->preemptor.namespace_ == "team-a");
  CHECK(out->preemptor.name == "job-new-1");
  CHECK(out->preemptor.uid == "a-new-1");
  CHECK(out->preemptor.clusterQueue == "cq-a");
  CHECK(out->preemptor.localQueue == "lq-a");
  CHECK(out->queuedAt == in.queuedAt);
  CHECK(out->startedAt == in.startedAt);
  CHECK_FALSE(out->firstWorkAt);
  CHECK_FALSE(out->reclaimToFirstWorkSeconds);
  CHECK(out->interruptedGpuSeconds == Approx(630));
  CHECK(out->observedAt == in.observedAt);  // milliseconds kept
  REQUIRE(out->victims.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const auto& a = in.victims[i];
    const auto& b = out->victims[i];
    CHECK(b.workload.uid == a.workload.uid);
    CHECK(b.workload.name == a.workload.name);
    CHECK(b.workload.namespace_ == a.workload.namespace_);
    CHECK(b.workload.cluster == a.workload.cluster);
    CHECK(b.workload.clusterQueue == a.workload.clusterQueue);
    CHECK(b.cluster == a.cluster);
    CHECK(b.reason == a.reason);
    CHECK(b.evictedAt == a.evictedAt);
    CHECK(b.gpus == a.gpus);
    CHECK(b.workSince == a.workSince);
    CHECK(b.interruptedGpuSeconds == Approx(a.interruptedGpuSeconds));
    CHECK(b.cycleId.empty());  // not stored
  }
}

TEST_CASE("reclaimFromJson: completed records and redacted names come back as stored", "[app][reclaim]") {
  ReclaimRecord in = pendingReclaim();
  in.outcome = ReclaimOutcome::Completed;
  in.firstWorkAt = t("2026-05-01T09:32:00Z");
  in.reclaimToFirstWorkSeconds = 720;  // 09:32:00 − 09:20:00
  const log::Redactor redactor(true, "salt");
  auto out = app::reclaimFromJson(app::reclaimJson(in, redactor));
  REQUIRE(out);
  CHECK(out->outcome == ReclaimOutcome::Completed);
  CHECK(out->firstWorkAt == in.firstWorkAt);
  REQUIRE(out->reclaimToFirstWorkSeconds);
  CHECK(*out->reclaimToFirstWorkSeconds == Approx(720));
  CHECK(out->preemptor.name == redactor.apply("job-new-1"));
  CHECK(out->preemptor.name != "job-new-1");
  CHECK(out->victims[0].workload.namespace_ == redactor.apply("team-b"));
  CHECK(out->victims[0].workload.uid == "b-run-9");  // uids are not redacted
}

TEST_CASE("reclaimFromJson rejects bodies it cannot restore", "[app][reclaim]") {
  CHECK_FALSE(app::reclaimFromJson("not json"));
  CHECK_FALSE(app::reclaimFromJson("[]"));
  CHECK_FALSE(app::reclaimFromJson(R"({"cluster":"c1","started_at":"2026-05-01T09:20:30Z","outcome":"pending"})"));
  CHECK_FALSE(app::reclaimFromJson(R"({"id":"reclaim/c1/p/1","cluster":"c1","outcome":"pending"})"));
  CHECK_FALSE(app::reclaimFromJson(
      R"({"id":"reclaim/c1/p/1","cluster":"c1","started_at":"2026-05-01T09:20:30Z","outcome":"bogus"})"));
  // Wrong types read as absent instead of throwing; a victim without uid or eviction is skipped.
  auto r = app::reclaimFromJson(R"({"id":"reclaim/c1/p/1","cluster":"c1","started_at":"2026-05-01T09:20:30Z",
      "outcome":"pending","interrupted_gpu_seconds":"x","queued_at":5,
      "victims":[{"workload":{"uid":"v1"},"evicted_at":"2026-05-01T09:20:30Z","gpus":"8"},
                 {"workload":{"uid":""},"evicted_at":"2026-05-01T09:20:30Z"},
                 {"workload":{"uid":"v3"}}, 7]})");
  REQUIRE(r);
  CHECK(r->cycleId == "1");
  CHECK(r->interruptedGpuSeconds == 0);
  CHECK_FALSE(r->queuedAt);
  REQUIRE(r->victims.size() == 1);
  CHECK(r->victims[0].workload.uid == "v1");
  CHECK(r->victims[0].gpus == 0);
}
