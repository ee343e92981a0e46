// GPU sharing modes in the capacity ledger (issue #9): shares and the GPUs behind them, MIG
// fragmentation, and per-unit incident figures on a mixed estate. Every expected figure is worked
// out by hand from the definitions in design §5 and docs/metrics.md (comments next to each check).
#include <catch2/catch.hpp>

#include "drills.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace firstwork::testing;
using std::chrono::seconds;

namespace {

/// A Ready node with GPU feature discovery labels.
model::Node labelledNode(std::string name, std::vector<std::pair<std::string, int64_t>> allocatable,
                         std::vector<std::pair<std::string, std::string>> labels) {
  model::Node n = node(std::move(name), std::move(allocatable), at(seconds(-7200)));
  for (auto& [k, v] : labels) n.meta.labels.emplace_back(std::move(k), std::move(v));
  return n;
}

// 2 × Tesla T4 time-sliced ×4 (GFD labels as in tests/fixtures/k8s/node-gpu-time-slicing-CONSTRUCTED.json).
model::Node timeSlicedNode(std::string name) {
  return labelledNode(std::move(name), {{"nvidia.com/gpu", 8}},
                      {{"nvidia.com/gpu.count", "2"},
                       {"nvidia.com/gpu.product", "Tesla-T4-SHARED"},
                       {"nvidia.com/gpu.replicas", "4"},
                       {"nvidia.com/gpu.sharing-strategy", "time-slicing"}});
}

// One A100-SXM4-80GB in MIG mixed strategy as 7 × 1g.10gb.
model::Node migMixedNode(std::string name) {
  return labelledNode(std::move(name), {{"nvidia.com/mig-1g.10gb", 7}},
                      {{"nvidia.com/mig.strategy", "mixed"},
                       {"nvidia.com/gpu.count", "1"},
                       {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                       {"nvidia.com/gpu.replicas", "0"},
                       {"nvidia.com/mig-1g.10gb.count", "7"},
                       {"nvidia.com/mig-1g.10gb.product", "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"},
                       {"nvidia.com/mig-1g.10gb.replicas", "1"}});
}

double strandedTotal(const Snapshot& s, const std::string& cluster, const std::string& cls,
                     const std::string& unit, StrandedPhase phase) {
  double v = 0;
  for (const auto& x : s.strandedSeconds) {
    if (x.cluster == cluster && x.deviceClass == cls && x.unit == unit && x.phase == phase) v += x.seconds;
  }
  return v;
}

int64_t strandedGauge(const Snapshot& s, const std::string& cluster, const std::string& cls,
                      const std::string& unit, StrandedPhase phase) {
  for (const auto& x : s.stranded) {
    if (x.cluster == cluster && x.deviceClass == cls && x.unit == unit && x.phase == phase) return x.gpus;
  }
  return 0;
}

std::optional<int64_t> gpuGauge(const Snapshot& s, const std::string& cluster, const std::string& cls,
                                const std::string& unit, const std::string& state) {
  for (const auto& x : s.gpus) {
    if (x.cluster == cluster && x.deviceClass == cls && x.unit == unit && x.state == state) return x.gpus;
  }
  return std::nullopt;
}

/// A standalone job: one podset of `pods` pods × `perPod` of `resource`.
WorkloadBuilder standaloneJob(const std::string& name, const std::string& uid, seconds created,
                              int32_t pods, const std::string& resource) {
  WorkloadBuilder w("ml", name, uid, at(created));
  w.ownedByJob(name, "job-" + uid).queue("lq").podSet(pods, 1, resource);
  return w;
}

PodBuilder jobPod(const std::string& job, const std::string& uid, int i, seconds created,
                  const std::string& resource) {
  PodBuilder p("ml", job + "-" + std::to_string(i), uid + "-pod-" + std::to_string(i), at(created));
  p.ownedByJob(job, "job-" + uid).gpus(1, resource);
  return p;
}

}  // namespace

TEST_CASE("a node with 2 GPUs time-sliced x4 reports 2 GPUs and 8 shares, never 8 GPUs, one productive tenant makes a GPU productive",
          "[engine][sharing]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", timeSlicedNode("ts-0"), at(seconds(-3600)));
  h.step(at(seconds(-3600)));
  // A: one pod asking for one nvidia.com/gpu; created 0, reserved 30, bound to ts-0 at 40,
  // running 50, first work 60. B: three such pods, created 120, waiting for quota until 420, then
  // bound to ts-0, running 450, first work 480.
  auto a = standaloneJob("a", "wa", seconds(0), 1, "nvidia.com/gpu");
  h.put("c1", a.obj(), at(seconds(0)));
  h.step(at(seconds(0)));
  a.reserved("cq", at(seconds(30))).admitted(at(seconds(30)));
  auto pa = jobPod("a", "wa", 0, seconds(30), "nvidia.com/gpu");
  h.put("c1", a.obj(), at(seconds(30)));
  h.put("c1", pa.obj(), at(seconds(30)));
  h.step(at(seconds(30)));
  pa.scheduled("ts-0", at(seconds(40)));
  h.put("c1", pa.obj(), at(seconds(40)));
  h.step(at(seconds(40)));
  pa.running(at(seconds(50)));
  h.put("c1", pa.obj(), at(seconds(50)));
  h.step(at(seconds(50)));
  pa.firstWork(at(seconds(60)));
  h.put("c1", pa.obj(), at(seconds(60)));
  h.step(at(seconds(60)));
  auto b = standaloneJob("b", "wb", seconds(120), 3, "nvidia.com/gpu").pending(at(seconds(120)));
  h.put("c1", b.obj(), at(seconds(120)));
  h.step(at(seconds(120)));
  h.step(at(seconds(300)));

  auto snap = h.e.snapshot();
  // Capacity: 8 shares of 2 physical GPUs; no whole-GPU class anywhere.
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "share", "usable") == 8);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "gpu", "usable") == 2);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "gpu", "published") == 2);
  CHECK_FALSE(gpuGauge(snap, "c1", "nvidia.com/gpu", "gpu", "usable"));
  int64_t gpus = 0;
  for (const auto& g : snap.gpus) {
    if (g.unit == "gpu" && g.state == "usable") gpus += g.gpus;
  }
  CHECK(gpus == 2);  // never 8
  // At 300: A productive on one share; B's 3 shares wait (compatible: plain nvidia.com/gpu).
  //   shares:   min(8 − 1, 3) = 3 stranded (idle)
  //   physical: productive = min(2 GPUs, 1 productive share) = 1; min(2 − 1, 3) = 1 stranded
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "share", "productive") == 1);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "gpu", "productive") == 1);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "share", "allocated") == 1);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "gpu", "allocated") == 1);
  CHECK(strandedGauge(snap, "c1", "nvidia.com/gpu.shared", "share", StrandedPhase::Idle) == 3);
  CHECK(strandedGauge(snap, "c1", "nvidia.com/gpu.shared", "gpu", StrandedPhase::Idle) == 1);
  // The whole-GPU class has the same waiting demand but no capacity: min(0 − 0, 3) = 0.
  CHECK(strandedGauge(snap, "c1", "nvidia.com/gpu", "gpu", StrandedPhase::Idle) == 0);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "share", "unusable_for_backlog") == 0);

  b.reserved("cq", at(seconds(420))).admitted(at(seconds(420)));
  h.put("c1", b.obj(), at(seconds(420)));
  std::vector<PodBuilder> pb;
  for (int i = 0; i < 3; ++i) {
    pb.push_back(jobPod("b", "wb", i, seconds(420), "nvidia.com/gpu"));
    pb.back().scheduled("ts-0", at(seconds(420)));
    h.put("c1", pb.back().obj(), at(seconds(420)));
  }
  h.step(at(seconds(420)));
  for (auto& p : pb) {
    p.running(at(seconds(450)));
    h.put("c1", p.obj(), at(seconds(450)));
  }
  h.step(at(seconds(450)));
  for (auto& p : pb) {
    p.firstWork(at(seconds(480)));
    h.put("c1", p.obj(), at(seconds(480)));
  }
  h.step(at(seconds(480)));
  h.step(at(seconds(600)));
  snap = h.e.snapshot();
  // Four productive shares on two GPUs: both GPUs productive, nothing stranded.
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "share", "productive") == 4);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "gpu", "productive") == 2);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/gpu.shared", "gpu", "allocated") == 2);  // min(2, 4)
  CHECK(strandedGauge(snap, "c1", "nvidia.com/gpu.shared", "share", StrandedPhase::Idle) == 0);
  // Live integrals (shares | GPUs behind them):
  //   [0, 30)     A waits            idle     min(8, 1) = 1 → 30    | min(2, 1) = 1 → 30
  //   [30, 50)    A reserved/bound   pending  1 × 20 = 20           | 1 × 20 = 20
  //   [50, 60)    A running          starting 1 × 10 = 10           | 1 × 10 = 10
  //   [120, 420)  B waits            idle     min(7, 3) = 3 → 900   | min(2 − 1, 3) = 1 → 300
  //   [420, 450)  B bound            pending  3 × 30 = 90           | 1 × 30 = 30
  //   [450, 480)  B running          starting 3 × 30 = 90           | 1 × 30 = 30
  //   from 480    4 productive shares ⇒ min(2, 4) = 2 productive GPUs: nothing stranded
  CHECK(strandedTotal(snap, "c1", "nvidia.com/gpu.shared", "share", StrandedPhase::Idle) == Approx(930));
  CHECK(strandedTotal(snap, "c1", "nvidia.com/gpu.shared", "share", StrandedPhase::PendingStart) == Approx(110));
  CHECK(strandedTotal(snap, "c1", "nvidia.com/gpu.shared", "share", StrandedPhase::Starting) == Approx(100));
  CHECK(strandedTotal(snap, "c1", "nvidia.com/gpu.shared", "gpu", StrandedPhase::Idle) == Approx(330));
  CHECK(strandedTotal(snap, "c1", "nvidia.com/gpu.shared", "gpu", StrandedPhase::PendingStart) == Approx(50));
  CHECK(strandedTotal(snap, "c1", "nvidia.com/gpu.shared", "gpu", StrandedPhase::Starting) == Approx(40));
  CHECK(strandedTotal(snap, "c1", "nvidia.com/gpu", "gpu", StrandedPhase::Idle) == Approx(0));
  // Productive share-seconds are counted in shares: A 1 × (600 − 60) + B 3 × (600 − 480).
  double productive = 0;
  for (const auto& g : snap.gpuSeconds) {
    if (g.deviceClass == "nvidia.com/gpu.shared" && g.state == GpuState::Productive) {
      CHECK(g.unit == "share");
      productive += g.seconds;
    }
  }
  CHECK(productive == Approx(540 + 360));
}

TEST_CASE("7 free 1g.10gb MIG instances under a 3g.40gb backlog are unusable for it, not stranded",
          "[engine][sharing][mig]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", migMixedNode("mig-0"), at(seconds(-3600)));
  h.step(at(seconds(-3600)));
  // X: two pods of nvidia.com/mig-3g.40gb, waiting for quota from 0 on (no 3g.40gb anywhere).
  auto x = standaloneJob("x", "wx", seconds(0), 2, "nvidia.com/mig-3g.40gb").pending(at(seconds(0)));
  h.put("c1", x.obj(), at(seconds(0)));
  h.step(at(seconds(0)));
  h.step(at(seconds(300)));
  auto snap = h.e.snapshot();
  // Free 7, waiting work 2 × 3g.40gb that cannot use them: unusable_for_backlog 7.
  CHECK(gpuGauge(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", "usable") == 7);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", "unusable_for_backlog") == 7);
  for (auto phase : {StrandedPhase::Idle, StrandedPhase::PendingStart, StrandedPhase::Starting,
                     StrandedPhase::Disconnected}) {
    CHECK(strandedGauge(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", phase) == 0);
    CHECK(strandedTotal(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", phase) == Approx(0));
    // The 3g.40gb class has the demand but no device: min(0, 2) = 0.
    CHECK(strandedGauge(snap, "c1", "nvidia.com/mig-3g.40gb", "mig", phase) == 0);
  }

  // Y: one 1g.10gb pod waits from 300: now some waiting work fits the free instances, so they are
  // stranded (min(7, 1) = 1 idle), not unusable; reserved and bound at 400, the 6 others are free
  // while only 3g.40gb work waits: unusable 6, and Y's instance is pending_start.
  auto y = standaloneJob("y", "wy", seconds(300), 1, "nvidia.com/mig-1g.10gb").pending(at(seconds(300)));
  h.put("c1", y.obj(), at(seconds(300)));
  h.step(at(seconds(360)));
  snap = h.e.snapshot();
  CHECK(gpuGauge(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", "unusable_for_backlog") == 0);
  CHECK(strandedGauge(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", StrandedPhase::Idle) == 1);
  y.reserved("cq", at(seconds(400))).admitted(at(seconds(400)));
  auto py = jobPod("y", "wy", 0, seconds(400), "nvidia.com/mig-1g.10gb").scheduled("mig-0", at(seconds(400)));
  h.put("c1", y.obj(), at(seconds(400)));
  h.put("c1", py.obj(), at(seconds(400)));
  h.step(at(seconds(450)));
  snap = h.e.snapshot();
  CHECK(gpuGauge(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", "unusable_for_backlog") == 6);
  CHECK(strandedGauge(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", StrandedPhase::PendingStart) == 1);
  CHECK(gpuGauge(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", "allocated") == 1);
  // Live integral of the 1g.10gb class: idle 1 × (400 − 300) = 100, pending 1 × (450 − 400) = 50.
  CHECK(strandedTotal(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", StrandedPhase::Idle) == Approx(100));
  CHECK(strandedTotal(snap, "c1", "nvidia.com/mig-1g.10gb", "mig", StrandedPhase::PendingStart) == Approx(50));
}

namespace {

// The mixed-estate reconnection drill (config/scenarios/reconnection-mixed-estate.yaml plays the
// same through the daemon). Worker w1:
//   w1-gpu-0  nvidia.com/gpu 4 (4 × H100, exclusive)
//   w1-ts-0   nvidia.com/gpu 8 (2 × T4 time-sliced ×4)        → nvidia.com/gpu.shared
//   w1-mig-0  nvidia.com/mig-1g.10gb 7 (A100, MIG mixed)
//   w1-dra-0  DRA pool of 2 MIG devices, profile 3g.40gb     → gpu.nvidia.com/mig-3g.40gb
// Kueue's connection drops at D = 60 s and comes back at R = 360 s. Submitted and reserved on the
// manager at 120 s: G 4 × 1 nvidia.com/gpu (→ w1-gpu-0), S 2 × 1 nvidia.com/gpu (→ w1-ts-0),
// M 2 pods × 1 nvidia.com/mig-1g.10gb (→ w1-mig-0), D 2 pods × 1 claim of mig.nvidia.com,
// profile 3g.40gb (→ w1-dra-0), X 1 × nvidia.com/mig-3g.40gb (no node publishes it: waits all
// along). All but X are dispatched at 390 s, pods bound at once, running at 480 s; first work:
// G 600 s, S0 540 s, S1 720 s, M 660 s, D 780 s.
constexpr seconds kR{360};

struct MixedJob {
  std::string name, uid;
  int pods;
  std::string resource;  // extended resource, or "" for the DRA claim
  std::string node;
  std::vector<seconds> firstWork;  // per pod
};

/// The drill; `draOnly` keeps only D (and no X).
std::vector<ScriptEvent> mixedEstateDrill(bool draOnly = false) {
  std::vector<ScriptEvent> ev;
  ev.push_back({seconds(-3600), "manager", clusterQueue("cq", {"mk"})});
  ev.push_back({seconds(-3600), "manager", multiKueueCheck("mk", "cfg")});
  ev.push_back({seconds(-3600), "manager", multiKueueConfig("cfg", {"w1"})});
  ev.push_back({seconds(-3600), "manager", multiKueueCluster("w1", true, at(seconds(-7200)))});
  ev.push_back({seconds(-3600), "w1",
                labelledNode("w1-gpu-0", {{"nvidia.com/gpu", 4}},
                             {{"nvidia.com/gpu.count", "4"}, {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                              {"nvidia.com/gpu.replicas", "1"}, {"nvidia.com/gpu.sharing-strategy", "none"}})});
  ev.push_back({seconds(-3600), "w1", timeSlicedNode("w1-ts-0")});
  ev.push_back({seconds(-3600), "w1", migMixedNode("w1-mig-0")});
  ev.push_back({seconds(-3600), "w1", node("w1-dra-0", {}, at(seconds(-7200)))});
  model::ResourceSlice migs = gpuSlice("w1-dra-0-gpu.nvidia.com-x2k9p", "w1-dra-0", "w1-dra-0", 1, 0,
                                       at(seconds(-7200)));
  for (int d = 0; d < 2; ++d) {
    model::Device dev;
    dev.name = "gpu-0-mig-" + std::to_string(d);
    dev.attributes = {{"type", "mig"}, {"profile", "3g.40gb"}, {"productName", "NVIDIA A100-SXM4-80GB"}};
    migs.devices.push_back(dev);
  }
  ev.push_back({seconds(-3600), "w1", migs});
  ev.push_back({seconds(60), "manager", multiKueueCluster("w1", false, at(seconds(60)))});
  ev.push_back({kR, "manager", multiKueueCluster("w1", true, at(kR))});

  std::vector<MixedJob> jobs;
  for (int i = 0; i < 4; ++i) {
    jobs.push_back({"job-g" + std::to_string(i) + "-1a2b3", "g" + std::to_string(i), 1, "nvidia.com/gpu",
                    "w1-gpu-0", {seconds(600)}});
  }
  jobs.push_back({"job-s0-4c5d6", "s0", 1, "nvidia.com/gpu", "w1-ts-0", {seconds(540)}});
  jobs.push_back({"job-s1-7e8f9", "s1", 1, "nvidia.com/gpu", "w1-ts-0", {seconds(720)}});
  jobs.push_back({"job-m-0a1b2", "m", 2, "nvidia.com/mig-1g.10gb", "w1-mig-0", {seconds(660), seconds(660)}});
  jobs.push_back({"job-d-3c4d5", "d", 2, "", "w1-dra-0", {seconds(780), seconds(780)}});
  if (draOnly) jobs.erase(jobs.begin(), jobs.end() - 1);
  for (const auto& j : jobs) {
    WorkloadBuilder m("team", j.name, j.uid, at(seconds(120)));
    m.ownedByJob(j.name.substr(4, 2), "job-" + j.uid).queue("lq");
    if (j.resource.empty()) m.claimPodSet(j.pods, "mig-3g");
    else m.podSet(j.pods, 1, j.resource);
    m.reserved("cq", at(seconds(120))).check(model::CheckState::Pending, at(seconds(120)));
    ev.push_back({seconds(120), "manager", m.obj()});
    WorkloadBuilder copy("team", j.name, j.uid + "-w1", at(seconds(385)));
    if (j.resource.empty()) copy.claimPodSet(j.pods, "mig-3g");
    else copy.podSet(j.pods, 1, j.resource);
    copy.remoteCopy().reserved("w1-cq", at(seconds(390))).admitted(at(seconds(390)));
    ev.push_back({seconds(390), "w1", copy.obj()});
    m.dispatchedTo("w1", at(seconds(390)));
    ev.push_back({seconds(390), "manager", m.obj()});
    for (int i = 0; i < j.pods; ++i) {
      const std::string podName = j.name + "-" + std::to_string(i);
      const std::string podUid = j.uid + "-pod-" + std::to_string(i);
      PodBuilder p("team", podName, podUid, at(seconds(390)));
      p.ownedByJob(j.name, "remote-job-" + j.uid).workloadAnnotation(j.name);
      if (!j.resource.empty()) {
        p.gpus(1, j.resource);
      } else {
        const std::string claimName = podName + "-gpu-k7x2p";
        p.mutate().claims.push_back({"gpu", "", "mig-3g", claimName});
        model::ResourceClaim c;
        c.meta.namespace_ = "team";
        c.meta.name = claimName;
        c.meta.uid = podUid + "-claim";
        c.meta.annotations.emplace_back("resource.kubernetes.io/pod-claim-name", "gpu");
        c.meta.ownerReferences.push_back({"Pod", podName, podUid});
        model::DeviceRequest r;
        r.name = "gpu";
        r.deviceClassName = "mig.nvidia.com";
        r.count = 1;
        r.selectors = {"device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"};
        c.requests.push_back(r);
        c.allocated = true;
        c.allocations.push_back({"gpu", "gpu.nvidia.com", "w1-dra-0", "gpu-0-mig-" + std::to_string(i)});
        c.reservedForPods.push_back(podUid);
        ev.push_back({seconds(390), "w1", c});
      }
      p.scheduled(j.node, at(seconds(390)));
      ev.push_back({seconds(390), "w1", p.obj()});
      p.running(at(seconds(480)));
      ev.push_back({seconds(480), "w1", p.obj()});
      p.firstWork(at(j.firstWork[static_cast<size_t>(i)]));
      ev.push_back({j.firstWork[static_cast<size_t>(i)], "w1", p.obj()});
    }
  }
  if (draOnly) return ev;
  WorkloadBuilder x("team", "job-x-6e7f8", "x", at(seconds(120)));
  x.ownedByJob("x", "job-x").queue("lq").podSet(1, 1, "nvidia.com/mig-3g.40gb");
  x.reserved("cq", at(seconds(120))).check(model::CheckState::Pending, at(seconds(120)));
  ev.push_back({seconds(120), "manager", x.obj()});
  return ev;
}

const IncidentClassFigures* classOf(const IncidentRecord& in, const std::string& cls) {
  for (const auto& c : in.classes) {
    if (c.deviceClass == cls) return &c;
  }
  return nullptr;
}

/// The incident's figures of `cls`, checked for unit, usable and demand at reconnection and the
/// stranded integral (in that unit).
IncidentClassFigures requireClass(const IncidentRecord& in, const std::string& cls, const std::string& unit,
                                  int64_t usable, int64_t demand, double stranded) {
  INFO("class " << cls);
  const auto* c = classOf(in, cls);
  REQUIRE(c);
  CHECK(c->unit == unit);
  CHECK(c->usable == usable);
  CHECK(c->demand == demand);
  CHECK(c->strandedSeconds == Approx(stranded));
  return *c;
}

}  // namespace

TEST_CASE("reconnection on a mixed estate reports stranded minutes per unit, each as computed by hand",
          "[engine][sharing][incident]") {
  Harness h(multiKueueConfigFor({"w1"}));
  play(h, mixedEstateDrill(), {seconds(900), seconds(1200)});
  const std::string id = "incident/w1/multikueue/" + std::to_string(unixMs(at(seconds(60))));
  auto in = h.incident(id);
  REQUIRE(in);
  CHECK(in->outcome == IncidentOutcome::Recovered);
  // Every class back to 0 stranded once D works at 780 s: recovery 780 − 360 = 420 s.
  CHECK(*in->recoveredAt == at(seconds(780)));
  CHECK(in->recoverySeconds.value_or(-1) == Approx(420));
  CHECK(*in->firstDispatchedAt == at(seconds(390)));
  CHECK(*in->firstWorkAt == at(seconds(540)));

  // nvidia.com/gpu (unit gpu, 4 usable; demand at R: G 4 + S 2 waiting plain-GPU requests):
  //   [360, 390) min(4, 6) = 4 idle → 120; [390, 480) G pending 4 → 360; [480, 600) G starting
  //   4 → 480. Σ = 960 GPU-s = 16 GPU-min. S holds shares from 390 on, not GPUs.
  const auto gpu = requireClass(*in, "nvidia.com/gpu", "gpu", 4, 6, 960);
  CHECK(gpu.unusableForBacklogSeconds == Approx(0));
  // nvidia.com/gpu.shared (unit share, 8 usable; the same 6 waiting requests are compatible):
  //   [360, 390) min(8, 6) = 6 → 180; [390, 480) S pending 2 → 180; [480, 540) S starting 2 →
  //   120; [540, 720) S0 productive, S1 starting: min(8 − 1, 1) = 1 → 180. Σ = 660 share-s.
  // The 2 GPUs behind them (one productive tenant makes a GPU productive):
  //   [360, 390) min(2, 6) = 2 → 60; [390, 480) 2 → 180; [480, 540) 2 → 120; [540, 720)
  //   productive min(2, 1) = 1, min(2 − 1, 1) = 1 → 180. Σ = 540 GPU-s = 9 GPU-min.
  // Free shares while X waits (none of it can use a share): [390, 780) 8 − 2 = 6 → 2 340.
  const auto shares = requireClass(*in, "nvidia.com/gpu.shared", "share", 8, 6, 660);
  CHECK(shares.physicalUnit == "gpu");
  CHECK(shares.physicalUsable == 2);
  CHECK(shares.physicalStrandedSeconds == Approx(540));
  CHECK(shares.unusableForBacklogSeconds == Approx(2340));
  // nvidia.com/mig-1g.10gb (unit mig, 7 usable, M wants 2):
  //   [360, 390) 2 idle → 60; [390, 480) 2 pending → 180; [480, 660) 2 starting → 360. Σ = 600.
  //   Unusable while X (3g.40gb) waits and no 1g.10gb work does: [390, 780) 7 − 2 = 5 → 1 950.
  CHECK(requireClass(*in, "nvidia.com/mig-1g.10gb", "mig", 7, 2, 600).unusableForBacklogSeconds ==
        Approx(1950));
  // gpu.nvidia.com/mig-3g.40gb (DRA, unit mig, 2 usable; D's template learned from its claims at
  // 390 resolves through the profile selector, back to its submission):
  //   [360, 390) 2 idle → 60; [390, 480) 2 pending → 180; [480, 780) 2 starting → 600. Σ = 840.
  requireClass(*in, "gpu.nvidia.com/mig-3g.40gb", "mig", 2, 2, 840);
  // X's class: demand 1, no device: min(0, 1) = 0 stranded.
  requireClass(*in, "nvidia.com/mig-3g.40gb", "mig", 0, 1, 0);
  // The headline adds whole GPUs only: never shares, MIG instances or the GPUs behind shares.
  CHECK(in->strandedGpuSeconds == Approx(960));
  CHECK(in->usableGpus == 4);
  CHECK(in->demandGpus == 6);

  // At the end: X still waits. Free 1g.10gb: 7 − 2 = 5 unusable; free shares 8 − 2 = 6.
  auto snap = h.e.snapshot();
  CHECK(gpuGauge(snap, "w1", "nvidia.com/mig-1g.10gb", "mig", "unusable_for_backlog") == 5);
  CHECK(gpuGauge(snap, "w1", "nvidia.com/gpu.shared", "share", "unusable_for_backlog") == 6);
  CHECK(gpuGauge(snap, "w1", "nvidia.com/gpu", "gpu", "unusable_for_backlog") == 0);
  CHECK(gpuGauge(snap, "w1", "gpu.nvidia.com/mig-3g.40gb", "mig", "productive") == 2);
  CHECK(gpuGauge(snap, "w1", "nvidia.com/gpu.shared", "gpu", "productive") == 2);
}

TEST_CASE("recovery is not declared while waiting work's devices are unknown, they count back to reconnection once known",
          "[engine][sharing][incident]") {
  // Only D: its devices are known from the claims its pods get at 390 s (the template is not
  // configured). At R = 360 s nothing known is stranded, but D waits for w1: the incident stays
  // open. Once D's claims are seen, its 2 gpu.nvidia.com/mig-3g.40gb count from its submission:
  //   [360, 390) 2 idle → 60; [390, 480) 2 pending → 180; [480, 780) 2 starting → 600. Σ = 840,
  //   recovered at 780 s when D works.
  Harness h(multiKueueConfigFor({"w1"}));
  play(h, mixedEstateDrill(true), {seconds(361), seconds(900)});
  const std::string id = "incident/w1/multikueue/" + std::to_string(unixMs(at(seconds(60))));
  auto in = h.incident(id);
  REQUIRE(in);
  CHECK(in->outcome == IncidentOutcome::Recovered);
  CHECK(*in->recoveredAt == at(seconds(780)));
  requireClass(*in, "gpu.nvidia.com/mig-3g.40gb", "mig", 2, 2, 840);
  // Nothing in unit gpu on this worker's incident: the whole-GPU headline stays 0.
  CHECK(in->strandedGpuSeconds == Approx(0));
}
