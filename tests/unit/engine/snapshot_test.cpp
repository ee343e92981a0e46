// The snapshot's workload gauges are running totals recounted per workload when something they
// are computed from changes: each step below changes one such input and checks the gauges
// (a missed recount leaves the previous figure).
#include <catch2/catch.hpp>

#include "builders.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace firstwork::testing;
using namespace std::chrono_literals;

namespace {

using Gauges = std::map<std::tuple<std::string, std::string, WorkloadState>, int64_t>;

Gauges workloadGauges(const Snapshot& s) {
  Gauges g;
  for (const auto& w : s.workloads) g[{w.cluster, w.clusterQueue, w.state}] += w.count;
  return g;
}

std::map<std::tuple<std::string, std::string, StuckReason>, int64_t> stuckGauges(const Snapshot& s) {
  std::map<std::tuple<std::string, std::string, StuckReason>, int64_t> g;
  for (const auto& w : s.stuck) g[{w.cluster, w.clusterQueue, w.reason}] += w.count;
  return g;
}

}  // namespace

TEST_CASE("Workload gauges follow every change of a workload's state, queue and stuck verdict",
          "[engine][snapshot]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  h.step(at(-3600s));

  // A waits in LocalQueue lq-a; nothing says yet which ClusterQueue that is.
  WorkloadBuilder a("ns", "job-a-1", "wl-a", at(0s));
  a.queue("lq-a").ownedByJob("a", "job-a").podSet(1, 1).pending(at(0s));
  h.put("c1", a.obj(), at(1s));
  h.step(at(1s));
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "", WorkloadState::Queued}, 1}});

  // B, in the same LocalQueue, is reserved in cq-a: A (not touched itself) now counts under cq-a
  // as well, as a full recount would say.
  WorkloadBuilder b("ns", "job-b-1", "wl-b", at(10s));
  b.queue("lq-a").ownedByJob("b", "job-b").podSet(1, 1).reserved("cq-a", at(20s));
  h.put("c1", b.obj(), at(21s));
  h.step(at(21s));
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "cq-a", WorkloadState::Queued}, 1},
                                                 {{"c1", "cq-a", WorkloadState::Reserved}, 1}});

  // B admitted, its pod running, then useful work: reserved → running → productive.
  PodBuilder bp("ns", "b-0", "pod-b", at(30s));
  bp.ownedByJob("b", "job-b").gpus(1).scheduled("n1", at(31s)).running(at(40s));
  h.put("c1", b.admitted(at(30s)).obj(), at(41s));
  h.put("c1", bp.obj(), at(41s));
  h.step(at(41s));
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "cq-a", WorkloadState::Queued}, 1},
                                                 {{"c1", "cq-a", WorkloadState::Running}, 1}});
  h.put("c1", bp.firstWork(at(50s)).obj(), at(51s));
  h.step(at(51s));
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "cq-a", WorkloadState::Queued}, 1},
                                                 {{"c1", "cq-a", WorkloadState::Productive}, 1}});

  // C admitted in cq-c, its pod cannot pull its image: stuck once stuckAfter (600 s) has passed
  // since its admission at 60 s, i.e. from 660 s, by the time-driven pass alone (no event).
  WorkloadBuilder c("ns", "job-c-1", "wl-c", at(55s));
  c.queue("lq-c").ownedByJob("c", "job-c").podSet(1, 1).reserved("cq-c", at(60s)).admitted(at(60s));
  PodBuilder cp("ns", "c-0", "pod-c", at(60s));
  cp.ownedByJob("c", "job-c").gpus(1).scheduled("n1", at(61s)).waiting("ImagePullBackOff");
  h.put("c1", c.obj(), at(62s));
  h.put("c1", cp.obj(), at(62s));
  h.step(at(62s));
  CHECK(stuckGauges(h.e.snapshot()).empty());
  h.step(at(659s));
  CHECK(stuckGauges(h.e.snapshot()).empty());
  h.step(at(661s));
  auto snap = h.e.snapshot();
  CHECK(stuckGauges(snap) ==
        std::map<std::tuple<std::string, std::string, StuckReason>, int64_t>{
            {{"c1", "cq-c", StuckReason::ImagePull}, 1}});
  CHECK(workloadGauges(snap) == Gauges{{{"c1", "cq-a", WorkloadState::Queued}, 1},
                                       {{"c1", "cq-a", WorkloadState::Productive}, 1},
                                       {{"c1", "cq-c", WorkloadState::Reserved}, 1}});

  // C deleted: gone from both gauges at once, before any step.
  h.remove("c1", c.obj(), at(700s));
  snap = h.e.snapshot();
  CHECK(stuckGauges(snap).empty());
  CHECK(workloadGauges(snap) == Gauges{{{"c1", "cq-a", WorkloadState::Queued}, 1},
                                       {{"c1", "cq-a", WorkloadState::Productive}, 1}});

  // B finished: ended cycles are not counted. A still queued.
  h.put("c1", b.finished(at(710s)).obj(), at(711s));
  h.step(at(711s));
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "cq-a", WorkloadState::Queued}, 1}});

  // A re-queued into another LocalQueue whose ClusterQueue is known: counted there.
  h.put("c1", a.queue("lq-c").obj(), at(720s));
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "cq-c", WorkloadState::Queued}, 1}});
  // D asks for devices through a claim template nobody has resolved: counted until collected.
  WorkloadBuilder d("ns", "job-d-1", "wl-d", at(730s));
  d.queue("lq-c").ownedByJob("d", "job-d").claimPodSet(1, "unknown-template").pending(at(730s));
  h.put("c1", d.obj(), at(731s));
  h.step(at(731s));
  CHECK(h.e.snapshot().stats.unresolvedClaimTemplates == 1);
  h.remove("c1", d.obj(), at(740s));
  h.step(at(740s));
  CHECK(h.e.snapshot().stats.unresolvedClaimTemplates == 1);  // deleted, still retained
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "cq-c", WorkloadState::Queued}, 1}});
  // And after the deleted workloads are collected (deletedRetention 1 h), nothing else changes.
  h.step(at(720s + 3700s));
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "cq-c", WorkloadState::Queued}, 1}});
  CHECK(h.e.snapshot().stats.unresolvedClaimTemplates == 0);
  const auto dup = h.e.snapshot().duplicatesNow;
  REQUIRE(dup.size() == 1);
  CHECK(dup[0].cluster == "c1");
  CHECK(dup[0].count == 0);
}

// A pod record points at the local Workload it is joined to (change 61). When gc collects that
// Workload while the pod is still tracked, the pod is joined to nothing (its pointer cleared: a
// dangling one is what ASan would catch at the pod's next event), its next event leaves it
// unresolved, and the Job's next Workload takes it.
TEST_CASE("A pod outlives its Workload's collection: unresolved at its next event, then taken by the "
          "Job's next Workload",
          "[engine][snapshot]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n1", 8, at(-7200s)), at(-3600s));
  h.step(at(-3600s));
  WorkloadBuilder a("ns", "job-a-1", "wl-a", at(0s));
  a.queue("lq-a").ownedByJob("a", "job-a").podSet(1, 1).reserved("cq-a", at(10s)).admitted(at(10s));
  PodBuilder p("ns", "a-0", "pod-a", at(20s));
  p.ownedByJob("a", "job-a").gpus(1).scheduled("n1", at(21s)).running(at(30s));
  h.put("c1", a.obj(), at(11s));
  h.put("c1", p.obj(), at(31s));
  h.step(at(31s));
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "cq-a", WorkloadState::Running}, 1}});
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);

  // The Workload deleted (the pod stays) and collected after deletedRetention (1 h).
  h.remove("c1", a.obj(), at(40s));
  h.step(at(40s + 3700s));
  CHECK(workloadGauges(h.e.snapshot()).empty());
  CHECK(h.e.snapshot().stats.trackedPods == 1);
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);  // until its next event
  // Its next event finds no Workload to join.
  h.put("c1", p.obj(), at(3800s));
  h.step(at(3800s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 1);
  // A new Workload of the same Job takes it: its pod is running.
  WorkloadBuilder b("ns", "job-a-2", "wl-b", at(3900s));
  b.queue("lq-a").ownedByJob("a", "job-a").podSet(1, 1).reserved("cq-a", at(3910s)).admitted(at(3910s));
  h.put("c1", b.obj(), at(3911s));
  h.step(at(3911s));
  CHECK(h.e.snapshot().stats.unresolvedPods == 0);
  CHECK(workloadGauges(h.e.snapshot()) == Gauges{{{"c1", "cq-a", WorkloadState::Running}, 1}});
}
