#include <catch2/catch.hpp>

#include <functional>

#include "drills.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace firstwork::testing;
using std::chrono::seconds;

namespace {

std::string ms(SystemTime t) { return std::to_string(unixMs(t)); }

// A job with one pod that gets its 4 GPUs through a claim from template "gpu-4".
void claimJob(std::vector<ScriptEvent>& ev, const std::string& name, const std::string& uid,
              seconds created, seconds reserved, std::optional<seconds> scheduled,
              std::optional<seconds> running, std::optional<seconds> fw) {
  WorkloadBuilder w("ml", name, uid, at(created));
  w.ownedByJob(name, "job-" + uid).queue("lq").claimPodSet(1, "gpu-4");
  ev.push_back({created, "c1", w.obj()});
  w.reserved("cq", at(reserved)).admitted(at(reserved));
  ev.push_back({reserved, "c1", w.obj()});
  PodBuilder p("ml", name + "-0", uid + "-pod", at(reserved));
  p.ownedByJob(name, "job-" + uid);
  p.mutate().claims.push_back({"gpu", "", "gpu-4", name + "-0-gpu-x7k2p"});
  ev.push_back({reserved, "c1", p.obj()});
  if (!scheduled) {
    p.unschedulable(at(reserved));
    ev.push_back({reserved, "c1", p.obj()});
    return;
  }
  p.scheduled("node-x", at(*scheduled));
  ev.push_back({*scheduled, "c1", p.obj()});
  if (running) {
    p.running(at(*running));
    ev.push_back({*running, "c1", p.obj()});
  }
  if (fw) {
    p.firstWork(at(*fw));
    ev.push_back({*fw, "c1", p.obj()});
  }
}

}  // namespace

TEST_CASE("4 of 16 GPUs in an incomplete pool: usable 12, a reservation counting on them is flagged, recovery when the pool is whole",
          "[engine][capacity]") {
  EngineConfig cfg = standaloneConfig("c1");
  cfg.claimTemplates.push_back({"ml", "gpu-4", "gpu.nvidia.com", 4});
  Harness h(cfg);
  std::vector<ScriptEvent> ev;
  // Four nodes, one DRA pool each (NVIDIA's driver publishes per-node pools). node-3's pool is
  // announced as 2 slices but only the device slice is there: incomplete, its 4 GPUs unavailable.
  for (int i = 0; i < 4; ++i) {
    std::string n = "node-" + std::to_string(i);
    ev.push_back({seconds(-3600), "c1", node(n, {}, at(seconds(-7200)))});
    ev.push_back({seconds(-3600), "c1", gpuSlice(n + "-gpus", n, n, i == 3 ? 2 : 1, 4, at(seconds(-7200)))});
  }
  // Three 4-GPU jobs reserved at −600 s, working since −300 s; a fourth reserved at +600 s while
  // the 12 usable GPUs are all held: free 12 − 12 = 0 < 4 ⇒ flagged. Its pod cannot be placed until
  // the pool is whole (second slice, a counter set, published at +1200 s); then it is scheduled at
  // +1260 s, runs at +1380 s and works at +1560 s.
  for (int i = 1; i <= 3; ++i) {
    claimJob(ev, "train-" + std::to_string(i), "w" + std::to_string(i), seconds(-900), seconds(-600),
             seconds(-590), seconds(-500), seconds(-300));
  }
  WorkloadBuilder w4("ml", "train-4", "w4", at(seconds(0)));
  w4.ownedByJob("train-4", "job-w4").queue("lq").claimPodSet(1, "gpu-4");
  ev.push_back({seconds(0), "c1", w4.obj()});
  w4.reserved("cq", at(seconds(600))).admitted(at(seconds(600)));
  ev.push_back({seconds(600), "c1", w4.obj()});
  PodBuilder p4("ml", "train-4-0", "w4-pod", at(seconds(600)));
  p4.ownedByJob("train-4", "job-w4").unschedulable(at(seconds(605)));
  ev.push_back({seconds(605), "c1", p4.obj()});
  model::ResourceSlice counters = gpuSlice("node-3-counters", "node-3", "node-3", 2, 0, at(seconds(1200)));
  counters.sharedCounters = true;
  ev.push_back({seconds(1200), "c1", counters});
  p4.scheduled("node-3", at(seconds(1260)));
  ev.push_back({seconds(1260), "c1", p4.obj()});
  p4.running(at(seconds(1380)));
  ev.push_back({seconds(1380), "c1", p4.obj()});
  p4.firstWork(at(seconds(1560)));
  ev.push_back({seconds(1560), "c1", p4.obj()});
  play(h, ev, {seconds(900), seconds(1700)});

  auto r4 = h.milestone("w4", Milestone::Reserved);
  REQUIRE(r4);
  CHECK(r4->withoutCapacity);
  for (const char* uid : {"w1", "w2", "w3"}) {
    // 12 usable: w1 sees 12 free, w2 8, w3 4 — each enough for its 4.
    REQUIRE(h.milestone(uid, Milestone::Reserved));
    CHECK_FALSE(h.milestone(uid, Milestone::Reserved)->withoutCapacity);
  }
  auto snap = h.e.snapshot();
  REQUIRE(snap.reservationsWithoutCapacity.size() == 1);
  CHECK(snap.reservationsWithoutCapacity[0].cluster == "c1");
  CHECK(snap.reservationsWithoutCapacity[0].deviceClass == "gpu.nvidia.com");
  CHECK(snap.reservationsWithoutCapacity[0].count == 1);
  // Live integrals since the first advance (−3600 s):
  //   [−900, −600)   the three jobs queued:  min(12 − 0, 12) = 12 idle     → 12 × 300 = 3,600
  //   [−600, −500)   reserved, not running:  12 pending_start             → 12 × 100 = 1,200
  //   [−500, −300)   running, no work yet:   12 starting                  → 12 × 200 = 2,400
  //   [−300, +1200)  min(12 − 12, demand) = 0: while the pool was incomplete nothing usable was
  //                  stranded (w4 waits on devices that are not there)
  //   [+1200, +1380) pool whole: min(16 − 12, 4) = 4 pending_start        → 4 × 180 = 720
  //   [+1380, +1560) 4 starting                                           → 4 × 180 = 720
  CHECK(strandedSeconds(snap, "c1", StrandedPhase::Idle) == Approx(3600));
  CHECK(strandedSeconds(snap, "c1", StrandedPhase::PendingStart) == Approx(1200 + 720));
  CHECK(strandedSeconds(snap, "c1", StrandedPhase::Starting) == Approx(2400 + 720));
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com", "usable") == 16);
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com", "unavailable") == 0);
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com", "productive") == 16);
  // reservation → first work of the flagged job: 1560 − 600 = 960 s.
  CHECK(h.observation("obs/reservation_to_first_work/c1/w4/" + ms(at(seconds(0))))->seconds == Approx(960));
}

TEST_CASE("While the pool is incomplete the missing GPUs are unavailable, not stranded", "[engine][capacity]") {
  EngineConfig cfg = standaloneConfig("c1");
  cfg.claimTemplates.push_back({"", "gpu-4", "gpu.nvidia.com", 4});
  Harness h(cfg);
  std::vector<ScriptEvent> ev;
  for (int i = 0; i < 4; ++i) {
    std::string n = "node-" + std::to_string(i);
    ev.push_back({seconds(-3600), "c1", node(n, {}, at(seconds(-7200)))});
    ev.push_back({seconds(-3600), "c1", gpuSlice(n + "-gpus", n, n, i == 3 ? 2 : 1, 4, at(seconds(-7200)))});
  }
  for (int i = 1; i <= 3; ++i) {
    claimJob(ev, "train-" + std::to_string(i), "w" + std::to_string(i), seconds(-900), seconds(-600),
             seconds(-590), seconds(-500), seconds(-300));
  }
  claimJob(ev, "train-4", "w4", seconds(0), seconds(600), std::nullopt, std::nullopt, std::nullopt);
  play(h, ev, {seconds(900)});
  auto snap = h.e.snapshot();
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com", "published") == 16);
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com", "usable") == 12);
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com", "unavailable") == 4);
  for (auto phase : {StrandedPhase::Idle, StrandedPhase::PendingStart, StrandedPhase::Starting}) {
    CHECK(strandedNow(snap, "c1", "gpu.nvidia.com", phase) == 0);
  }
  // Nominal quotas do not create devices: the flagged job is reserved and waits.
  bool reservedCounted = false;
  for (const auto& w : snap.workloads) {
    if (w.state == WorkloadState::Reserved && w.count == 1) reservedCounted = true;
  }
  CHECK(reservedCounted);
}

TEST_CASE("MIG capacity and demand are counted per profile", "[engine][capacity]") {
  Harness h(standaloneConfig("c1"));
  // Mixed strategy: a node with seven 1g.10gb and two 3g.40gb slices (extended resources), and a
  // DRA node publishing two 1g.10gb and one 2g.20gb MIG devices.
  h.put("c1", node("mig-node", {{"nvidia.com/mig-1g.10gb", 7}, {"nvidia.com/mig-3g.40gb", 2}}, at(seconds(-7200))),
        at(seconds(-3600)));
  h.put("c1", node("dra-node", {}, at(seconds(-7200))), at(seconds(-3600)));
  model::ResourceSlice migs = gpuSlice("dra-node-migs", "dra-node", "dra-node", 1, 0, at(seconds(-7200)));
  for (auto [name, profile] : {std::pair{"mig-0", "1g.10gb"}, {"mig-1", "1g.10gb"}, {"mig-2", "2g.20gb"}}) {
    model::Device d;
    d.name = name;
    d.attributes = {{"type", "mig"}, {"profile", profile}};
    migs.devices.push_back(d);
  }
  h.put("c1", migs, at(seconds(-3600)));
  h.step(at(seconds(-3600)));
  // Waiting for quota: two pods of one 1g.10gb each. Working: one pod of a 3g.40gb.
  WorkloadBuilder small("ns", "job-small", "w-small", at(seconds(0)));
  small.ownedByJob("small", "job-small").podSet(2, 1, "nvidia.com/mig-1g.10gb").pending(at(seconds(1)));
  WorkloadBuilder big("ns", "job-big", "w-big", at(seconds(0)));
  big.ownedByJob("big", "job-big").podSet(1, 1, "nvidia.com/mig-3g.40gb").reserved("cq", at(seconds(5))).admitted(at(seconds(5)));
  auto pod = PodBuilder("ns", "big-0", "big-pod", at(seconds(5))).ownedByJob("big", "job-big")
                 .gpus(1, "nvidia.com/mig-3g.40gb").scheduled("mig-node", at(seconds(6))).running(at(seconds(30)))
                 .firstWork(at(seconds(60)));
  h.put("c1", small.obj(), at(seconds(2)));
  h.put("c1", big.obj(), at(seconds(6)));
  h.put("c1", pod.obj(), at(seconds(61)));
  h.step(at(seconds(61)));
  h.step(at(seconds(121)));
  auto snap = h.e.snapshot();
  CHECK(gpusNow(snap, "c1", "nvidia.com/mig-1g.10gb", "usable") == 7);
  CHECK(gpusNow(snap, "c1", "nvidia.com/mig-3g.40gb", "usable") == 2);
  CHECK(gpusNow(snap, "c1", "nvidia.com/mig-3g.40gb", "productive") == 1);
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com/mig-1g.10gb", "usable") == 2);
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com/mig-2g.20gb", "usable") == 1);
  // 1g.10gb: min(7 − 0, 2 wanted) = 2 idle; 3g.40gb: min(2 − 1, 0) = 0. Never mixed.
  CHECK(strandedNow(snap, "c1", "nvidia.com/mig-1g.10gb", StrandedPhase::Idle) == 2);
  CHECK(strandedNow(snap, "c1", "nvidia.com/mig-3g.40gb", StrandedPhase::Idle) == 0);
  CHECK(strandedNow(snap, "c1", "nvidia.com/gpu", StrandedPhase::Idle) == 0);
  // Live integral of the 1g.10gb idle: 2 devices × (121 − 2) s.
  double idle1g = 0;
  for (const auto& s : snap.strandedSeconds) {
    if (s.deviceClass == "nvidia.com/mig-1g.10gb" && s.phase == StrandedPhase::Idle) idle1g += s.seconds;
  }
  CHECK(idle1g == Approx(2 * 121));  // demand since queued at +0 s, integrated from the first advance
}

TEST_CASE("An invalid image is reserved-but-not-productive with reason image_pull, never a platform recovery delay",
          "[engine][capacity][incident]") {
  Harness h(multiKueueConfigFor({"w1"}));
  const seconds R(600);
  std::vector<ScriptEvent> ev;
  ev.push_back({seconds(-3600), "manager", clusterQueue("cq", {"mk"})});
  ev.push_back({seconds(-3600), "manager", multiKueueCheck("mk", "cfg")});
  ev.push_back({seconds(-3600), "manager", multiKueueConfig("cfg", {"w1"})});
  ev.push_back({seconds(-3600), "manager", multiKueueCluster("w1", true, at(seconds(-7200)))});
  ev.push_back({seconds(-3600), "w1", gpuNode("node-0", 8, at(seconds(-7200)))});
  ev.push_back({seconds(0), "manager", multiKueueCluster("w1", false, at(seconds(0)))});
  ev.push_back({R, "manager", multiKueueCluster("w1", true, at(R))});
  // X: 4 GPUs, image "registry.example.com/train:lates" does not parse → InvalidImageName.
  // Y: 4 GPUs, works at R+5 min.
  for (const auto& [name, uid, bad] : {std::tuple{"job-x", "mX", true}, std::tuple{"job-y", "mY", false}}) {
    WorkloadBuilder m("team", name, uid, at(seconds(60)));
    m.ownedByJob(name, std::string("job-") + uid).podSet(1, 4).reserved("cq", at(seconds(60)))
        .check(model::CheckState::Pending, at(seconds(60)));
    ev.push_back({seconds(60), "manager", m.obj()});
    WorkloadBuilder copy("team", name, std::string(uid) + "-w1", at(R + seconds(50)));
    copy.podSet(1, 4).remoteCopy().reserved("w1-cq", at(R + seconds(55))).admitted(at(R + seconds(55)));
    ev.push_back({R + seconds(55), "w1", copy.obj()});
    m.dispatchedTo("w1", at(R + seconds(60)));
    ev.push_back({R + seconds(60), "manager", m.obj()});
    PodBuilder p("team", std::string(name) + "-0", std::string(uid) + "-pod", at(R + seconds(65)));
    p.workloadAnnotation(name).gpus(4).scheduled("node-0", at(R + seconds(120)));
    if (bad) {
      p.waiting("InvalidImageName");
      ev.push_back({R + seconds(120), "w1", p.obj()});
    } else {
      ev.push_back({R + seconds(120), "w1", p.obj()});
      p.running(at(R + seconds(180)));
      ev.push_back({R + seconds(180), "w1", p.obj()});
      p.firstWork(at(R + seconds(300)));
      ev.push_back({R + seconds(300), "w1", p.obj()});
    }
  }
  // R+6 min: X is not classified yet (stuckAfter 10 min after its admission at R+1 min).
  play(h, ev, {R + seconds(360)});
  const std::string id = "incident/w1/multikueue/" + ms(at(seconds(0)));
  CHECK(h.incident(id)->outcome == IncidentOutcome::Recovering);
  // R+11 min: X is stuck on its own image. Its devices leave the incident figure from its pod's
  // PodScheduled (R+2 min), so stranded on w1 was 0 from Y's first work on:
  //   [R, R+1 min)     queued 8                          → 8 × 60  = 480
  //   [R+1, R+2 min)   pending 8                         → 8 × 60  = 480
  //   [R+2, R+3 min)   min(8 − 0 − 4, 8 − 4) = 4 (Y)     → 4 × 60  = 240
  //   [R+3, R+5 min)   Y starting 4                      → 4 × 120 = 480
  //   from R+5 min     min(8 − 4 − 4, 4 − 4) = 0         → recovered at R+5 min
  //   = 1,680 GPU-seconds; the budget (30 min) does not run out on X's account.
  h.step(at(R + seconds(660)));
  auto in = h.incident(id);
  REQUIRE(in);
  CHECK(in->outcome == IncidentOutcome::Recovered);
  CHECK(*in->recoveredAt == at(R + seconds(300)));
  CHECK(in->strandedGpuSeconds == Approx(1680));
  CHECK(in->recoverySeconds.value_or(-1) == Approx(300));
  CHECK(in->excludedWorkloads == 1);
  CHECK_FALSE(h.observation("obs/reconnect_to_first_work/" + id + "/mX"));
  CHECK(h.observation("obs/reconnect_to_first_work/" + id + "/mY")->seconds == Approx(300));

  auto snap = h.e.snapshot();
  REQUIRE(snap.stuck.size() == 1);
  CHECK(snap.stuck[0].reason == StuckReason::ImagePull);
  CHECK(snap.stuck[0].cluster == "w1");
  CHECK(snap.stuck[0].clusterQueue == "cq");
  CHECK(snap.stuck[0].count == 1);
  // Live figures still show X's devices as stranded while pods are not running: pending_start.
  CHECK(strandedNow(snap, "w1", "nvidia.com/gpu", StrandedPhase::PendingStart) == 4);
  CHECK(h.milestone("mX", Milestone::Scheduled));
  CHECK_FALSE(h.milestone("mX", Milestone::Running));
  CHECK_FALSE(h.milestone("mX", Milestone::FirstWork));
  bool reserved = false;
  for (const auto& w : snap.workloads) reserved = reserved || (w.state == WorkloadState::Dispatched && w.count == 1);
  CHECK(reserved);
}

TEST_CASE("Stuck workloads are classified by reason after stuckAfter", "[engine][capacity]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(seconds(-7200))), at(seconds(-3600)));
  struct Case {
    std::string uid;
    std::function<void(PodBuilder&)> pod;
  };
  std::vector<Case> cases{
      {"crash", [](PodBuilder& p) { p.scheduled("n1", at(seconds(20))).waiting("CrashLoopBackOff").restarts(4); }},
      {"config", [](PodBuilder& p) { p.scheduled("n1", at(seconds(20))).waiting("CreateContainerConfigError"); }},
      {"unsched", [](PodBuilder& p) { p.unschedulable(at(seconds(20))); }},
      {"pending", [](PodBuilder& p) { p.scheduled("n1", at(seconds(20))); }},
      {"nowork", [](PodBuilder& p) { p.scheduled("n1", at(seconds(20))).running(at(seconds(40))); }},
  };
  for (auto& c : cases) {
    WorkloadBuilder w("ns", "job-" + c.uid, c.uid, at(seconds(0)));
    w.ownedByJob(c.uid, "job-" + c.uid).podSet(1, 1).reserved("cq", at(seconds(10))).admitted(at(seconds(10)));
    PodBuilder p("ns", c.uid + "-0", c.uid + "-pod", at(seconds(10)));
    p.ownedByJob(c.uid, "job-" + c.uid).gpus(1);
    c.pod(p);
    h.put("c1", w.obj(), at(seconds(50)));
    h.put("c1", p.obj(), at(seconds(50)));
  }
  h.step(at(seconds(50)));
  CHECK(h.e.snapshot().stuck.empty());  // 40 s after admission: not yet
  h.step(at(seconds(10 + 600)));
  std::map<StuckReason, int64_t> byReason;
  for (const auto& s : h.e.snapshot().stuck) byReason[s.reason] += s.count;
  CHECK(byReason[StuckReason::CrashLoop] == 1);
  CHECK(byReason[StuckReason::ConfigError] == 1);
  CHECK(byReason[StuckReason::Unschedulable] == 1);
  CHECK(byReason[StuckReason::PodsPending] == 1);
  CHECK(byReason[StuckReason::NoFirstWork] == 1);
}

TEST_CASE("Claim template devices are learned from a generated claim", "[engine][capacity]") {
  // The claim arrives after its pod (learned at the claim's event), or before it (learned at the
  // pod's, from the claims the inventory keeps).
  const bool claimFirst = GENERATE(false, true);
  CAPTURE(claimFirst);
  Harness h(standaloneConfig("c1"));
  h.put("c1", node("n1", {}, at(seconds(-7200))), at(seconds(-3600)));
  h.put("c1", gpuSlice("n1-gpus", "n1", "n1", 1, 8, at(seconds(-7200))), at(seconds(-3600)));
  WorkloadBuilder w("ns", "job-t", "w-t", at(seconds(0)));
  w.ownedByJob("t", "job-t").claimPodSet(1, "two-gpus").pending(at(seconds(1)));
  h.put("c1", w.obj(), at(seconds(1)));
  h.step(at(seconds(1)));
  CHECK(h.e.snapshot().stats.unresolvedClaimTemplates == 1);
  CHECK(strandedNow(h.e.snapshot(), "c1", "gpu.nvidia.com", StrandedPhase::Idle) == 0);
  // Another job of the same template: its pod's generated claim asks gpu.nvidia.com × 2.
  auto pod = PodBuilder("ns", "other-0", "other-pod", at(seconds(2))).ownedByJob("other", "job-other");
  pod.mutate().claims.push_back({"gpu", "", "two-gpus", "other-0-gpu-8sk2l"});
  model::ResourceClaim claim;
  claim.meta.name = "other-0-gpu-8sk2l";
  claim.meta.namespace_ = "ns";
  claim.meta.uid = "claim-1";
  claim.meta.annotations.emplace_back("resource.kubernetes.io/pod-claim-name", "gpu");
  claim.meta.ownerReferences.push_back({"Pod", "other-0", "other-pod"});
  claim.requests.push_back({"gpu", "gpu.nvidia.com", 2, {}, false, false});
  if (claimFirst) {
    h.put("c1", claim, at(seconds(3)));
    h.step(at(seconds(3)));
    CHECK(h.e.snapshot().stats.unresolvedClaimTemplates == 1);  // no pod names its template yet
    h.put("c1", pod.obj(), at(seconds(4)));
  } else {
    h.put("c1", pod.obj(), at(seconds(3)));
    h.put("c1", claim, at(seconds(3)));
  }
  h.step(at(seconds(4)));
  auto snap = h.e.snapshot();
  CHECK(snap.stats.unresolvedClaimTemplates == 0);
  // min(8 usable − 0, 2 wanted) = 2 idle.
  CHECK(strandedNow(snap, "c1", "gpu.nvidia.com", StrandedPhase::Idle) == 2);
  // The template is known now; what a later claim of it says replaces it for the Workloads that
  // resolve it afterwards (one resolved keeps its figures: a template's spec is immutable). One
  // more request of the class: a new Workload of it wants 2 + 1 = 3, idle 2 + 3 = 5.
  claim.requests.push_back({"gpu-extra", "gpu.nvidia.com", 1, {}, false, false});
  h.put("c1", claim, at(seconds(5)));
  auto pendingOf = [&](const std::string& job, int t) {
    WorkloadBuilder more("ns", "job-" + job, "w-" + job, at(seconds(t)));
    more.ownedByJob(job, "job-" + job).claimPodSet(1, "two-gpus").pending(at(seconds(t)));
    h.put("c1", more.obj(), at(seconds(t)));
  };
  pendingOf("u", 5);
  h.step(at(seconds(5)));
  CHECK(strandedNow(h.e.snapshot(), "c1", "gpu.nvidia.com", StrandedPhase::Idle) == 5);
  // The pod's next event (its claim unchanged) changes nothing.
  h.put("c1", pod.obj(), at(seconds(6)));
  h.step(at(seconds(6)));
  CHECK(strandedNow(h.e.snapshot(), "c1", "gpu.nvidia.com", StrandedPhase::Idle) == 5);
  // Back to the first request alone: the next Workload wants 2, idle 5 + 2 = 7 of the 8.
  claim.requests.pop_back();
  h.put("c1", claim, at(seconds(7)));
  pendingOf("v", 7);
  h.step(at(seconds(7)));
  CHECK(strandedNow(h.e.snapshot(), "c1", "gpu.nvidia.com", StrandedPhase::Idle) == 7);
  CHECK(h.e.snapshot().stats.unresolvedClaimTemplates == 0);
}

TEST_CASE("Learned claim templates no Workload or pod names any more are forgotten once the map has doubled", "[engine][capacity]") {
  // A template made for each job: its pod's generated claim teaches it. The map is swept when it
  // holds more than twice what it kept at the last sweep plus 64.
  Harness h(standaloneConfig("c1"));
  h.put("c1", node("n1", {}, at(seconds(-7200))), at(seconds(-3600)));
  auto teach = [&](int i, SystemTime t) {
    const std::string n = std::to_string(i);
    auto pod = PodBuilder("ns", "job" + n + "-0", "pod-" + n, t).ownedByJob("j" + n, "job" + n);
    pod.mutate().claims.push_back({"gpu", "", "tpl-" + n, "job" + n + "-0-gpu-x"});
    model::ResourceClaim claim;
    claim.meta.name = "job" + n + "-0-gpu-x";
    claim.meta.namespace_ = "ns";
    claim.meta.uid = "claim-" + n;
    claim.meta.annotations.emplace_back("resource.kubernetes.io/pod-claim-name", "gpu");
    claim.meta.ownerReferences.push_back({"Pod", "job" + n + "-0", "pod-" + n});
    claim.requests.push_back({"gpu", "gpu.nvidia.com", 1, {}, false, false});
    h.put("c1", pod.obj(), t);
    h.put("c1", claim, t);
    return pod;
  };
  // A Workload naming tpl-0 outlives its pod.
  WorkloadBuilder w("ns", "job0", "w-0", at(seconds(0)));
  w.ownedByJob("j0", "job0").claimPodSet(1, "tpl-0").pending(at(seconds(1)));
  h.put("c1", w.obj(), at(seconds(1)));
  std::vector<PodBuilder> pods;
  for (int i = 0; i < 65; ++i) pods.push_back(teach(i, at(seconds(2))));
  h.step(at(seconds(2)));
  // The 65th made the map 65 > 2 × 0 + 64: swept, every one named by its pod.
  CHECK(h.e.snapshot().stats.learnedClaimTemplates == 65);
  CHECK(h.e.snapshot().stats.unresolvedClaimTemplates == 0);
  // Pods 0-59 deleted and collected an hour later (deletedRetention): their templates are named
  // by nothing but tpl-0, which the Workload names.
  for (int i = 0; i < 60; ++i) h.remove("c1", pods[static_cast<size_t>(i)].obj(), at(seconds(3)));
  h.step(at(seconds(3 + 3601)));
  CHECK(h.e.snapshot().stats.learnedClaimTemplates == 65);  // nothing learned since: not swept
  // 130 more jobs: the 195th template makes 195 > 2 × 65 + 64 and sweeps. Kept: tpl-0 (its
  // Workload), tpl-60..64 (their pods) and tpl-65..194: 1 + 5 + 130 = 136.
  for (int i = 65; i < 195; ++i) teach(i, at(seconds(3700)));
  h.step(at(seconds(3700)));
  CHECK(h.e.snapshot().stats.learnedClaimTemplates == 136);
  // Kept, not learned again: a new Workload of tpl-0 resolves it at once, one of tpl-1 (forgotten)
  // does not.
  for (int i : {0, 1}) {
    const std::string n = std::to_string(i);
    WorkloadBuilder later("ns", "later" + n, "w-later-" + n, at(seconds(3701)));
    later.ownedByJob("l" + n, "later" + n).claimPodSet(1, "tpl-" + n).pending(at(seconds(3701)));
    h.put("c1", later.obj(), at(seconds(3701)));
  }
  h.step(at(seconds(3701)));
  CHECK(h.e.snapshot().stats.unresolvedClaimTemplates == 1);
}

TEST_CASE("A claim gone with its final state unknown gives its devices back, and its pod's workload looks again",
          "[engine][capacity]") {
  // The daemon's claim reflectors keep no objects (change 97): a relist that does not list a
  // claim names it by uid and the hash of its namespace/name alone; the inventory erases its
  // record as last seen, and the pods the claim named have their devices read again. Here the
  // workload's devices are known only through its pod's claim: a pre-created one, or one
  // generated for it (the pod's record keeps only the generated name's suffix: change 102).
  const bool generated = GENERATE(false, true);
  CAPTURE(generated);
  const std::string claimName = generated ? "t-0-gpu-x7k2p" : "shared-gpus";
  Harness h(standaloneConfig("c1"));
  h.put("c1", node("n1", {}, at(seconds(-7200))), at(seconds(-3600)));
  h.put("c1", gpuSlice("n1-gpus", "n1", "n1", 1, 8, at(seconds(-7200))), at(seconds(-3600)));
  WorkloadBuilder w("ns", "job-t", "w-t", at(seconds(0)));
  w.ownedByJob("t", "job-t")
      .claimPodSet(1, "")
      .reserved("cq", at(seconds(1)))
      .admitted(at(seconds(1)));
  h.put("c1", w.obj(), at(seconds(1)));
  PodBuilder pod("ns", "t-0", "t-pod", at(seconds(2)));
  pod.ownedByJob("t", "job-t");
  if (generated) {
    pod.mutate().claims.push_back({"gpu", "", "", claimName});
  } else {
    pod.mutate().claims.push_back({"gpu", claimName, "", ""});
  }
  model::ResourceClaim claim;
  claim.meta.name = claimName;
  claim.meta.namespace_ = "ns";
  claim.meta.uid = "claim-t";
  claim.requests.push_back({"gpu", "gpu.nvidia.com", 2, {}, false, false});
  claim.allocated = true;
  claim.allocations.push_back({"gpu", "gpu.nvidia.com", "n1", "gpu-0"});
  claim.allocations.push_back({"gpu", "gpu.nvidia.com", "n1", "gpu-1"});
  claim.reservedForPods.push_back("t-pod");
  h.put("c1", claim, at(seconds(3)));
  pod.scheduled("n1", at(seconds(3))).running(at(seconds(4)));
  h.put("c1", pod.obj(), at(seconds(4)));
  h.step(at(seconds(6)));
  auto snap = h.e.snapshot();
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com", "allocated") == 2);
  CHECK(snap.stats.unresolvedClaimTemplates == 0);  // the pod's claim says what it holds
  const uint64_t ignored = snap.stats.ignoredObjects;

  // Another uid, or the right uid under another name's hash: nothing held, counted.
  h.e.onDeletedUnknown("c1", model::Kind::ResourceClaim, "claim-other",
                       model::hashOf({"ns", claimName}), at(seconds(10)));
  h.e.onDeletedUnknown("c1", model::Kind::ResourceClaim, "claim-t", model::hashOf({"ns", "other"}),
                       at(seconds(10)));
  h.step(at(seconds(10)));
  snap = h.e.snapshot();
  CHECK(snap.stats.ignoredObjects == ignored + 2);
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com", "allocated") == 2);
  CHECK(snap.stats.unresolvedClaimTemplates == 0);

  // The claim itself: its devices are free, and its pod's workload, looking again, no longer
  // knows what it needs.
  h.e.onDeletedUnknown("c1", model::Kind::ResourceClaim, "claim-t",
                       model::hashOf({"ns", claimName}), at(seconds(20)));
  h.step(at(seconds(20)));
  snap = h.e.snapshot();
  CHECK(snap.stats.ignoredObjects == ignored + 2);
  CHECK(gpusNow(snap, "c1", "gpu.nvidia.com", "allocated") == 0);
  CHECK(snap.stats.unresolvedClaimTemplates == 1);
}

TEST_CASE("Inactive and never-admissible workloads are not demand", "[engine][capacity]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(seconds(-7200))), at(seconds(-3600)));
  WorkloadBuilder a("ns", "job-a", "wa", at(seconds(0)));
  a.ownedByJob("a", "job-a").podSet(1, 2).pending(at(seconds(1))).active(false);
  WorkloadBuilder b("ns", "job-b", "wb", at(seconds(0)));
  b.ownedByJob("b", "job-b").podSet(1, 2).pending(at(seconds(1)), "Misconfigured");
  WorkloadBuilder c("ns", "job-c", "wc", at(seconds(0)));
  c.ownedByJob("c", "job-c").podSet(1, 3).pending(at(seconds(1)));
  for (auto* w : {&a, &b, &c}) h.put("c1", w->obj(), at(seconds(2)));
  h.step(at(seconds(2)));
  CHECK(strandedNow(h.e.snapshot(), "c1", "nvidia.com/gpu", StrandedPhase::Idle) == 3);
}
