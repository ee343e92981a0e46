#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "firstwork/records/records.hpp"
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

TEST_CASE("reclaimFromJson reads back what reclaimJson wrote", "[records][reclaim]") {
  const ReclaimRecord in = pendingReclaim();
  auto out = records::reclaimFromJson(records::reclaimJson(in, log::Redactor()));
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

TEST_CASE("reclaimFromJson: completed records and redacted names come back as stored", "[records][reclaim]") {
  ReclaimRecord in = pendingReclaim();
  in.outcome = ReclaimOutcome::Completed;
  in.firstWorkAt = t("2026-05-01T09:32:00Z");
  in.reclaimToFirstWorkSeconds = 720;  // 09:32:00 − 09:20:00
  const log::Redactor redactor(true, "salt");
  auto out = records::reclaimFromJson(records::reclaimJson(in, redactor));
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

TEST_CASE("reclaimFromJson rejects bodies it cannot restore", "[records][reclaim]") {
  CHECK_FALSE(records::reclaimFromJson("not json"));
  CHECK_FALSE(records::reclaimFromJson("[]"));
  CHECK_FALSE(records::reclaimFromJson(R"({"cluster":"c1","started_at":"2026-05-01T09:20:30Z","outcome":"pending"})"));
  CHECK_FALSE(records::reclaimFromJson(R"({"id":"reclaim/c1/p/1","cluster":"c1","outcome":"pending"})"));
  CHECK_FALSE(records::reclaimFromJson(
      R"({"id":"reclaim/c1/p/1","cluster":"c1","started_at":"2026-05-01T09:20:30Z","outcome":"bogus"})"));
  // Wrong types read as absent instead of throwing; a victim without uid or eviction is skipped.
  auto r = records::reclaimFromJson(R"({"id":"reclaim/c1/p/1","cluster":"c1","started_at":"2026-05-01T09:20:30Z",
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

TEST_CASE("incidentFromJson reads back every field incidentJson wrote", "[records][incident]") {
  IncidentRecord in;
  in.id = "incident/w1/multikueue/1777626060000";
  in.cluster = "w1";
  in.outcome = IncidentOutcome::Failed;
  in.disconnectedAt = t("2026-05-01T09:01:00Z");
  in.reconnectedAt = t("2026-05-01T09:06:00Z");
  in.disconnectReason = "ClientConnectionFailed";
  in.usableGpus = 32;
  in.demandGpus = 24;
  in.firstDispatchedAt = t("2026-05-01T09:06:30Z");
  in.firstRunningAt = t("2026-05-01T09:08:00Z");
  in.firstWorkAt = t("2026-05-01T09:14:00Z");
  in.lastProductiveAt = t("2026-05-01T09:18:00Z");
  in.closedAt = t("2026-05-01T09:36:00Z");
  in.strandedGpuSeconds = 19200.5;
  in.recoverySeconds = 1800;
  in.disconnectedSeconds = 300;
  in.excludedWorkloads = 2;
  in.failureReason = "budget";
  in.observedAt = t("2026-05-01T09:36:00.500Z");
  in.classes.push_back({"nvidia.com/gpu", "gpu", 4, 6, 960, "", 0, 0, 0});
  in.classes.push_back({"nvidia.com/gpu.shared", "share", 8, 6, 660, "gpu", 2, 540, 2340});
  auto out = records::incidentFromJson(records::incidentJson(in));
  REQUIRE(out);
  CHECK(out->id == in.id);
  CHECK(out->cluster == "w1");
  CHECK(out->source == IncidentSource::MultiKueue);
  CHECK(out->outcome == IncidentOutcome::Failed);
  CHECK(out->disconnectedAt == in.disconnectedAt);
  CHECK(out->reconnectedAt == in.reconnectedAt);
  CHECK(out->disconnectReason == "ClientConnectionFailed");
  CHECK(out->usableGpus == 32);
  CHECK(out->demandGpus == 24);
  CHECK(out->firstDispatchedAt == in.firstDispatchedAt);
  CHECK(out->firstRunningAt == in.firstRunningAt);
  CHECK(out->firstWorkAt == in.firstWorkAt);
  CHECK(out->lastProductiveAt == in.lastProductiveAt);
  CHECK_FALSE(out->recoveredAt);
  CHECK(out->closedAt == in.closedAt);
  CHECK(out->strandedGpuSeconds == Approx(19200.5));
  CHECK(out->recoverySeconds.value_or(-1) == Approx(1800));
  CHECK(out->disconnectedSeconds.value_or(-1) == Approx(300));
  CHECK(out->excludedWorkloads == 2);
  CHECK(out->failureReason == "budget");
  CHECK(out->observedAt == in.observedAt);
  CHECK(out->classes == in.classes);  // per device class and unit, shares with their GPUs

  CHECK_FALSE(records::incidentFromJson("{}"));
  CHECK_FALSE(records::incidentFromJson(R"({"id":"x"})"));
  // Wrong types read as absent, never throw.
  auto odd = records::incidentFromJson(
      R"({"id":"x","cluster":"w1","source":"probe","outcome":"recovered","usable_gpus":"32",
          "stranded_gpu_seconds":"many","reconnected_at":"yesterday"})");
  REQUIRE(odd);
  CHECK(odd->source == IncidentSource::Probe);
  CHECK(odd->usableGpus == 0);
  CHECK(odd->strandedGpuSeconds == 0);
  CHECK_FALSE(odd->reconnectedAt);
}

TEST_CASE("An incident's outage length reads back as written: unknown stays unknown and 0 stays 0",
          "[records][incident]") {
  IncidentRecord in;
  in.id = "incident/w1/multikueue/r1777626360000";
  in.cluster = "w1";
  in.reconnectedAt = t("2026-05-01T09:06:00Z");
  SECTION("an outage seen only by its end is null and reads back unknown") {
    auto body = nlohmann::json::parse(records::incidentJson(in));
    CHECK(body["disconnected_at"].is_null());
    REQUIRE(body.contains("disconnected_seconds"));
    CHECK(body["disconnected_seconds"].is_null());
    auto back = records::incidentFromJson(body.dump());
    REQUIRE(back);
    CHECK_FALSE(back->disconnectedSeconds);
  }
  SECTION("lost and regained within the same second is 0 and reads back 0") {
    in.disconnectedAt = in.reconnectedAt;
    in.disconnectedSeconds = 0.0;
    auto body = nlohmann::json::parse(records::incidentJson(in));
    REQUIRE(body["disconnected_seconds"].is_number());
    CHECK(body["disconnected_seconds"].get<double>() == 0.0);
    auto back = records::incidentFromJson(body.dump());
    REQUIRE(back);
    REQUIRE(back->disconnectedSeconds);
    CHECK(*back->disconnectedSeconds == 0.0);
  }
  SECTION("a body without the field or with a non-number reads back unknown") {
    auto absent = records::incidentFromJson(R"({"id":"x","cluster":"w1"})");
    REQUIRE(absent);
    CHECK_FALSE(absent->disconnectedSeconds);
    auto text =
        records::incidentFromJson(R"({"id":"x","cluster":"w1","disconnected_seconds":"300"})");
    REQUIRE(text);
    CHECK_FALSE(text->disconnectedSeconds);
  }
}

TEST_CASE("An open incident's recovery length is unknown: written null and read back unknown",
          "[records][incident]") {
  IncidentRecord in;
  in.id = "incident/w1/multikueue/1777626060000";
  in.cluster = "w1";
  in.outcome = IncidentOutcome::Recovering;
  in.disconnectedAt = t("2026-05-01T09:01:00Z");
  in.reconnectedAt = t("2026-05-01T09:06:00Z");
  auto body = nlohmann::json::parse(records::incidentJson(in));
  REQUIRE(body.contains("recovery_seconds"));
  CHECK(body["recovery_seconds"].is_null());  // was 0: a recovery of no time at all
  auto back = records::incidentFromJson(body.dump());
  REQUIRE(back);
  CHECK_FALSE(back->recoverySeconds);
  // Stores written before it was nullable hold 0 for an incident not closed yet.
  body["recovery_seconds"] = 0;
  auto old = records::incidentFromJson(body.dump());
  REQUIRE(old);
  CHECK_FALSE(old->recoverySeconds);
  // Closed within the second of its reconnection: a real 0 stays 0.
  body["closed_at"] = "2026-05-01T09:06:00Z";
  body["outcome"] = "recovered";
  auto closed = records::incidentFromJson(body.dump());
  REQUIRE(closed);
  REQUIRE(closed->recoverySeconds);
  CHECK(*closed->recoverySeconds == 0.0);
}

TEST_CASE("Milestones and observations written by toRecords read back", "[records]") {
  Outputs out;
  MilestoneRecord m;
  m.key = "ms/mgr/uid-1/1777626120000/first_work";
  m.workload = {"mgr", "research", "job-train-a-0-1a2b3", "uid-1", "train-cq", "research-lq"};
  m.cycleId = "1777626120000";
  m.milestone = Milestone::FirstWork;
  m.eventTime = t("2026-05-01T09:14:00Z");
  m.observedAt = t("2026-05-01T09:14:01Z");
  m.executionCluster = "worker-1";
  m.resource = "pods";
  m.signal = "annotation";
  m.gpus = 8;
  out.milestones.push_back(m);
  Observation o;
  o.key = "obs/reconnect_to_first_work/incident/worker-1/multikueue/1/uid-1";
  o.histogram = HistogramKind::ReconnectToFirstWork;
  o.cluster = "worker-1";
  o.seconds = 480;
  o.eventTime = t("2026-05-01T09:14:00Z");
  out.observations.push_back(o);
  auto recs = records::toRecords(out, log::Redactor());
  REQUIRE(recs.size() == 2);

  CHECK(recs[0].record.kind == records::kMilestoneKind);
  auto back = records::milestoneFromJson(recs[0].record.body);
  REQUIRE(back);
  CHECK(back->workload.uid == "uid-1");
  CHECK(back->workload.name == "job-train-a-0-1a2b3");
  CHECK(back->workload.clusterQueue == "train-cq");
  CHECK(back->cycleId == "1777626120000");
  CHECK(back->milestone == "first_work");
  CHECK(back->eventTime == m.eventTime);
  CHECK(back->executionCluster == "worker-1");
  CHECK(back->signal == "annotation");
  CHECK_FALSE(back->proxy);
  CHECK(back->gpus == 8);

  CHECK(recs[1].record.kind == records::kObservationKind);
  auto obs = records::observationFromJson(recs[1].record.key, recs[1].record.body);
  REQUIRE(obs);
  CHECK(obs->key == o.key);
  CHECK(obs->histogram == HistogramKind::ReconnectToFirstWork);
  CHECK(obs->cluster == "worker-1");
  CHECK(obs->seconds == Approx(480));
  CHECK(obs->eventTime == o.eventTime);

  CHECK_FALSE(records::milestoneFromJson(R"({"milestone":"queued","event_time":"2026-05-01T09:14:00Z"})"));
  CHECK_FALSE(records::milestoneFromJson(R"({"workload":{"uid":"u"},"milestone":"queued"})"));
  CHECK_FALSE(records::observationFromJson("k", R"({"histogram":"firstwork_nope","seconds":1,
      "event_time":"2026-05-01T09:14:00Z"})"));
  CHECK_FALSE(records::observationFromJson("k", R"({"histogram":"firstwork_recovery_seconds",
      "event_time":"2026-05-01T09:14:00Z"})"));
}

TEST_CASE("What the exporter needs of a record travels with it, only where there is an effect",
          "[records]") {
  Outputs out;
  MilestoneRecord m;
  m.key = "ms/mgr/uid-1/1777626120000/reserved";
  m.workload = {"mgr", "research", "job-a", "uid-1", "train-cq", "research-lq"};
  m.milestone = Milestone::Reserved;
  out.milestones.push_back(m);
  Observation o;
  o.key = "obs/stage/reserved_to_dispatched/mgr/uid-1/1777626120000";
  o.histogram = HistogramKind::Stage;
  o.cluster = "mgr";
  o.clusterQueue = "train-cq";
  o.stage = "reserved_to_dispatched";
  o.seconds = 42.5;
  out.observations.push_back(o);
  IncidentRecord in;
  in.id = "incident/w1/multikueue/1777626060000";
  in.cluster = "w1";
  in.source = IncidentSource::MultiKueue;
  in.outcome = IncidentOutcome::Recovered;
  in.reconnectedAt = t("2026-05-01T09:06:00Z");
  in.strandedGpuSeconds = 1920;
  in.classes.push_back({"nvidia.com/gpu", "gpu", 4, 6, 960, "", 0, 0, 0});
  out.incidents.push_back(in);
  ReclaimRecord rc = pendingReclaim();
  rc.outcome = ReclaimOutcome::Completed;
  out.reclaims.push_back(rc);
  DuplicateExecution d;
  d.key = "dup/mgr/uid-1/1777626120000/concurrent/w2";
  d.workload = m.workload;
  d.cycleId = "1777626120000";
  d.cluster = "w2";
  d.clusters = {"w1", "w2"};
  out.duplicates.push_back(d);

  using Effect = records::PendingRecord::Effect;
  auto recs = records::toRecords(std::move(out), log::Redactor());
  // milestone; observation; incident and its closing; reclaim and its closing; duplicate.
  REQUIRE(recs.size() == 7);
  CHECK(recs[0].record.kind == records::kMilestoneKind);
  CHECK(recs[0].effect == Effect::None);
  CHECK(recs[0].detail == nullptr);

  CHECK(recs[1].record.key == o.key);
  REQUIRE(recs[1].effect == Effect::Observe);
  REQUIRE(recs[1].detail != nullptr);
  CHECK(recs[1].detail->observation.key.empty());  // the record's key is it
  CHECK(recs[1].detail->observation.cluster == "mgr");
  CHECK(recs[1].detail->observation.clusterQueue == "train-cq");
  CHECK(recs[1].detail->observation.stage == "reserved_to_dispatched");
  CHECK(recs[1].detail->observation.seconds == Approx(42.5));

  CHECK(recs[2].record.kind == records::kIncidentKind);
  CHECK(recs[2].detail == nullptr);
  CHECK(recs[3].record.kind == records::kIncidentClosedKind);
  REQUIRE(recs[3].effect == Effect::RecoveryClosed);
  REQUIRE(recs[3].detail != nullptr);
  CHECK(recs[3].detail->cluster == "w1");
  CHECK(recs[3].detail->outcome == "recovered");
  CHECK(recs[3].detail->strandedGpuSeconds == Approx(1920));
  CHECK(recs[3].detail->classes == in.classes);

  CHECK(recs[4].record.kind == records::kReclaimKind);
  CHECK(recs[4].detail == nullptr);
  CHECK(recs[5].record.kind == records::kReclaimClosedKind);
  REQUIRE(recs[5].effect == Effect::ReclaimClosed);
  REQUIRE(recs[5].detail != nullptr);
  CHECK(recs[5].detail->clusterQueue == "cq-a");
  CHECK(recs[5].detail->reason == "InCohortReclamation");
  CHECK(recs[5].detail->outcome == "completed");

  CHECK(recs[6].record.kind == records::kDuplicateKind);
  REQUIRE(recs[6].effect == Effect::Duplicate);
  REQUIRE(recs[6].detail != nullptr);
  CHECK(recs[6].detail->cluster == "w2");
}

TEST_CASE("openCycleFromJson reads back the open cycles toRecords wrote, a closed one is a removal",
          "[records][open_cycle]") {
  Outputs out;
  OpenCycleRecord open;
  open.key = "oc/mgr/uid-7/1777626120000";
  open.workload = {"mgr", "research", "job-train-b-7", "uid-7", "train-cq", "research-lq"};
  open.cycleId = "1777626120000";
  open.workSince = t("2026-05-01T09:14:00Z");
  open.observedAt = t("2026-05-01T09:20:00.500Z");
  out.openCycles.push_back(open);
  OpenCycleRecord noWorkYet = open;  // reserved, pods not working yet
  noWorkYet.key = "oc/mgr/uid-8/1777626180000";
  noWorkYet.workload.uid = "uid-8";
  noWorkYet.cycleId = "1777626180000";
  noWorkYet.workSince.reset();
  out.openCycles.push_back(noWorkYet);
  OpenCycleRecord closed = open;
  closed.open = false;
  out.openCycles.push_back(closed);

  SECTION("as written") {
    auto recs = records::toRecords(out, log::Redactor());
    REQUIRE(recs.size() == 3);
    CHECK(recs[0].record.kind == records::kOpenCycleKind);
    CHECK(recs[0].record.mode == store::WriteMode::Upsert);
    auto back = records::openCycleFromJson(recs[0].record.body);
    REQUIRE(back);
    // The key is derived again from the body: the one the store holds the record under.
    CHECK(back->key == recs[0].record.key);
    CHECK(back->key == open.key);
    CHECK(back->workload.cluster == "mgr");
    CHECK(back->workload.namespace_ == "research");
    CHECK(back->workload.name == "job-train-b-7");
    CHECK(back->workload.uid == "uid-7");
    CHECK(back->workload.clusterQueue == "train-cq");
    CHECK(back->workload.localQueue == "research-lq");
    CHECK(back->cycleId == "1777626120000");
    REQUIRE(back->workSince);
    CHECK(*back->workSince == t("2026-05-01T09:14:00Z"));
    CHECK(back->observedAt == t("2026-05-01T09:20:00.500Z"));
    CHECK(back->open);

    auto idle = records::openCycleFromJson(recs[1].record.body);
    REQUIRE(idle);
    CHECK(idle->key == noWorkYet.key);
    CHECK_FALSE(idle->workSince);

    CHECK(recs[2].record.mode == store::WriteMode::Remove);
    CHECK(recs[2].record.key == open.key);
    CHECK(recs[2].record.body.empty());
  }
  SECTION("redacted: names hashed, the uid (the key) kept, so the cycle is still found") {
    log::Redactor r(true, "salt");
    auto recs = records::toRecords(out, r);
    auto back = records::openCycleFromJson(recs[0].record.body);
    REQUIRE(back);
    CHECK(back->key == open.key);
    CHECK(back->workload.name == r.apply("job-train-b-7"));
    CHECK(back->workload.name != "job-train-b-7");
    CHECK(back->workload.namespace_ == r.apply("research"));
  }
  SECTION("bodies it cannot restore are rejected") {
    CHECK_FALSE(records::openCycleFromJson("not json"));
    CHECK_FALSE(records::openCycleFromJson("[]"));
    CHECK_FALSE(records::openCycleFromJson(R"({"cycle_id":"1","workload":{"cluster":"mgr"}})"));
    CHECK_FALSE(records::openCycleFromJson(R"({"cycle_id":"1","workload":{"uid":"u"}})"));
    CHECK_FALSE(records::openCycleFromJson(R"({"workload":{"cluster":"mgr","uid":"u"}})"));
  }
}

TEST_CASE("workerConnectionFromJson reads back Kueue's view of a worker, a deleted one is a removal",
          "[records][worker_connection]") {
  Outputs out;
  WorkerConnectionRecord up;
  up.worker = "worker-1";
  up.managementCluster = "manager";
  up.active = true;
  up.since = t("2026-04-30T09:00:00Z");
  up.reason = "Active";
  up.observedAt = t("2026-05-01T09:00:00.250Z");
  out.workerConnections.push_back(up);
  WorkerConnectionRecord down = up;
  down.worker = "worker-2";
  down.active = false;
  down.since = t("2026-05-01T09:01:00Z");
  down.reason = "ClientConnectionFailed";
  out.workerConnections.push_back(down);
  WorkerConnectionRecord deleted;
  deleted.worker = "worker-1";
  deleted.known = false;
  deleted.observedAt = t("2026-05-01T09:30:00Z");
  out.workerConnections.push_back(deleted);

  auto recs = records::toRecords(out, log::Redactor());
  REQUIRE(recs.size() == 3);
  CHECK(recs[0].record.kind == records::kWorkerConnectionKind);
  CHECK(recs[0].record.key == "wc/worker-1");
  CHECK(recs[0].record.cluster == "worker-1");
  CHECK(recs[0].record.mode == store::WriteMode::Upsert);
  CHECK(recs[0].effect == records::PendingRecord::Effect::None);
  auto back = records::workerConnectionFromJson(recs[0].record.body);
  REQUIRE(back);
  CHECK(back->worker == "worker-1");
  CHECK(back->managementCluster == "manager");
  CHECK(back->known);
  CHECK(back->active);
  CHECK(back->since == t("2026-04-30T09:00:00Z"));
  CHECK(back->reason == "Active");
  CHECK(back->observedAt == t("2026-05-01T09:00:00.250Z"));

  auto lost = records::workerConnectionFromJson(recs[1].record.body);
  REQUIRE(lost);
  CHECK(recs[1].record.key == "wc/worker-2");
  CHECK_FALSE(lost->active);
  CHECK(lost->since == t("2026-05-01T09:01:00Z"));
  CHECK(lost->reason == "ClientConnectionFailed");

  CHECK(recs[2].record.kind == records::kWorkerConnectionKind);
  CHECK(recs[2].record.key == "wc/worker-1");
  CHECK(recs[2].record.mode == store::WriteMode::Remove);
  CHECK(recs[2].record.body.empty());

  // Bodies it cannot restore.
  CHECK_FALSE(records::workerConnectionFromJson("not json"));
  CHECK_FALSE(records::workerConnectionFromJson(R"({"status":"True","since":"2026-05-01T09:00:00Z"})"));
  CHECK_FALSE(records::workerConnectionFromJson(
      R"({"worker":"w","status":"Unknown","since":"2026-05-01T09:00:00Z"})"));
  CHECK_FALSE(records::workerConnectionFromJson(R"({"worker":"w","status":"True"})"));
  CHECK_FALSE(records::workerConnectionFromJson(R"({"worker":"w","status":"True","since":"yesterday"})"));
}
