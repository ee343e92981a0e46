#include <catch2/catch.hpp>
#include <map>

#include "builders.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace firstwork::testing;
using std::chrono::seconds;

namespace {

std::string ms(SystemTime t) { return std::to_string(unixMs(t)); }

// A standalone cluster c1 with one 8-GPU node, and a 2-pod job "train" (1 GPU per pod).
struct TrainJob {
  Harness h{standaloneConfig("c1")};
  WorkloadBuilder wl{WorkloadBuilder("team-a", "job-train-3b9f2", "wl-1", at(0s))};
  PodBuilder p1{PodBuilder("team-a", "train-0", "pod-1", at(60s))};
  PodBuilder p2{PodBuilder("team-a", "train-1", "pod-2", at(60s))};

  TrainJob() {
    wl.ownedByJob("train", "job-1").podSet(2, 1);
    for (auto* p : {&p1, &p2}) p->ownedByJob("train", "job-1").gpus(1);
    h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
    h.step(at(-3600s));
  }
  // Runs the job to useful work: reserved/admitted +60 s, pods scheduled +90/+120 s, running
  // +180/+240 s, first work +300 s (pod 2, seen at +301 s) and +360 s (pod 1).
  void runToFirstWork() {
    h.put("c1", wl.pending(at(0s)).obj(), at(1s));
    h.step(at(1s));
    h.put("c1", wl.reserved("cq-a", at(60s)).admitted(at(60s)).obj(), at(61s));
    h.put("c1", p1.obj(), at(61s));
    h.put("c1", p2.obj(), at(61s));
    h.step(at(61s));
    h.put("c1", p1.scheduled("n1", at(90s)).obj(), at(91s));
    h.step(at(91s));
    h.put("c1", p2.scheduled("n1", at(120s)).obj(), at(121s));
    h.step(at(121s));
    h.put("c1", p1.running(at(180s)).obj(), at(181s));
    h.step(at(181s));
    h.put("c1", p2.running(at(240s)).obj(), at(241s));
    h.step(at(241s));
    h.put("c1", p2.firstWork(at(300s)).obj(), at(301s));
    h.step(at(301s));
    h.put("c1", p1.firstWork(at(360s)).obj(), at(361s));
    h.step(at(361s));
  }
};

/// Two admitted Jobs' Workloads (wl-x, wl-y) on a node of c1, and Job x's pod "ns/x-0" (uid
/// pod-x, running from 10 s), put at 11 s: the external-signal-by-name cases.
PodBuilder twoJobsAndPodOfX(Harness& h) {
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  WorkloadBuilder wx("ns", "job-x-1", "wl-x", at(0s));
  wx.ownedByJob("x", "job-x").podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  WorkloadBuilder wy("ns", "job-y-1", "wl-y", at(0s));
  wy.ownedByJob("y", "job-y").podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  h.put("c1", wx.obj(), at(2s));
  h.put("c1", wy.obj(), at(2s));
  auto px = PodBuilder("ns", "x-0", "pod-x", at(2s)).ownedByJob("x", "job-x").scheduled("n1", at(3s)).running(at(10s));
  h.put("c1", px.obj(), at(11s));
  return px;
}

}  // namespace

TEST_CASE("Milestones carry the objects' own event times and the observation time", "[engine]") {
  TrainJob j;
  j.runToFirstWork();
  auto& h = j.h;
  const std::string cycle = ms(at(0s));

  auto queued = h.milestone("wl-1", Milestone::Queued);
  REQUIRE(queued);
  CHECK(queued->eventTime == at(0s));  // creationTimestamp
  CHECK(queued->observedAt == at(1s));
  CHECK(queued->reason == "Created");
  CHECK(queued->cycleId == cycle);
  CHECK(queued->key == "ms/c1/wl-1/" + cycle + "/queued");
  CHECK(queued->workload.namespace_ == "team-a");
  CHECK(queued->workload.name == "job-train-3b9f2");

  auto reserved = h.milestone("wl-1", Milestone::Reserved);
  REQUIRE(reserved);
  CHECK(reserved->eventTime == at(60s));
  CHECK(reserved->workload.clusterQueue == "cq-a");
  CHECK_FALSE(reserved->withoutCapacity);  // 8 usable, 0 held, 2 wanted
  CHECK(h.milestone("wl-1", Milestone::Admitted)->eventTime == at(60s));
  // All pods scheduled: the later of the two PodScheduled times.
  auto scheduled = h.milestone("wl-1", Milestone::Scheduled);
  REQUIRE(scheduled);
  CHECK(scheduled->eventTime == at(120s));
  CHECK(scheduled->observedAt == at(121s));
  CHECK(scheduled->resource == "pods");
  CHECK(scheduled->executionCluster == "c1");
  CHECK(h.milestone("wl-1", Milestone::Running)->eventTime == at(240s));
  // first_work = the earliest signal among the pods (pod 2 at +300 s; pod 1's +360 s is later).
  auto fw = h.milestone("wl-1", Milestone::FirstWork);
  REQUIRE(fw);
  CHECK(fw->eventTime == at(300s));
  CHECK(fw->observedAt == at(301s));
  CHECK(fw->signal == "annotation");
  CHECK_FALSE(fw->proxy);
  // Devices the workload wants: one podset of 2 pods × 1 GPU = 2 (the report's recovery curves).
  CHECK(fw->gpus == 2);
  CHECK(reserved->gpus == 2);
  CHECK_FALSE(h.milestone("wl-1", Milestone::Dispatched));  // standalone: no dispatch

  // Stage latencies from event times (seconds):
  //   queued→reserved 60−0 = 60; reserved→scheduled 120−60 = 60; scheduled→running 240−120 = 120;
  //   running→first_work 300−240 = 60; reservation→first_work 300−60 = 240.
  auto stage = [&](const char* name) {
    auto o = h.observation(std::string("obs/stage/") + name + "/c1/wl-1/" + cycle);
    REQUIRE(o);
    CHECK(o->cluster == "c1");
    CHECK(o->clusterQueue == "cq-a");
    CHECK(o->stage == name);
    return o->seconds;
  };
  CHECK(stage("queued_to_reserved") == Approx(60));
  CHECK(stage("reserved_to_scheduled") == Approx(60));
  CHECK(stage("scheduled_to_running") == Approx(120));
  CHECK(stage("running_to_first_work") == Approx(60));
  CHECK_FALSE(h.observation("obs/stage/reserved_to_dispatched/c1/wl-1/" + cycle));
  auto rtfw = h.observation("obs/reservation_to_first_work/c1/wl-1/" + cycle);
  REQUIRE(rtfw);
  CHECK(rtfw->seconds == Approx(240));
  CHECK(rtfw->histogram == HistogramKind::ReservationToFirstWork);
  // Observation lag, separately: first_work seen 1 s after it happened.
  auto lag = h.observation("lag/c1/wl-1/" + cycle + "/first_work");
  REQUIRE(lag);
  CHECK(lag->seconds == Approx(1));
  CHECK(lag->resource == "pods");
}

TEST_CASE("A pod milestone is observed when its pods were first seen so, not at their latest event",
          "[engine]") {
  // No step between the pods' events: the milestones are derived at +301 s, from pods whose last
  // events (first work) were seen then. Scheduled was seen at +121 s (pod 2's PodScheduled, the
  // later of the two) and Running at +241 s (pod 2's container started): those are their
  // observation times, and their lags 121 − 120 = 1 s and 241 − 240 = 1 s.
  TrainJob j;
  auto& h = j.h;
  h.put("c1", j.wl.pending(at(0s)).obj(), at(1s));
  h.step(at(1s));
  h.put("c1", j.wl.reserved("cq-a", at(60s)).admitted(at(60s)).obj(), at(61s));
  h.put("c1", j.p1.obj(), at(61s));
  h.put("c1", j.p2.obj(), at(61s));
  h.step(at(61s));
  h.put("c1", j.p1.scheduled("n1", at(90s)).obj(), at(91s));
  h.put("c1", j.p2.scheduled("n1", at(120s)).obj(), at(121s));
  h.put("c1", j.p1.running(at(180s)).obj(), at(181s));
  h.put("c1", j.p2.running(at(240s)).obj(), at(241s));
  h.put("c1", j.p2.firstWork(at(300s)).obj(), at(301s));
  h.put("c1", j.p1.firstWork(at(360s)).obj(), at(361s));
  h.step(at(361s));
  const std::string cycle = ms(at(0s));
  auto scheduled = h.milestone("wl-1", Milestone::Scheduled);
  REQUIRE(scheduled);
  CHECK(scheduled->eventTime == at(120s));
  CHECK(scheduled->observedAt == at(121s));
  auto running = h.milestone("wl-1", Milestone::Running);
  REQUIRE(running);
  CHECK(running->eventTime == at(240s));
  CHECK(running->observedAt == at(241s));
  auto lag = h.observation("lag/c1/wl-1/" + cycle + "/running");
  REQUIRE(lag);
  CHECK(lag->seconds == Approx(1));
}

TEST_CASE("Re-delivering every object (relist) changes nothing", "[engine]") {
  TrainJob j;
  j.runToFirstWork();
  const size_t milestones = j.h.all.milestones.size();
  j.h.relist(at(400s));
  auto out = j.h.step(at(400s));
  CHECK(out.empty());
  j.h.relist(at(401s));
  CHECK(j.h.step(at(401s)).empty());
  CHECK(j.h.all.milestones.size() == milestones);
}

TEST_CASE("A delete whose final state is unknown deletes the Workload or pod as last seen",
          "[engine]") {
  // The daemon's Workload and pod reflectors keep no objects: a relist that does not list one
  // names it by uid alone (kube::ObjectEvent::finalStateUnknown), and the engine deletes it as
  // it last saw it.
  Harness h(standaloneConfig("c1"));
  WorkloadBuilder wb("ns", "job-a", "wl-a", at(0s));
  wb.podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  model::Object w = wb.obj();
  std::get<model::Workload>(w).meta.deletionTimestamp = at(100s);  // a finalizer holds it
  h.put("c1", w, at(101s));
  h.put("c1",
        PodBuilder("ns", "a-0", "pod-a", at(2s))
            .workloadAnnotation("job-a")
            .scheduled("n1", at(3s))
            .running(at(4s))
            .obj(),
        at(5s));
  h.step(at(200s));
  CHECK(h.e.snapshot().stats.trackedWorkloads == 1);
  CHECK(h.e.snapshot().stats.trackedPods == 1);
  const uint64_t ignored = h.e.snapshot().stats.ignoredObjects;
  // Nothing held under that uid, a kind the engine keeps no objects of, an unknown cluster:
  // counted, nothing else.
  h.e.onDeletedUnknown("c1", model::Kind::Pod, "pod-unknown", 0, at(300s));
  h.e.onDeletedUnknown("c1", model::Kind::Node, "node-uid", 0, at(300s));
  h.e.onDeletedUnknown("elsewhere", model::Kind::Pod, "pod-a", 0, at(300s));
  h.step(at(300s));
  CHECK(h.e.snapshot().stats.ignoredObjects == ignored + 2);
  CHECK(h.e.snapshot().stats.unknownCluster == 1);
  CHECK(h.e.snapshot().stats.trackedPods == 1);

  // Not listed by a relist at 2,000 s.
  h.e.onDeletedUnknown("c1", model::Kind::Workload, "wl-a", 0, at(2000s));
  h.e.onDeletedUnknown("c1", model::Kind::Pod, "pod-a", 0, at(2000s));
  // Deleted as last seen: the Workload since its deletionTimestamp (100 s), so it is collected
  // an hour (deletedRetention) after that; the pod since it was found gone.
  h.step(at(3701s));
  CHECK(h.e.snapshot().stats.trackedWorkloads == 0);
  CHECK(h.e.snapshot().stats.trackedPods == 1);
  h.step(at(5601s));
  CHECK(h.e.snapshot().stats.trackedPods == 0);
}

// firstwork_pods_without_workload: per worker (zeros included; a management cluster watches no
// pods), the pods no Workload claims; a deleted one no longer counts, though the engine keeps it
// (EngineStats::unresolvedPods) until gc in case its Workload comes after its deletion.
TEST_CASE("The snapshot counts each worker's pods that no Workload claims", "[engine]") {
  Harness h(multiKueueConfigFor({"w1", "w2"}));
  auto counts = [&] {
    std::map<std::string, int64_t> out;
    for (const auto& c : h.e.snapshot().podsWithoutWorkload) out[c.cluster] = c.count;
    return out;
  };
  using Counts = std::map<std::string, int64_t>;
  CHECK(counts() == Counts{{"w1", 0}, {"w2", 0}});
  // A DaemonSet's pod (no Workload will claim it) and a Job's pod before its Workload, on w1.
  h.put("w1", PodBuilder("kube-system", "dcgm-exporter-x", "pod-ds", at(1s)).running(at(2s)).obj(),
        at(3s));
  h.put("w1", PodBuilder("ns", "job-a-0", "pod-a0", at(1s)).ownedByJob("job-a", "job-uid-a").obj(),
        at(3s));
  h.step(at(4s));
  CHECK(counts() == Counts{{"w1", 2}, {"w2", 0}});
  CHECK(h.e.snapshot().stats.unresolvedPods == 2);
  // The Job's Workload comes: its pod is claimed; the DaemonSet's stays.
  WorkloadBuilder wb("ns", "job-job-a", "wl-a", at(0s));
  wb.ownedByJob("job-a", "job-uid-a").podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  h.put("w1", wb.obj(), at(5s));
  h.step(at(5s));
  CHECK(counts() == Counts{{"w1", 1}, {"w2", 0}});
  // Deleted: counted no more at once (a DaemonSet's rollout counted its old pods for an hour),
  // kept until gc. `after(t, w1, w2, kept)`: stepped at t, the counts and the pods kept waiting.
  auto after = [&](SystemTime t, int64_t w1, int64_t w2, uint64_t kept) {
    h.step(t);
    CHECK(counts() == Counts{{"w1", w1}, {"w2", w2}});
    CHECK(h.e.snapshot().stats.unresolvedPods == kept);
  };
  auto ds = [](const char* name, const char* uid) {
    return PodBuilder("kube-system", name, uid, at(1s)).running(at(2s)).obj();
  };
  h.remove("w1", ds("dcgm-exporter-x", "pod-ds"), at(6s));
  after(at(6s), 0, 0, 1);
  // Found gone by a relist (its last state unknown): the same.
  h.put("w2", ds("dcgm-exporter-y", "pod-ds2"), at(7s));
  after(at(7s), 0, 1, 2);
  h.e.onDeletedUnknown("w2", model::Kind::Pod, "pod-ds2", 0, at(8s));
  after(at(8s), 0, 0, 2);
  // A Job's pod deleted before its Workload came: the Workload still claims it, and it counts
  // nowhere on the way.
  auto podB = PodBuilder("ns", "job-b-0", "pod-b0", at(1s)).ownedByJob("job-b", "job-uid-b").obj();
  h.put("w1", podB, at(9s));
  h.remove("w1", podB, at(10s));
  after(at(10s), 0, 0, 3);
  WorkloadBuilder wbB("ns", "job-job-b", "wl-b", at(0s));
  wbB.ownedByJob("job-b", "job-uid-b").podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  h.put("w1", wbB.obj(), at(11s));
  after(at(11s), 0, 0, 2);
  // Seen again (an event after a deletion, as a stale relist can bring): counted again.
  h.put("w1", ds("dcgm-exporter-x", "pod-ds"), at(12s));
  after(at(12s), 1, 0, 2);
  // Collected (deletedRetention): the deleted one goes; the one seen again stays.
  after(at(12s) + engine::EngineConfig{}.deletedRetention + 1s, 1, 0, 1);
}

TEST_CASE("A decoded pod is let go once its event is taken, even while no Workload resolves it",
          "[engine]") {
  // The engine keeps what it reads of a pod in its record (change 96); a pod no Workload
  // resolves yet keeps a copy of its metadata (resolving reads its annotations, owner references,
  // namespace, uid and creation time), not the decoded pod: pods that no Workload ever claims
  // (DaemonSets') held theirs for good.
  Harness h(standaloneConfig("c1"));
  auto pod = [](std::string name, std::string uid) {
    return std::make_shared<const model::Object>(
        PodBuilder("ns", std::move(name), std::move(uid), at(2s))
            .workloadAnnotation("job-a")
            .scheduled("n1", at(3s))
            .running(at(4s))
            .obj());
  };
  // Before its Workload: let go, and waiting to be resolved when the Workload comes.
  auto early = pod("a-0", "pod-a0");
  std::weak_ptr<const model::Object> earlyHeld = early;
  h.e.onObject("c1", model::EventType::Added, std::move(early), at(5s));
  CHECK(earlyHeld.expired());
  h.step(at(6s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 1);
  WorkloadBuilder wb("ns", "job-a", "wl-a", at(0s));
  wb.podSet(2, 1).reserved("cq", at(1s)).admitted(at(1s));
  h.put("c1", wb.obj(), at(7s));
  h.step(at(7s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);  // resolved by its kept metadata
  // After it: let go at once.
  auto late = pod("a-1", "pod-a1");
  std::weak_ptr<const model::Object> lateHeld = late;
  h.e.onObject("c1", model::EventType::Added, std::move(late), at(8s));
  CHECK(lateHeld.expired());
  h.step(at(9s));
  // What the records keep is what the milestones read: both pods scheduled and running, the one
  // that waited too.
  auto running = h.milestone("wl-a", Milestone::Running);
  REQUIRE(running);
  CHECK(running->eventTime == at(4s));
  auto scheduled = h.milestone("wl-a", Milestone::Scheduled);
  REQUIRE(scheduled);
  CHECK(scheduled->eventTime == at(3s));
}

TEST_CASE("Milestones never move backwards within a cycle", "[engine]") {
  TrainJob j;
  j.runToFirstWork();
  // The container restarts (a later startedAt) and the app rewrites its annotation: the recorded
  // running and first_work stay as they were, and nothing is emitted again.
  j.h.put("c1", j.p2.running(at(500s)).firstWork(at(510s)).obj(), at(511s));
  CHECK(j.h.step(at(511s)).milestones.empty());
  CHECK(j.h.milestone("wl-1", Milestone::Running)->eventTime == at(240s));
  CHECK(j.h.milestone("wl-1", Milestone::FirstWork)->eventTime == at(300s));
}

TEST_CASE("Two-phase eviction and requeue: a new cycle, the old one kept", "[engine]") {
  TrainJob j;
  j.runToFirstWork();
  auto& h = j.h;
  const std::string msg = "Preempted to accommodate a workload (UID: wl-9, JobUID: job-9) due to "
                          "prioritization in the ClusterQueue; preemptor path: /cq-a; preemptee path: /cq-a";
  // Phase 1: Evicted=True while QuotaReserved stays True.
  h.put("c1", j.wl.preempted("InClusterQueue", at(1200s), msg).obj(), at(1201s));
  h.step(at(1201s));
  auto evicted = h.milestone("wl-1", Milestone::Evicted);
  REQUIRE(evicted);
  CHECK(evicted->eventTime == at(1200s));
  CHECK(evicted->reason == "Preempted");
  auto preempted = h.milestone("wl-1", Milestone::Preempted);
  REQUIRE(preempted);
  CHECK(preempted->reason == "InClusterQueue");
  CHECK(preempted->preemptorUid == "wl-9");
  CHECK_FALSE(h.milestone("wl-1", Milestone::Released));
  // Pods go, then phase 2: QuotaReserved=False and Requeued=True.
  h.remove("c1", j.p1.obj(), at(1250s));
  h.remove("c1", j.p2.obj(), at(1250s));
  h.put("c1", j.wl.released(at(1260s)).obj(), at(1261s));
  h.step(at(1261s));
  auto released = h.milestone("wl-1", Milestone::Released);
  REQUIRE(released);
  CHECK(released->eventTime == at(1260s));
  // evicted → released: 1260 − 1200 = 60 s.
  CHECK(h.observation("obs/stage/evicted_to_released/c1/wl-1/" + ms(at(0s)))->seconds == Approx(60));
  auto queued1 = h.milestone("wl-1", Milestone::Queued, 1);
  REQUIRE(queued1);
  CHECK(queued1->eventTime == at(1260s));  // the Requeued=True transition
  CHECK(queued1->reason == "Preempted");
  CHECK(queued1->cycleId == ms(at(1260s)));
  // Lost work: 2 GPUs × (evicted 1200 − first_work 300) = 1800 GPU-s, reason InClusterQueue, and
  // no reclaim record (a priority preemption inside one queue is not a reclaim).
  auto snap = h.e.snapshot();
  REQUIRE(snap.interruptedSeconds.size() == 1);
  CHECK(snap.interruptedSeconds[0].reason == "InClusterQueue");
  CHECK(snap.interruptedSeconds[0].clusterQueue == "cq-a");
  CHECK(snap.interruptedSeconds[0].seconds == Approx(1800));
  CHECK(h.all.reclaims.empty());

  // Re-admitted at +1500 (Kueue resets Evicted/Preempted to False, "Previously: ..."); a new pod.
  j.wl.reserved("cq-a", at(1500s)).admitted(at(1500s));
  j.wl.condition(cond("Evicted", false, "QuotaReserved", at(1500s), "Previously: " + msg));
  j.wl.condition(cond("Preempted", false, "QuotaReserved", at(1500s), "Previously: " + msg));
  PodBuilder p3("team-a", "train-0-x", "pod-3", at(1500s));
  p3.ownedByJob("train", "job-1").gpus(1).scheduled("n1", at(1520s)).running(at(1600s)).firstWork(at(1700s));
  PodBuilder p4("team-a", "train-1-x", "pod-4", at(1500s));
  p4.ownedByJob("train", "job-1").gpus(1).scheduled("n1", at(1510s)).running(at(1590s));
  h.put("c1", j.wl.obj(), at(1501s));
  h.put("c1", p3.obj(), at(1701s));
  h.put("c1", p4.obj(), at(1701s));
  h.step(at(1701s));
  CHECK(h.milestone("wl-1", Milestone::Reserved, 1)->eventTime == at(1500s));
  CHECK(h.milestone("wl-1", Milestone::Scheduled, 1)->eventTime == at(1520s));
  CHECK(h.milestone("wl-1", Milestone::Running, 1)->eventTime == at(1600s));
  CHECK(h.milestone("wl-1", Milestone::FirstWork, 1)->eventTime == at(1700s));
  CHECK_FALSE(h.milestone("wl-1", Milestone::Evicted, 1));
  // queued→reserved of cycle 1: 1500 − 1260 = 240 s.
  CHECK(h.observation("obs/stage/queued_to_reserved/c1/wl-1/" + ms(at(1260s)))->seconds == Approx(240));
  // Cycle 0 was not touched.
  CHECK(h.milestone("wl-1", Milestone::FirstWork, 0)->eventTime == at(300s));
}

TEST_CASE("Finished is terminal and overrides everything", "[engine]") {
  TrainJob j;
  j.runToFirstWork();
  auto& h = j.h;
  h.put("c1", j.wl.finished(at(900s)).obj(), at(901s));
  h.step(at(901s));
  CHECK(h.milestone("wl-1", Milestone::Finished)->eventTime == at(900s));
  // Later conditions after Finished (Kueue never flips back, but a buggy controller might):
  h.put("c1", j.wl.evicted("Preempted", at(1000s)).condition(cond("Requeued", true, "Preempted", at(1000s))).obj(),
        at(1001s));
  auto out = h.step(at(1001s));
  CHECK(out.milestones.empty());
  CHECK_FALSE(h.milestone("wl-1", Milestone::Evicted));
  CHECK_FALSE(h.milestone("wl-1", Milestone::Queued, 1));
  // Ended: no longer in the workload gauges.
  CHECK(h.e.snapshot().workloads.empty());
}

TEST_CASE("Pods join their workload by annotation, owner Job or as plain pods", "[engine]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  // Pod before its Workload: joined once the Workload (owned by the same Job) arrives.
  auto early = PodBuilder("ns", "d-0", "pod-d", at(10s)).ownedByJob("d", "job-d").gpus(1).firstWork(at(100s));
  h.put("c1", early.obj(), at(11s));
  h.step(at(11s));
  WorkloadBuilder a("ns", "job-a-11111", "wl-a", at(0s));
  a.ownedByJob("a", "job-a").podSet(1, 1).reserved("cq", at(5s));
  WorkloadBuilder b("ns", "pod-b-22222", "wl-b", at(0s));
  b.ownedByPod("b", "pod-b").podSet(1, 1).reserved("cq", at(5s));
  WorkloadBuilder c("ns", "job-c-33333", "wl-c", at(0s));
  c.podSet(1, 1).reserved("cq", at(5s));  // owned by something the pod does not name
  WorkloadBuilder d("ns", "job-d-44444", "wl-d", at(0s));
  d.ownedByJob("d", "job-d").podSet(1, 1).reserved("cq", at(5s));
  for (auto* w : {&a, &b, &c, &d}) h.put("c1", w->obj(), at(20s));
  h.put("c1", PodBuilder("ns", "a-0", "pod-a", at(10s)).ownedByJob("a", "job-a").firstWork(at(101s)).obj(), at(20s));
  h.put("c1", PodBuilder("ns", "b", "pod-b", at(1s)).firstWork(at(102s)).obj(), at(20s));
  h.put("c1", PodBuilder("ns", "c-0", "pod-c", at(10s)).workloadAnnotation("job-c-33333").firstWork(at(103s)).obj(),
        at(20s));
  h.step(at(200s));
  CHECK(h.milestone("wl-a", Milestone::FirstWork)->eventTime == at(101s));
  CHECK(h.milestone("wl-b", Milestone::FirstWork)->eventTime == at(102s));
  CHECK(h.milestone("wl-c", Milestone::FirstWork)->eventTime == at(103s));
  CHECK(h.milestone("wl-d", Milestone::FirstWork)->eventTime == at(100s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);
}

TEST_CASE("A waiting pod is retried by a new Workload under each key that resolves it",
          "[engine]") {
  // Pods that come before their Workloads wait under each key a Workload could resolve them by;
  // a new Workload retries the pods its own keys name (change 107).
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  auto waiting = [&] { return h.e.snapshot().stats.unresolvedPods; };
  auto pa =
      PodBuilder("ns", "a-0", "pod-a", at(10s)).workloadAnnotation("job-a").firstWork(at(101s));
  auto pb = PodBuilder("ns", "b", "pod-b", at(10s)).firstWork(at(102s));  // a plain pod
  auto pc = PodBuilder("ns", "c-0", "pod-c", at(10s)).ownedByJob("c", "job-c").firstWork(at(103s));
  auto pd =
      PodBuilder("ns", "d-0", "pod-d", at(10s)).ownedByJob("d", "job-d-worker").firstWork(at(104s));
  auto pe =
      PodBuilder("ns", "e-0", "pod-e", at(10s)).workloadAnnotation("job-e").firstWork(at(105s));
  // Deleted while it waits, and collected: no Workload may find it after.
  auto pg = PodBuilder("ns", "g-0", "pod-g", at(10s)).workloadAnnotation("job-g");
  auto bystander = PodBuilder("ns", "x-0", "pod-x", at(10s)).ownedByJob("x", "job-x");
  for (auto* p : {&pa, &pb, &pc, &pd, &pe, &pg, &bystander}) h.put("c1", p->obj(), at(11s));
  h.step(at(11s));
  REQUIRE(waiting() == 7);
  // Pod e's next event names another Workload: it waits under that one's name, not its old one's.
  pe.workloadAnnotation("job-f");
  h.put("c1", pe.obj(), at(12s));
  h.remove("c1", pg.obj(), at(12s));
  h.step(at(12s));
  CHECK(waiting() == 7);

  auto admitted = [](WorkloadBuilder& w) -> WorkloadBuilder& {
    return w.podSet(1, 1).reserved("cq", at(5s)).admitted(at(5s));
  };
  WorkloadBuilder wa("ns", "job-a", "wl-a", at(0s));  // by the annotation's name
  h.put("c1", admitted(wa).obj(), at(20s));
  CHECK(waiting() == 6);
  WorkloadBuilder wb("ns", "pod-b-22222", "wl-b", at(0s));  // owned by the pod
  h.put("c1", admitted(wb.ownedByPod("b", "pod-b")).obj(), at(20s));
  CHECK(waiting() == 5);
  // By the Job uid label alone (no owner reference).
  WorkloadBuilder wc("ns", "job-c-33333", "wl-c", at(0s));
  model::Object wcObj = admitted(wc).obj();
  setValue(std::get<model::Workload>(wcObj).meta.labels, "kueue.x-k8s.io/job-uid", "job-c");
  h.put("c1", wcObj, at(20s));
  CHECK(waiting() == 4);
  // By the Job's name: the Workload names another incarnation of Job d (a worker's copy).
  WorkloadBuilder wd("ns", "job-d-44444", "wl-d", at(0s));
  h.put("c1", admitted(wd.ownedByJob("d", "job-d-manager")).obj(), at(20s));
  CHECK(waiting() == 3);
  WorkloadBuilder we("ns", "job-e", "wl-e", at(0s));  // pod e's old name
  h.put("c1", admitted(we).obj(), at(20s));
  CHECK(waiting() == 3);
  WorkloadBuilder wf("ns", "job-f", "wl-f", at(0s));
  h.put("c1", admitted(wf).obj(), at(20s));
  CHECK(waiting() == 2);
  h.step(at(200s));
  CHECK(h.milestone("wl-a", Milestone::FirstWork)->eventTime == at(101s));
  CHECK(h.milestone("wl-b", Milestone::FirstWork)->eventTime == at(102s));
  CHECK(h.milestone("wl-c", Milestone::FirstWork)->eventTime == at(103s));
  CHECK(h.milestone("wl-d", Milestone::FirstWork)->eventTime == at(104s));
  CHECK(h.milestone("wl-f", Milestone::FirstWork)->eventTime == at(105s));
  CHECK_FALSE(h.milestone("wl-e", Milestone::FirstWork));

  // Pod g collected (deletedRetention 1 h); then Workloads under its key and under pod e's old
  // name come (a key left behind would be read after its pod is freed: ASan's builds catch it).
  h.step(at(12s + 3700s));
  CHECK(waiting() == 1);
  pe.succeeded(at(3710s));
  h.remove("c1", pe.obj(), at(3710s));
  h.step(at(3710s + 3700s));
  WorkloadBuilder wg("ns", "job-g", "wl-g", at(7400s));
  h.put("c1", admitted(wg).obj(), at(7420s));
  WorkloadBuilder we2("ns", "job-e", "wl-e2", at(7400s));
  h.put("c1", admitted(we2).obj(), at(7420s));
  h.step(at(7420s));
  CHECK(waiting() == 1);  // the bystander
}

TEST_CASE("Useful-work signals: invalid values counted once, proxy labelled, external signals", "[engine]") {
  EngineConfig cfg = standaloneConfig("c1");
  cfg.usefulWork.readyProxy = true;
  Harness h(cfg);
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  WorkloadBuilder w1("ns", "job-x-1", "wl-x", at(0s));
  w1.ownedByJob("x", "job-x").podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  WorkloadBuilder w2("ns", "job-y-1", "wl-y", at(0s));
  w2.ownedByJob("y", "job-y").podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  WorkloadBuilder w3("ns", "job-z-1", "wl-z", at(0s));
  w3.ownedByJob("z", "job-z").podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  h.put("c1", w1.obj(), at(2s));
  h.put("c1", w2.obj(), at(2s));
  h.put("c1", w3.obj(), at(2s));
  // x: an unparsable annotation is ignored (and counted once, however often it is re-delivered);
  // the Ready proxy then stands in, labelled as a proxy.
  auto px = PodBuilder("ns", "x-0", "pod-x", at(2s)).ownedByJob("x", "job-x").scheduled("n1", at(3s))
                .running(at(10s)).ready(at(12s)).annotation("firstwork.dev/first-work-at", "soon");
  h.put("c1", px.obj(), at(13s));
  h.put("c1", px.obj(), at(14s));
  // y: an external signal (PromQL probe) that arrives before the pod does.
  h.e.onUsefulWorkSignal("c1", "ns/y-0", at(40s), "promql", at(45s));
  auto py = PodBuilder("ns", "y-0", "pod-y", at(2s)).ownedByJob("y", "job-y").scheduled("n1", at(3s)).running(at(10s));
  h.put("c1", py.obj(), at(46s));
  // z: annotation and Ready both present: the annotation is preferred.
  auto pz = PodBuilder("ns", "z-0", "pod-z", at(2s)).ownedByJob("z", "job-z").scheduled("n1", at(3s))
                .running(at(10s)).ready(at(11s)).firstWork(at(50s));
  h.put("c1", pz.obj(), at(51s));
  h.step(at(60s));
  h.relist(at(61s));
  h.step(at(61s));

  auto fx = h.milestone("wl-x", Milestone::FirstWork);
  REQUIRE(fx);
  CHECK(fx->eventTime == at(12s));
  CHECK(fx->signal == "ready_proxy");
  CHECK(fx->proxy);
  auto fy = h.milestone("wl-y", Milestone::FirstWork);
  REQUIRE(fy);
  CHECK(fy->eventTime == at(40s));
  CHECK(fy->signal == "promql");
  CHECK(fy->resource == "external");
  CHECK(fy->observedAt == at(45s));
  auto fz = h.milestone("wl-z", Milestone::FirstWork);
  REQUIRE(fz);
  CHECK(fz->eventTime == at(50s));
  CHECK(fz->signal == "annotation");
  auto stats = h.e.snapshot().stats;
  CHECK(stats.invalidSignals == 1);
  CHECK(stats.unmatchedSignals == 1);
}

TEST_CASE("A pod's workload annotation finds the Workload last seen under that name", "[engine]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  // Workload "job-a" is deleted and another is created under its name while the first is still
  // tracked (deletedRetention 1 h).
  WorkloadBuilder wa("ns", "job-a", "wl-a", at(0s));
  wa.podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  h.put("c1", wa.obj(), at(2s));
  h.remove("c1", wa.obj(), at(5s));
  WorkloadBuilder wb("ns", "job-a", "wl-b", at(6s));
  wb.podSet(1, 1).reserved("cq", at(7s)).admitted(at(7s));
  h.put("c1", wb.obj(), at(8s));
  auto p0 = PodBuilder("ns", "a-0", "pod-0", at(9s)).workloadAnnotation("job-a");
  p0.scheduled("n1", at(10s)).running(at(12s)).firstWork(at(20s));
  h.put("c1", p0.obj(), at(21s));
  h.step(at(21s));
  auto fb = h.milestone("wl-b", Milestone::FirstWork);
  REQUIRE(fb);
  CHECK(fb->eventTime == at(20s));
  CHECK_FALSE(h.milestone("wl-a", Milestone::FirstWork));
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);

  // The deleted one collected: the name still finds the Workload that has it.
  h.step(at(5s + 3700s));
  CHECK(h.e.snapshot().stats.trackedWorkloads == 1);
  auto p1 = PodBuilder("ns", "a-1", "pod-1", at(3710s)).workloadAnnotation("job-a");
  h.put("c1", p1.obj(), at(3711s));
  h.step(at(3711s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);

  // Hostile input: the uid comes back under another name. The old name finds nothing; the new
  // one finds it.
  WorkloadBuilder renamed("ns", "job-renamed", "wl-b", at(6s));
  renamed.podSet(1, 1).reserved("cq", at(7s)).admitted(at(7s));
  h.put("c1", renamed.obj(), at(3720s));
  h.put("c1", PodBuilder("ns", "a-2", "pod-2", at(3721s)).workloadAnnotation("job-a").obj(),
        at(3722s));
  h.step(at(3722s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 1);
  h.put("c1", PodBuilder("ns", "r-0", "pod-3", at(3723s)).workloadAnnotation("job-renamed").obj(),
        at(3724s));
  h.step(at(3724s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 1);
  // Deleted and collected: neither name finds anything (an entry left under the old name would
  // be read after its Workload is freed: ASan's builds catch that).
  h.remove("c1", renamed.obj(), at(3730s));
  h.step(at(3730s + 3700s));
  CHECK(h.e.snapshot().stats.trackedWorkloads == 0);
  const uint64_t unresolved = h.e.snapshot().stats.unresolvedPods;  // the Workload's pods too
  h.put("c1", PodBuilder("ns", "a-3", "pod-4", at(7440s)).workloadAnnotation("job-a").obj(),
        at(7441s));
  h.put("c1", PodBuilder("ns", "r-1", "pod-5", at(7442s)).workloadAnnotation("job-renamed").obj(),
        at(7443s));
  h.step(at(7443s));
  CHECK(h.e.snapshot().stats.unresolvedPods == unresolved + 2);
}

TEST_CASE("A new pod whose Workload's name a deleted Workload still holds waits for its own",
          "[engine]") {
  // Job a's Workload "job-a" is deleted (tracked for deletedRetention); Job a is made again, and
  // its pod arrives before its Workload (another watch stream: the order across streams is not
  // kept). The pod is not the deleted Workload's: it waits, unresolved, and joins the new one.
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  WorkloadBuilder wa("ns", "job-a", "wl-a", at(0s));
  wa.podSet(1, 1).ownedByJob("a", "job-uid-1").reserved("cq", at(1s)).admitted(at(1s));
  h.put("c1", wa.obj(), at(2s));
  auto old = PodBuilder("ns", "a-old", "pod-old", at(2s))
                 .ownedByJob("a", "job-uid-1")
                 .workloadAnnotation("job-a");
  old.scheduled("n1", at(3s)).running(at(3s)).firstWork(at(4s));
  h.put("c1", old.obj(), at(4s));
  // A pod that names its Workload by the annotation alone (no owner to find it by).
  auto plain = PodBuilder("ns", "a-plain", "pod-plain", at(2s)).workloadAnnotation("job-a");
  plain.scheduled("n1", at(3s)).running(at(3s));
  h.put("c1", plain.obj(), at(4s));
  h.step(at(4s));
  REQUIRE(h.milestone("wl-a", Milestone::FirstWork));
  h.remove("c1", wa.obj(), at(5s));
  h.step(at(5s));
  // Its next event after the Workload went: it stays with the Workload it was joined to.
  plain.ready(at(6s));
  h.put("c1", plain.obj(), at(6s));
  h.step(at(6s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);

  auto p0 = PodBuilder("ns", "a-new", "pod-new", at(9s))
                .ownedByJob("a", "job-uid-2")
                .workloadAnnotation("job-a");
  p0.scheduled("n1", at(10s)).running(at(12s)).firstWork(at(20s));
  h.put("c1", p0.obj(), at(21s));
  h.step(at(21s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 1);
  WorkloadBuilder wb("ns", "job-a", "wl-b", at(6s));
  wb.podSet(1, 1).ownedByJob("a", "job-uid-2").reserved("cq", at(7s)).admitted(at(7s));
  h.put("c1", wb.obj(), at(22s));
  h.step(at(22s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);
  auto fb = h.milestone("wl-b", Milestone::FirstWork);
  REQUIRE(fb);
  CHECK(fb->eventTime == at(20s));
  // The deleted Workload's own pod, still running, keeps its Workload at its next event.
  old.succeeded(at(23s));
  h.put("c1", old.obj(), at(24s));
  h.step(at(24s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);
}

TEST_CASE("A pod created before its deleted Workload's deletion joins it at its first event",
          "[engine]") {
  // A Workload's whole life can pass before its pods' first events come (the order across watch
  // streams is not kept: a burst's Workload stream read ahead of its pod stream). The pods are
  // the deleted Workload's if they were created before its deletion began (the deletionTimestamp
  // a Workload with finalizers carries); a pod created after it is of a Workload of that name
  // still to come, and waits.
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  // Found by the annotation alone (a worker's copy has no owner to find it by).
  WorkloadBuilder wc("ns", "job-c", "wl-c", at(0s));
  wc.podSet(2, 1).reserved("cq", at(1s)).admitted(at(1s));
  h.put("c1", wc.obj(), at(2s));
  // Found by its Job's name: the Workload is owned by another incarnation's uid of Job d (a
  // MultiKueue worker's copy names the manager's Job).
  WorkloadBuilder wd("ns", "job-d", "wl-d", at(0s));
  wd.podSet(1, 1).ownedByJob("d", "job-d-remote").reserved("cq", at(1s)).admitted(at(1s));
  h.put("c1", wd.obj(), at(2s));
  // Deleted without a deletionTimestamp (no finalizers): when its deletion began is not known.
  WorkloadBuilder we("ns", "job-e", "wl-e", at(0s));
  we.podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  h.put("c1", we.obj(), at(2s));
  h.step(at(2s));
  auto deletedAt = [](const WorkloadBuilder& b, SystemTime t) {
    model::Object o = b.obj();
    std::get<model::Workload>(o).meta.deletionTimestamp = t;
    return o;
  };
  h.remove("c1", deletedAt(wc, at(7s)), at(8s));
  h.remove("c1", deletedAt(wd, at(7s)), at(8s));
  h.remove("c1", we.obj(), at(8s));
  h.step(at(8s));

  auto c0 = PodBuilder("ns", "c-0", "pod-c0", at(2s)).workloadAnnotation("job-c");
  c0.scheduled("n1", at(3s)).running(at(3s)).firstWork(at(5s)).succeeded(at(6s));
  h.put("c1", c0.obj(), at(9s));
  auto d0 = PodBuilder("ns", "d-0", "pod-d0", at(2s)).ownedByJob("d", "job-d-local");
  d0.scheduled("n1", at(3s)).running(at(4s)).firstWork(at(6s)).succeeded(at(6s));
  h.put("c1", d0.obj(), at(9s));
  h.step(at(9s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);
  auto fc = h.milestone("wl-c", Milestone::FirstWork);
  REQUIRE(fc);
  CHECK(fc->eventTime == at(5s));
  auto fd = h.milestone("wl-d", Milestone::FirstWork);
  REQUIRE(fd);
  CHECK(fd->eventTime == at(6s));

  // Created after the deletion began (Jobs c and d made again): they wait for Workloads to come.
  auto c1 = PodBuilder("ns", "c-1", "pod-c1", at(10s)).workloadAnnotation("job-c");
  c1.scheduled("n1", at(11s));
  h.put("c1", c1.obj(), at(11s));
  auto d1 = PodBuilder("ns", "d-1", "pod-d1", at(10s)).ownedByJob("d", "job-d-local-2");
  d1.scheduled("n1", at(11s));
  h.put("c1", d1.obj(), at(11s));
  // Created in the second the deletion began: not known to be older, so it waits too.
  auto c2 = PodBuilder("ns", "c-2", "pod-c2", at(7s)).workloadAnnotation("job-c");
  h.put("c1", c2.obj(), at(11s));
  // Without a creationTimestamp (not as the API server sends a pod): not known to be older.
  auto c3 = PodBuilder("ns", "c-3", "pod-c3", SystemTime{}).workloadAnnotation("job-c");
  h.put("c1", c3.obj(), at(11s));
  // Created before Workload e was seen deleted, whose deletion's start is not known: it waits.
  auto e0 = PodBuilder("ns", "e-0", "pod-e0", at(2s)).workloadAnnotation("job-e");
  e0.scheduled("n1", at(3s)).running(at(3s)).firstWork(at(5s));
  h.put("c1", e0.obj(), at(11s));
  h.step(at(11s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 5);
  CHECK_FALSE(h.milestone("wl-e", Milestone::FirstWork));
}

TEST_CASE("External signals by namespace/name reach the pod last seen under that name", "[engine]") {
  Harness h(standaloneConfig("c1"));
  // Job x's pod "ns/x-0" runs and is deleted; a pod of Job y is then created under its name (a
  // StatefulSet-style name handed on) while the deleted one is still tracked.
  PodBuilder px = twoJobsAndPodOfX(h);
  h.remove("c1", px.obj(), at(30s));
  auto py = PodBuilder("ns", "x-0", "pod-y", at(31s)).ownedByJob("y", "job-y").scheduled("n1", at(32s)).running(at(40s));
  h.put("c1", py.obj(), at(41s));
  h.step(at(41s));
  h.e.onUsefulWorkSignal("c1", "ns/x-0", at(50s), "promql", at(51s));
  h.step(at(51s));
  auto fy = h.milestone("wl-y", Milestone::FirstWork);
  REQUIRE(fy);
  CHECK(fy->eventTime == at(50s));
  CHECK(fy->signal == "promql");
  CHECK_FALSE(h.milestone("wl-x", Milestone::FirstWork));
  CHECK(h.e.snapshot().stats.unmatchedSignals == 0);

  // The deleted pod collected (deletedRetention 1 h): the name still finds the pod that has it.
  h.step(at(30s + 3700s));
  CHECK(h.e.snapshot().stats.trackedPods == 1);
  h.e.onUsefulWorkSignal("c1", "ns/x-0", at(3740s), "promql", at(3741s));
  CHECK(h.e.snapshot().stats.unmatchedSignals == 0);
  h.e.onUsefulWorkSignal("c1", "ns/q-0", at(3740s), "promql", at(3741s));
  CHECK(h.e.snapshot().stats.unmatchedSignals == 1);

  // Hostile input: the uid comes back under another name. The old name finds nothing; the new
  // one finds it.
  auto renamed = PodBuilder("ns", "r-0", "pod-y", at(31s)).ownedByJob("y", "job-y").scheduled("n1", at(32s)).running(at(40s));
  h.put("c1", renamed.obj(), at(3750s));
  h.e.onUsefulWorkSignal("c1", "ns/x-0", at(3760s), "promql", at(3761s));
  CHECK(h.e.snapshot().stats.unmatchedSignals == 2);
  h.e.onUsefulWorkSignal("c1", "ns/r-0", at(3760s), "promql", at(3761s));
  CHECK(h.e.snapshot().stats.unmatchedSignals == 2);
  // Deleted and collected: neither name finds anything (an entry left under the old name would
  // be read after its record is freed: ASan's builds catch that).
  h.remove("c1", renamed.obj(), at(3770s));
  h.step(at(3770s + 3700s));
  CHECK(h.e.snapshot().stats.trackedPods == 0);
  h.e.onUsefulWorkSignal("c1", "ns/x-0", at(7500s), "promql", at(7501s));
  h.e.onUsefulWorkSignal("c1", "ns/r-0", at(7500s), "promql", at(7501s));
  CHECK(h.e.snapshot().stats.unmatchedSignals == 4);
}

TEST_CASE("An external signal by name is not taken by a later pod of that name", "[engine]") {
  // StatefulSet, JobSet and LeaderWorkerSet pods keep their names: a signal naming "ns/x-0"
  // from before a pod of that name was created was about an earlier one.
  Harness h(standaloneConfig("c1"));
  PodBuilder px = twoJobsAndPodOfX(h);
  h.e.onUsefulWorkSignal("c1", "ns/x-0", at(20s), "promql", at(21s));
  h.step(at(21s));
  auto fx = h.milestone("wl-x", Milestone::FirstWork);
  REQUIRE(fx);
  CHECK(fx->eventTime == at(20s));
  // The pod deleted; Job y's pod created under its name at 31 s, running from 40 s: the 20 s
  // signal is not its own.
  h.remove("c1", px.obj(), at(30s));
  auto py = PodBuilder("ns", "x-0", "pod-y", at(31s)).ownedByJob("y", "job-y").scheduled("n1", at(32s)).running(at(40s));
  h.put("c1", py.obj(), at(41s));
  h.step(at(41s));
  CHECK_FALSE(h.milestone("wl-y", Milestone::FirstWork));
  // Its own signal, later than the earlier pod's, takes that one's place and is its first work.
  h.e.onUsefulWorkSignal("c1", "ns/x-0", at(50s), "promql", at(51s));
  h.step(at(51s));
  auto fy = h.milestone("wl-y", Milestone::FirstWork);
  REQUIRE(fy);
  CHECK(fy->eventTime == at(50s));
  CHECK(fy->observedAt == at(51s));
  // And it stays its own at the pod's next event (the kept signal is the 50 s one).
  h.put("c1", py.obj(), at(60s));
  h.step(at(60s));
  CHECK(h.milestone("wl-y", Milestone::FirstWork)->eventTime == at(50s));
  CHECK(h.e.snapshot().stats.unmatchedSignals == 0);
}

TEST_CASE("An invalid signal value is counted again only after the pod showed another one", "[engine]") {
  // The last invalid values are kept per pod only while the pod shows one (PodRecord::rare):
  // a valid value in between forgets them, so the same invalid value is a new one afterwards.
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  WorkloadBuilder w("ns", "job-x-1", "wl-x", at(0s));
  w.ownedByJob("x", "job-x").podSet(1, 1).reserved("cq", at(1s)).admitted(at(1s));
  h.put("c1", w.obj(), at(2s));
  auto p = PodBuilder("ns", "x-0", "pod-x", at(2s)).ownedByJob("x", "job-x").scheduled("n1", at(3s)).running(at(10s));
  auto invalid = [&] { return h.e.snapshot().stats.invalidSignals; };
  h.put("c1", p.annotation("firstwork.dev/first-work-at", "soon").obj(), at(11s));
  CHECK(invalid() == 1);
  h.put("c1", p.obj(), at(12s));  // the same value again
  CHECK(invalid() == 1);
  h.put("c1", p.annotation("firstwork.dev/last-checkpoint-at", "never").obj(), at(13s));
  CHECK(invalid() == 2);  // a checkpoint value is its own
  h.put("c1", p.annotation("firstwork.dev/first-work-at", "later").obj(), at(14s));
  CHECK(invalid() == 3);  // another first-work value; the checkpoint one is unchanged
  h.put("c1", p.firstWork(at(15s)).checkpoint(at(15s)).obj(), at(16s));
  CHECK(invalid() == 3);
  h.step(at(16s));
  auto fw = h.milestone("wl-x", Milestone::FirstWork);
  REQUIRE(fw);
  CHECK(fw->eventTime == at(15s));  // the valid value
  h.put("c1", p.annotation("firstwork.dev/first-work-at", "later").obj(), at(17s));
  CHECK(invalid() == 4);  // seen before, but not since the valid one
  h.put("c1", p.obj(), at(18s));
  CHECK(invalid() == 4);
}

TEST_CASE("Objects of unknown clusters and unexpected kinds are counted, not used", "[engine]") {
  Harness h(standaloneConfig("c1"));
  h.e.onObject("nope", model::EventType::Added, gpuNode("n", 8, at(0s)), at(0s));
  h.e.onObject("c1", model::EventType::Added, multiKueueCluster("w9", true, at(0s)), at(0s));
  h.step(at(1s));
  auto s = h.e.snapshot();
  CHECK(s.stats.unknownCluster == 1);
  CHECK(s.stats.ignoredObjects == 1);
}

TEST_CASE("History found at startup gets milestones but no observation lag", "[engine]") {
  Harness h(standaloneConfig("c1"));
  // First LIST at +1 day: a workload created and admitted a day earlier.
  WorkloadBuilder w("ns", "job-old", "w-old", at(seconds(0)));
  w.ownedByJob("old", "job-old").podSet(1, 1).reserved("cq", at(seconds(10))).admitted(at(seconds(10)));
  h.put("c1", w.obj(), at(seconds(86400)));
  h.step(at(seconds(86400)));
  CHECK(h.milestone("w-old", Milestone::Reserved)->eventTime == at(seconds(10)));
  CHECK(h.observations(HistogramKind::ObservationLag).empty());
  // Something that happens afterwards does get its lag.
  h.put("c1", w.finished(at(seconds(86460))).obj(), at(seconds(86465)));
  h.step(at(seconds(86465)));
  auto lag = h.observations(HistogramKind::ObservationLag);
  REQUIRE(lag.size() == 1);
  CHECK(lag[0].seconds == Approx(5));
  CHECK(lag[0].resource == "workloads");
}

TEST_CASE("Malformed objects are skipped and counted, missing condition times fall back to observation", "[engine]") {
  Harness h(standaloneConfig("c1"));
  WorkloadBuilder noUid("ns", "job-broken", "", at(seconds(0)));
  h.e.onObject("c1", model::EventType::Added, noUid.obj(), at(seconds(1)));
  // A Workload whose QuotaReserved condition has no lastTransitionTime (hand-edited status).
  WorkloadBuilder w("ns", "job-untimed", "w-untimed", at(seconds(0)));
  w.ownedByJob("untimed", "job-untimed").podSet(1, 1).reserved("cq", at(seconds(5)));
  w.mutate().conditions[0].lastTransitionTime.reset();
  h.put("c1", w.obj(), at(seconds(7)));
  h.step(at(seconds(8)));
  CHECK(h.e.snapshot().stats.ignoredObjects == 1);
  auto reserved = h.milestone("w-untimed", Milestone::Reserved);
  REQUIRE(reserved);
  CHECK(reserved->eventTime == at(seconds(7)));
}

// Found by the fault soak (duplicate-dispatch): an eviction and the re-admission that undoes it,
// delivered in one batch, left no eviction behind, while the same two states in two batches did.
TEST_CASE("An eviction undone within one batch is recorded as if the batches were separate",
          "[engine]") {
  auto play = [](bool oneBatch) {
    Harness h(standaloneConfig("c1"));
    WorkloadBuilder w("ns", "job-flip", "w-flip", at(seconds(0)));
    w.ownedByJob("flip", "job-flip").podSet(1, 1).reserved("cq", at(seconds(5))).admitted(at(seconds(5)));
    h.put("c1", w.obj(), at(seconds(6)));
    h.step(at(seconds(6)));
    // At 480 s: Evicted=True (AdmissionCheck), then at once Evicted=False (re-admitted).
    w.evicted("AdmissionCheck", at(seconds(480)), "At least one admission check is false");
    h.put("c1", w.obj(), at(seconds(481)));
    if (!oneBatch) h.step(at(seconds(481)));
    w.condition(cond("Evicted", false, "QuotaReserved", at(seconds(480)),
                     "Previously: At least one admission check is false"));
    h.put("c1", w.obj(), at(seconds(481)));
    h.step(at(seconds(482)));
    return h.milestone("w-flip", Milestone::Evicted);
  };
  auto separate = play(false);
  auto together = play(true);
  REQUIRE(separate);
  REQUIRE(together);
  CHECK(separate->eventTime == at(seconds(480)));
  CHECK(together->eventTime == at(seconds(480)));
  CHECK(together->reason == "AdmissionCheck");
}

// The daemon takes a large step's outputs in parts as the engine settles (advance with a sink):
// the parts are what advance(now) returns, in order, in parts of about kOutputsPerPart.
TEST_CASE("advance with a sink hands the outputs over in parts, in the order advance returns them",
          "[engine]") {
  constexpr int kWorkloads = 600;
  auto feed = [](Harness& h) {
    h.put("c1", gpuNode("n1", 8, at(seconds(-7200))), at(seconds(-3600)));
    h.step(at(seconds(-3600)));
    for (int i = 0; i < kWorkloads; ++i) {
      const std::string n = std::to_string(i);
      WorkloadBuilder w("ns", "job-" + n, "w-" + n, at(seconds(0)));
      w.ownedByJob("job" + n, "uid-job-" + n)
          .podSet(1, 1)
          .reserved("cq", at(seconds(60)))
          .admitted(at(seconds(60)));
      h.put("c1", w.obj(), at(seconds(61)));
    }
  };
  Harness whole(standaloneConfig("c1"));
  feed(whole);
  const Outputs all = whole.step(at(seconds(62)));
  // By hand: each workload was queued (created at 0 s), reserved and admitted (60 s): three
  // milestones, their three observation lags, one queued_to_reserved stage observation, and the
  // open cycle it holds quota in: 8 outputs each, 4,800 in all.
  CHECK(all.milestones.size() == 3 * kWorkloads);
  CHECK(all.observations.size() == 4 * kWorkloads);
  CHECK(all.openCycles.size() == kWorkloads);

  Harness parted(standaloneConfig("c1"));
  feed(parted);
  std::vector<size_t> sizes;
  Outputs joined;
  parted.e.advance(at(seconds(62)), [&](Outputs&& part) {
    sizes.push_back(part.milestones.size() + part.observations.size() + part.incidents.size() +
                    part.reclaims.size() + part.duplicates.size() + part.openCycles.size() +
                    part.workerConnections.size());
    auto move = [](auto& to, auto& from) {
      to.insert(to.end(), std::make_move_iterator(from.begin()),
                std::make_move_iterator(from.end()));
    };
    move(joined.milestones, part.milestones);
    move(joined.observations, part.observations);
    move(joined.openCycles, part.openCycles);
    CHECK(part.incidents.empty());
    CHECK(part.reclaims.empty());
    CHECK(part.duplicates.empty());
  });
  // The settle that brings a part to 1,024 outputs ends it: 128 workloads of 8 each, four times
  // (4,096), then the rest at the end, 704.
  CHECK(sizes == std::vector<size_t>{1024, 1024, 1024, 1024, 704});
  auto keys = [](const auto& v) {
    std::vector<std::string> k;
    for (const auto& x : v) k.push_back(x.key);
    return k;
  };
  CHECK(keys(joined.milestones) == keys(all.milestones));
  CHECK(keys(joined.observations) == keys(all.observations));
  CHECK(keys(joined.openCycles) == keys(all.openCycles));

  // A step that produces nothing hands over no part.
  int calls = 0;
  parted.e.advance(at(seconds(63)), [&](Outputs&&) { ++calls; });
  CHECK(calls == 0);
}
