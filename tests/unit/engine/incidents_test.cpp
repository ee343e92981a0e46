#include <catch2/catch.hpp>

#include "drills.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace firstwork::testing;
using std::chrono::seconds;

namespace {

const std::string kIncident = "incident/w1/multikueue/" + std::to_string(unixMs(at(seconds(0))));

// Drill 1 (design §5): 16 GPUs productive 8 min after reconnection, 16 after 12 min.
// Pods of A run at R+4 min, of B at R+5 min.
const ReconnectTimes kDrill1{seconds(240), seconds(480), seconds(300), seconds(720)};
// Drill 2: 3 and 5 min.
const ReconnectTimes kDrill2{seconds(120), seconds(180), seconds(150), seconds(300)};

Harness runDrill(ReconnectTimes d, std::optional<Gap> gap = std::nullopt) {
  Harness h(multiKueueConfigFor({"w1"}));
  std::vector<std::string> probes;
  if (gap) probes = {"manager", "w1"};
  play(h, reconnectDrill(d), {seconds(2400), seconds(2600)}, gap, probes);
  return h;
}

/// `events` as a process started at `t` sees them: every object as it was then, once (a relist),
/// then the events after `t`.
std::vector<ScriptEvent> relistedAt(const std::vector<ScriptEvent>& events, seconds t) {
  std::vector<ScriptEvent> before;
  std::vector<ScriptEvent> after;
  std::map<std::string, size_t> latest;
  for (ScriptEvent e : events) {
    if (e.t > t) {
      after.push_back(e);
      continue;
    }
    const auto& m = model::metaOf(e.obj);
    const std::string key = std::to_string(static_cast<int>(model::kindOf(e.obj))) + m.uid + m.name;
    auto it = latest.find(key);
    e.t = t;
    if (it == latest.end()) {
      latest[key] = before.size();
      before.push_back(e);
    } else {
      before[it->second] = e;
    }
  }
  before.insert(before.end(), after.begin(), after.end());
  return before;
}

}  // namespace

TEST_CASE("Design §5 drill: 32 idle GPUs at reconnection, 16 working after 8 min and 16 after 12 min = 320 GPU-minutes",
          "[engine][incident]") {
  Harness h = runDrill(kDrill1);
  auto in = h.incident(kIncident);
  REQUIRE(in);
  CHECK(in->outcome == IncidentOutcome::Recovered);
  CHECK(in->source == IncidentSource::MultiKueue);
  CHECK(in->disconnectReason == "ClientConnectionFailed");
  CHECK(*in->disconnectedAt == at(seconds(0)));
  CHECK(*in->reconnectedAt == at(seconds(600)));
  // stranded(t) = min(usable − productive, demand):
  //   [R, R+8 min)      min(32 − 0, 32)  = 32
  //   [R+8, R+12 min)   min(32 − 16, 16) = 16
  //   from R+12 min     min(32 − 32, 0)  = 0  → recovered
  // ∫ = 32 × 8 + 16 × 4 = 256 + 64 = 320 GPU-minutes = 19,200 GPU-seconds (5.33 GPU-h).
  CHECK(in->strandedGpuSeconds == Approx(19200));
  CHECK(in->strandedGpuSeconds / 60 == Approx(320));
  CHECK(*in->recoveredAt == at(seconds(600 + 720)));
  CHECK(in->recoverySeconds.value_or(-1) == Approx(720));
  CHECK(in->disconnectedSeconds.value_or(-1) == Approx(600));
  CHECK(in->usableGpus == 32);
  CHECK(in->demandGpus == 32);
  CHECK(*in->firstDispatchedAt == at(seconds(660)));
  CHECK(*in->firstRunningAt == at(seconds(840)));
  CHECK(*in->firstWorkAt == at(seconds(1080)));
  CHECK(*in->lastProductiveAt == at(seconds(1320)));
  CHECK(in->excludedWorkloads == 0);

  auto recovery = h.observation("obs/recovery/" + kIncident);
  REQUIRE(recovery);
  CHECK(recovery->seconds == Approx(720));
  CHECK(recovery->outcome == "recovered");
  CHECK(recovery->cluster == "w1");
  auto outage = h.observation("obs/worker_disconnected/" + kIncident);
  REQUIRE(outage);
  CHECK(outage->seconds == Approx(600));
  CHECK(outage->source == "multikueue");
  // Per workload kept waiting by the incident: R → its first_work (8 and 12 min) and R → dispatch.
  CHECK(h.observation("obs/reconnect_to_first_work/" + kIncident + "/mA")->seconds == Approx(480));
  CHECK(h.observation("obs/reconnect_to_first_work/" + kIncident + "/mB")->seconds == Approx(720));
  CHECK(h.observation("obs/stage/reconnect_to_dispatched/" + kIncident + "/mA")->seconds == Approx(60));
  // Manager-side stages of the MultiKueue path.
  const std::string cycleA = std::to_string(unixMs(at(seconds(60))));
  auto r2d = h.observation("obs/stage/reserved_to_dispatched/manager/mA/" + cycleA);
  REQUIRE(r2d);
  CHECK(r2d->seconds == Approx(600));  // reserved at +60 s, dispatched at R+60 s = +660 s
  CHECK(r2d->cluster == "w1");
  CHECK(h.observation("obs/stage/dispatched_to_scheduled/manager/mA/" + cycleA)->seconds == Approx(40));
  auto dispatched = h.milestone("mA", Milestone::Dispatched);
  REQUIRE(dispatched);
  CHECK(dispatched->executionCluster == "w1");
  CHECK_FALSE(dispatched->withoutCapacity);
  CHECK(h.milestone("mA", Milestone::Scheduled)->executionCluster == "w1");

  auto snap = h.e.snapshot();
  REQUIRE(snap.recoveries.size() == 1);
  CHECK(snap.recoveries[0].recovered == 1);
  CHECK(snap.recoveries[0].failed == 0);
  CHECK(snap.recoveries[0].strandedGpuSeconds == Approx(19200));
  // Live integrals by phase (the drill was observed on time, so they agree with the event-time
  // figure):
  //   disconnected [+60 s, R): 32 × 540 = 17,280 (the jobs were submitted at +60 s)
  //   idle         [R, R+1 min): 32 × 60 = 1,920
  //   pending      [R+1, R+4 min): 32 × 180 = 5,760; [R+4, R+5 min): B 16 × 60 = 960 → 6,720
  //   starting     [R+4, R+5 min): A 16 × 60 = 960; [R+5, R+8 min): 32 × 180 = 5,760;
  //                [R+8, R+12 min): B 16 × 240 = 3,840 → 10,560
  //   1,920 + 6,720 + 10,560 = 19,200 = the incident figure.
  CHECK(strandedSeconds(snap, "w1", StrandedPhase::Disconnected) == Approx(17280));
  CHECK(strandedSeconds(snap, "w1", StrandedPhase::Idle) == Approx(1920));
  CHECK(strandedSeconds(snap, "w1", StrandedPhase::PendingStart) == Approx(6720));
  CHECK(strandedSeconds(snap, "w1", StrandedPhase::Starting) == Approx(10560));
  CHECK(strandedNow(snap, "w1", "nvidia.com/gpu", StrandedPhase::Idle) == 0);
  CHECK(gpusNow(snap, "w1", "nvidia.com/gpu", "usable") == 32);
  CHECK(gpusNow(snap, "w1", "nvidia.com/gpu", "productive") == 32);
  // GPU-seconds by state, attributed to the worker and the manager's ClusterQueue:
  // productive up to the last advance (+2600 s): A 16 × (2600 − 1080) + B 16 × (2600 − 1320)
  //   = 24,320 + 20,480 = 44,800.
  double productive = 0;
  for (const auto& g : snap.gpuSeconds) {
    if (g.state == GpuState::Productive && g.cluster == "w1" && g.clusterQueue == "cq") productive += g.seconds;
  }
  CHECK(productive == Approx(44800));
}

TEST_CASE("Second drill: 3 and 5 min = 128 GPU-minutes, 60 % less", "[engine][incident]") {
  Harness h = runDrill(kDrill2);
  auto in = h.incident(kIncident);
  REQUIRE(in);
  CHECK(in->outcome == IncidentOutcome::Recovered);
  // 32 × 3 + 16 × 2 = 96 + 32 = 128 GPU-minutes = 7,680 GPU-seconds.
  CHECK(in->strandedGpuSeconds == Approx(7680));
  CHECK(in->recoverySeconds.value_or(-1) == Approx(300));
  // Reduction against drill 1: (19,200 − 7,680) / 19,200 = 11,520 / 19,200 = 0.60;
  // 192 GPU-minutes = 3.2 GPU-h, US$12.80 at US$4/GPU-h.
  Harness before = runDrill(kDrill1);
  const double saved = before.incident(kIncident)->strandedGpuSeconds - in->strandedGpuSeconds;
  CHECK(saved / 60 == Approx(192));
  CHECK(saved / before.incident(kIncident)->strandedGpuSeconds == Approx(0.60));
  CHECK(saved / 3600 * 4.0 == Approx(12.80));
}

TEST_CASE("The same drill observed late gives the same figures, the lag is reported separately",
          "[engine][incident]") {
  Harness onTime = runDrill(kDrill1);
  // The daemon loses its own connection to w1 at R−1 min and gets it back at R+31 min 40 s, after
  // the recovery budget (R+30 min) would have run out: every worker object of that time (copies,
  // pods, their first-work annotations) arrives late with its past timestamps. The manager stays
  // visible. Nothing is decided about w1 while it cannot be seen.
  Harness late = runDrill(kDrill1, Gap{"w1", seconds(540), seconds(2500)});
  auto a = onTime.incident(kIncident);
  auto b = late.incident(kIncident);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(b->outcome == IncidentOutcome::Recovered);
  CHECK(b->strandedGpuSeconds == Approx(a->strandedGpuSeconds));
  CHECK(b->strandedGpuSeconds == Approx(19200));
  CHECK(*b->recoveredAt == *a->recoveredAt);
  REQUIRE(a->recoverySeconds);
  CHECK(b->recoverySeconds.value_or(-1) == Approx(*a->recoverySeconds));
  CHECK(*b->firstRunningAt == *a->firstRunningAt);
  CHECK(*b->firstWorkAt == *a->firstWorkAt);
  CHECK(*b->lastProductiveAt == *a->lastProductiveAt);
  CHECK(b->usableGpus == a->usableGpus);
  CHECK(b->demandGpus == a->demandGpus);
  // Decided only once w1 was visible again (+2500 s), not before (and not failed at +2400 s).
  CHECK(b->observedAt == at(seconds(2500)));
  // Every milestone has the same event time, and every latency the same value.
  for (const auto& m : onTime.all.milestones) {
    bool found = false;
    for (const auto& n : late.all.milestones) {
      if (n.key != m.key) continue;
      found = true;
      CHECK(n.eventTime == m.eventTime);
    }
    CHECK(found);
  }
  CHECK(late.all.milestones.size() == onTime.all.milestones.size());
  for (const auto& o : onTime.all.observations) {
    if (o.histogram == HistogramKind::ObservationLag) continue;
    auto n = late.observation(o.key);
    REQUIRE(n);
    CHECK(n->seconds == Approx(o.seconds));
  }
  // Observation lag: A's first work (R+8 min = +1080 s) was seen at +2500 s: 1420 s late.
  const std::string cycleA = std::to_string(unixMs(at(seconds(60))));
  CHECK(onTime.observation("lag/manager/mA/" + cycleA + "/first_work")->seconds == Approx(0));
  CHECK(late.observation("lag/manager/mA/" + cycleA + "/first_work")->seconds == Approx(1420));
  // The daemon's own outage is a telemetry gap of its own: source probe, not a recovery.
  auto gap = late.incident("incident/w1/probe/" + std::to_string(unixMs(at(seconds(540)))));
  REQUIRE(gap);
  CHECK(gap->outcome == IncidentOutcome::Recovered);
  CHECK(gap->strandedGpuSeconds == 0);
  CHECK(late.observation("obs/worker_disconnected/" + gap->id)->seconds == Approx(2500 - 540));
  CHECK(late.observation("obs/worker_disconnected/" + gap->id)->source == "probe");
  CHECK_FALSE(late.observation("obs/recovery/" + gap->id));
  auto snap = late.e.snapshot();
  REQUIRE(snap.recoveries.size() == 1);
  CHECK(snap.recoveries[0].recovered == 1);
}

TEST_CASE("Relisting after the drill changes nothing", "[engine][incident]") {
  Harness h = runDrill(kDrill1);
  h.relist(at(seconds(2500)));
  CHECK(h.step(at(seconds(2500))).empty());
}

TEST_CASE("A restart in the middle of a recovery measures the same incident", "[engine][incident]") {
  Harness first = runDrill(kDrill1);
  // The daemon died at +1000 s (incident recovering); the store kept its open record.
  std::optional<IncidentRecord> open;
  for (const auto& r : first.all.incidents) {
    if (r.id == kIncident && r.outcome == IncidentOutcome::Recovering) open = r;
  }
  REQUIRE(open);
  Harness second(multiKueueConfigFor({"w1"}));
  second.e.restoreIncident(*open);
  // Relist at +1000 s: every object as it was then; then the rest of the drill.
  play(second, relistedAt(reconnectDrill(kDrill1), seconds(1000)), {seconds(2400)});
  auto in = second.incident(kIncident);
  REQUIRE(in);
  CHECK(in->outcome == IncidentOutcome::Recovered);
  CHECK(in->strandedGpuSeconds == Approx(19200));
  CHECK(*in->recoveredAt == at(seconds(1320)));
  // Re-derived milestones have the keys (and event times) of the first run: a store refuses them.
  for (const auto& m : second.all.milestones) {
    bool same = false;
    for (const auto& n : first.all.milestones) same = same || (n.key == m.key && n.eventTime == m.eventTime);
    CHECK(same);
  }
}

TEST_CASE("A probe outage while Kueue stays connected is a telemetry gap, not a recovery", "[engine][incident]") {
  Harness h(multiKueueConfigFor({"w1"}));
  h.e.onConnection("w1", false, at(seconds(-10)), at(seconds(-10)));  // startup: not an outage
  h.e.onConnection("w1", true, at(seconds(0)), at(seconds(0)));
  h.step(at(seconds(0)));
  CHECK(h.all.incidents.empty());
  h.e.onConnection("w1", false, at(seconds(100)), at(seconds(100)));
  h.step(at(seconds(100)));
  h.e.onConnection("w1", true, at(seconds(400)), at(seconds(401)));
  h.step(at(seconds(401)));
  const std::string id = "incident/w1/probe/" + std::to_string(unixMs(at(seconds(100))));
  auto in = h.incident(id);
  REQUIRE(in);
  CHECK(in->source == IncidentSource::Probe);
  CHECK(in->outcome == IncidentOutcome::Recovered);
  CHECK(in->disconnectedSeconds.value_or(-1) == Approx(300));
  CHECK(h.observation("obs/worker_disconnected/" + id)->seconds == Approx(300));
  auto snap = h.e.snapshot();
  CHECK(snap.recoveries.empty());
  REQUIRE(snap.connections.size() == 1);
  CHECK(snap.connections[0].source == IncidentSource::Probe);
  CHECK(snap.connections[0].connected);
}

TEST_CASE("An outage lost and regained at the same instant lasts 0 s: known and not unknown",
          "[engine][incident]") {
  Harness h(multiKueueConfigFor({"w1"}));
  h.e.onConnection("w1", false, at(seconds(-10)), at(seconds(-10)));  // startup: not an outage
  h.e.onConnection("w1", true, at(seconds(0)), at(seconds(0)));
  h.step(at(seconds(0)));
  h.e.onConnection("w1", false, at(seconds(100)), at(seconds(100)));
  h.e.onConnection("w1", true, at(seconds(100)), at(seconds(101)));
  h.step(at(seconds(101)));
  auto in = h.incident("incident/w1/probe/" + std::to_string(unixMs(at(seconds(100)))));
  REQUIRE(in);
  CHECK(*in->disconnectedAt == at(seconds(100)));
  CHECK(*in->reconnectedAt == at(seconds(100)));
  REQUIRE(in->disconnectedSeconds);
  CHECK(*in->disconnectedSeconds == 0.0);
}

TEST_CASE("A recovery that does not finish within the budget fails and is kept", "[engine][incident]") {
  // Nothing ever does useful work: stranded stays at 32 until the 30-minute budget runs out.
  Harness h = runDrill(ReconnectTimes{seconds(240), seconds(4000), seconds(300), seconds(4000)});
  auto in = h.incident(kIncident);
  REQUIRE(in);
  CHECK(in->outcome == IncidentOutcome::Failed);
  CHECK(in->failureReason == "budget");
  CHECK_FALSE(in->recoveredAt);
  CHECK(*in->closedAt == at(seconds(600 + 1800)));
  // 32 × 1800 s = 57,600 GPU-seconds.
  CHECK(in->strandedGpuSeconds == Approx(57600));
  CHECK(h.observation("obs/recovery/" + kIncident)->outcome == "failed");
  CHECK(h.observation("obs/recovery/" + kIncident)->seconds == Approx(1800));
  auto snap = h.e.snapshot();
  REQUIRE(snap.recoveries.size() == 1);
  CHECK(snap.recoveries[0].failed == 1);
  CHECK(snap.recoveries[0].strandedGpuSeconds == Approx(57600));
}

TEST_CASE("Losing the worker again before recovering fails the first incident", "[engine][incident]") {
  auto events = reconnectDrill(kDrill1);
  // Active goes False again at R+5 min, True at R+10 min.
  events.push_back({seconds(900), "manager", multiKueueCluster("w1", false, at(seconds(900)))});
  events.push_back({seconds(1200), "manager", multiKueueCluster("w1", true, at(seconds(1200)))});
  Harness h(multiKueueConfigFor({"w1"}));
  play(h, events, {seconds(2400)});
  auto first = h.incident(kIncident);
  REQUIRE(first);
  CHECK(first->outcome == IncidentOutcome::Failed);
  CHECK(first->failureReason == "disconnected_again");
  // [R, R+5 min) stranded 32 throughout (nobody productive before R+8 min): 32 × 300 = 9,600.
  CHECK(first->strandedGpuSeconds == Approx(9600));
  auto second = h.incident("incident/w1/multikueue/" + std::to_string(unixMs(at(seconds(900)))));
  REQUIRE(second);
  CHECK(second->outcome == IncidentOutcome::Recovered);
  // From R2 = +1200 s: A productive since +1080 s, B from +1320 s: 16 × 120 = 1,920.
  CHECK(second->strandedGpuSeconds == Approx(1920));
}

TEST_CASE("An outage seen only by its end still opens an incident", "[engine][incident]") {
  Harness h(multiKueueConfigFor({"w1"}));
  h.put("manager", multiKueueCluster("w1", true, at(seconds(-7200))), at(seconds(-3600)));
  h.step(at(seconds(-3600)));
  // The daemon's view of the manager was cut; when it comes back Active is True again, but since
  // +600 s: it was False in between.
  h.put("manager", multiKueueCluster("w1", true, at(seconds(600))), at(seconds(900)));
  h.step(at(seconds(900)));
  auto in = h.incident("incident/w1/multikueue/r" + std::to_string(unixMs(at(seconds(600)))));
  REQUIRE(in);
  CHECK_FALSE(in->disconnectedAt);
  CHECK_FALSE(in->disconnectedSeconds);  // unknown, not 0
  CHECK(*in->reconnectedAt == at(seconds(600)));
  CHECK(in->outcome == IncidentOutcome::Recovered);  // nothing was waiting: closes at R
  CHECK(in->strandedGpuSeconds == 0);
}

// Found by the fault soak (reconnection-baseline, seed 9014): the daemon was down from before the
// worker was lost (+0 s) until after it was regained (+600 s). The relisted MultiKueueCluster shows
// Active=True since +600 s, which is an outage only against what it showed before (True since
// -7200 s): without that durable view the restarted daemon recorded no incident at all.
TEST_CASE("A worker lost and regained while the daemon was down is still an incident after a restart",
          "[engine][incident][restart]") {
  // The first life sees the estate an hour before the drill and dies.
  Harness first(multiKueueConfigFor({"w1"}));
  for (const auto& e : reconnectDrill(kDrill1)) {
    if (e.t <= seconds(-3600)) first.put(e.cluster, e.obj, at(e.t));
  }
  first.step(at(seconds(-3600)));
  REQUIRE(first.all.workerConnections.size() == 1);
  const WorkerConnectionRecord stored = first.all.workerConnections[0];
  CHECK(stored.worker == "w1");
  CHECK(stored.managementCluster == "manager");
  CHECK(stored.known);
  CHECK(stored.active);
  CHECK(stored.since == at(seconds(-7200)));
  // The same condition seen again (a relist) changes nothing durable.
  first.put("manager", multiKueueCluster("w1", true, at(seconds(-7200))), at(seconds(-3000)));
  first.step(at(seconds(-3000)));
  CHECK(first.all.workerConnections.size() == 1);

  // The next life starts at +700 s, after the reconnection at R = +600 s.
  const auto events = relistedAt(reconnectDrill(kDrill1), seconds(700));
  SECTION("given the stored view back, it measures the recovery from R") {
    Harness second(multiKueueConfigFor({"w1"}));
    second.e.restoreWorkerConnection(stored);
    play(second, events, {seconds(2400)});
    auto in = second.incident("incident/w1/multikueue/r" + std::to_string(unixMs(at(seconds(600)))));
    REQUIRE(in);
    CHECK_FALSE(in->disconnectedAt);  // nothing tells when it was lost
    CHECK_FALSE(in->disconnectedSeconds);
    CHECK(*in->reconnectedAt == at(seconds(600)));
    CHECK(in->outcome == IncidentOutcome::Recovered);
    // The same figures from R as an uninterrupted process (first test case): 19,200 GPU-s,
    // recovered at R + 12 min.
    CHECK(in->strandedGpuSeconds == Approx(19200));
    CHECK(*in->recoveredAt == at(seconds(1320)));
    // And it keeps Kueue's new view: True since R.
    REQUIRE_FALSE(second.all.workerConnections.empty());
    CHECK(second.all.workerConnections.back().active);
    CHECK(second.all.workerConnections.back().since == at(seconds(600)));
  }
  SECTION("without it, the outage is invisible (what the restore is for)") {
    Harness second(multiKueueConfigFor({"w1"}));
    play(second, events, {seconds(2400)});
    CHECK(second.all.incidents.empty());
  }
  SECTION("a stored view is ignored once the worker's MultiKueueCluster has been seen, or for an "
          "unknown worker") {
    Harness second(multiKueueConfigFor({"w1"}));
    WorkerConnectionRecord other = stored;
    other.worker = "w9";
    second.e.restoreWorkerConnection(other);
    second.put("manager", multiKueueCluster("w1", true, at(seconds(600))), at(seconds(700)));
    second.step(at(seconds(700)));
    second.e.restoreWorkerConnection(stored);  // too late: the live view wins
    second.put("manager", multiKueueCluster("w1", true, at(seconds(600))), at(seconds(800)));
    second.step(at(seconds(800)));
    CHECK(second.all.incidents.empty());
  }
}

// A record survives only for a configured worker (the daemon deletes the others at start); a
// cluster that was a worker and is now configured standalone or as the manager must not get a
// MultiKueue connection back from it.
TEST_CASE("A stored view of a worker is restored only for a cluster still configured as a worker",
          "[engine][incident][restart]") {
  engine::EngineConfig cfg = multiKueueConfigFor({"w1"});
  cfg.clusters.push_back({"s1", engine::ClusterRole::Standalone, {}});
  Harness h(cfg);
  WorkerConnectionRecord view;
  view.managementCluster = "manager";
  view.known = true;
  view.active = false;
  view.since = at(seconds(-600));
  view.reason = "ClientConnectionFailed";
  for (const char* name : {"s1", "manager", "w9", "w1"}) {
    view.worker = name;
    h.e.restoreWorkerConnection(view);
  }
  h.step(at(seconds(0)));
  const auto snap = h.e.snapshot();
  REQUIRE(snap.connections.size() == 1);
  CHECK(snap.connections[0].cluster == "w1");
  CHECK(snap.connections[0].source == IncidentSource::MultiKueue);
  CHECK_FALSE(snap.connections[0].connected);
}

TEST_CASE("Kueue's view of a worker is recorded at each transition and dropped with its "
          "MultiKueueCluster", "[engine][incident]") {
  Harness h(multiKueueConfigFor({"w1"}));
  h.put("manager", multiKueueCluster("w1", true, at(seconds(-7200))), at(seconds(-3600)));
  h.step(at(seconds(-3600)));
  h.put("manager", multiKueueCluster("w1", false, at(seconds(0))), at(seconds(1)));
  h.step(at(seconds(1)));
  h.put("manager", multiKueueCluster("w1", false, at(seconds(0))), at(seconds(2)));  // re-delivered
  h.step(at(seconds(2)));
  h.put("manager", multiKueueCluster("w1", true, at(seconds(600))), at(seconds(601)));
  h.step(at(seconds(601)));
  h.remove("manager", multiKueueCluster("w1", true, at(seconds(600))), at(seconds(900)));
  h.step(at(seconds(900)));
  const auto& rs = h.all.workerConnections;
  REQUIRE(rs.size() == 4);
  CHECK((rs[0].active && rs[0].since == at(seconds(-7200)) && rs[0].known));
  CHECK((!rs[1].active && rs[1].since == at(seconds(0)) && rs[1].known));
  CHECK(rs[1].observedAt == at(seconds(1)));
  CHECK((rs[2].active && rs[2].since == at(seconds(600)) && rs[2].known));
  CHECK(rs[3].worker == "w1");
  CHECK_FALSE(rs[3].known);
  CHECK(rs[3].observedAt == at(seconds(900)));
}

// Found by the fault soak (reconnection-baseline, seed 9014): the worker's watches were relisting
// after 410s and 429s (reachable, not streaming) when the manager's Workloads finished; the
// incident closed on that, before the pods' first useful work arrived, with every GPU counted
// stranded to the end.
TEST_CASE("A recovery is not closed while a worker's watches are behind", "[engine][incident]") {
  // Drill 1; both manager Workloads finish at +1100 s, 20 s after A's pods reach first work
  // (+1080 s). From +1000 s to +1500 s the daemon's watches of w1 are not streaming.
  auto events = reconnectDrill(kDrill1);
  for (const auto& [name, uid] : {std::pair<std::string, std::string>{"job-a-1f2e3", "mA"},
                                  {"job-b-4d5c6", "mB"}}) {
    WorkloadBuilder m("team", name, uid, at(seconds(60)));
    m.ownedByJob(name.substr(4, 1), "job-" + uid).queue("lq").podSet(2, 8);
    m.reserved("cq", at(seconds(60))).check(model::CheckState::Pending, at(seconds(60)));
    m.dispatchedTo("w1", at(kReconnect + seconds(60))).finished(at(seconds(1100)));
    events.push_back({seconds(1100), "manager", m.obj()});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const ScriptEvent& a, const ScriptEvent& b) { return a.t < b.t; });
  const std::string id = kIncident;
  auto run = [&](bool tellStale) {
    Harness h(multiKueueConfigFor({"w1"}));
    std::vector<ScriptEvent> held;  // w1's events while its watches are behind
    bool behind = false;
    for (const auto& e : events) {
      if (e.t > seconds(1000) && !behind) {
        behind = true;
        h.step(at(seconds(1000)));
        if (tellStale) h.e.onWatchesCurrent("w1", false);
      }
      if (behind && e.t < seconds(1500) && e.cluster == "w1") {
        held.push_back(e);
        continue;
      }
      h.put(e.cluster, e.obj, at(e.t));
      h.step(at(e.t));
    }
    h.step(at(seconds(1400)));
    auto midway = h.incident(id);
    // w1 relisted at +1500 s: its objects as they are then.
    for (const auto& e : held) h.put(e.cluster, e.obj, at(seconds(1500)));
    if (tellStale) h.e.onWatchesCurrent("w1", true);
    h.step(at(seconds(1500)));
    h.step(at(seconds(2400)));
    return std::make_pair(midway, h.incident(id));
  };
  SECTION("told, the engine waits and measures what happened") {
    auto [midway, in] = run(true);
    REQUIRE(midway);
    CHECK(midway->outcome == IncidentOutcome::Recovering);
    REQUIRE(in);
    CHECK(in->outcome == IncidentOutcome::Recovered);
    REQUIRE(in->firstWorkAt);
    CHECK(*in->firstWorkAt == at(seconds(1080)));
    CHECK(*in->recoveredAt == at(seconds(1100)));
    // [R, +1080 s) 32 stranded × 480 s = 15,360; [+1080, +1100) A's 16 productive, B's 16
    // waiting: 16 × 20 = 320; demand 0 from +1100 s. 15,680 GPU-s.
    CHECK(in->strandedGpuSeconds == Approx(15680));
  }
  SECTION("untold (as before), it closed on the manager's view alone") {
    auto [midway, in] = run(false);
    REQUIRE(in);
    CHECK(in->outcome == IncidentOutcome::Recovered);
    CHECK_FALSE(in->firstWorkAt);
    CHECK(in->strandedGpuSeconds == Approx(32.0 * 500));  // every GPU stranded to +1100 s
  }
}
