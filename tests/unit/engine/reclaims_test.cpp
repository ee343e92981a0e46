#include <catch2/catch.hpp>

#include "drills.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace firstwork::testing;
using std::chrono::seconds;

namespace {

std::string ms(SystemTime t) { return std::to_string(unixMs(t)); }

// Design §5 reclaim drill on a standalone cluster with 16 GPUs (2 nodes × 8): teams A and B have
// nominal quotas of 8 each in one cohort. A runs 4 one-GPU jobs, B runs 12 (borrowing 4), each
// working since −1800 s; B's jobs checkpoint at −600 s. At 0 team A submits four one-GPU jobs
// a-1..a-4; Kueue reclaims (InCohortReclamation) b-9..b-12 at +30 s (a-k preempts b-(8+k)),
// their pods go, quota is released at +60 s, a-k are admitted at +60 s, scheduled at +70 s,
// running at +90 s and do useful work at `firstWork`.
std::vector<ScriptEvent> reclaimDrill(seconds firstWork, bool preemptorWorks = true,
                                      std::string reason = "InCohortReclamation",
                                      std::string reasonText = "reclamation within the cohort") {
  std::vector<ScriptEvent> ev;
  for (int n = 0; n < 2; ++n) {
    ev.push_back({seconds(-3600), "c1", gpuNode("node-" + std::to_string(n), 8, at(seconds(-7200)))});
  }
  ev.push_back({seconds(-3600), "c1", clusterQueue("cq-a", {}, "org", 8)});
  ev.push_back({seconds(-3600), "c1", clusterQueue("cq-b", {}, "org", 8)});
  auto running = [&](const std::string& team, int i, const std::string& cq) {
    const std::string name = "job-" + team + std::to_string(i);
    const std::string uid = team + "-run-" + std::to_string(i);
    WorkloadBuilder w(team, name, uid, at(seconds(-2400)));
    w.ownedByJob(name, "job-" + uid).queue("lq-" + team).podSet(1, 1).reserved(cq, at(seconds(-2000)))
        .admitted(at(seconds(-2000)));
    PodBuilder p(team, name + "-0", uid + "-pod", at(seconds(-2000)));
    p.ownedByJob(name, "job-" + uid).gpus(1).scheduled("node-0", at(seconds(-1990))).running(at(seconds(-1900)))
        .firstWork(at(seconds(-1800)));
    if (team == "b") p.checkpoint(at(seconds(-600)));
    ev.push_back({seconds(-1800), "c1", w.obj()});
    ev.push_back({seconds(-1800), "c1", p.obj()});
    return std::make_pair(w, p);
  };
  for (int i = 1; i <= 4; ++i) running("a", i, "cq-a");
  std::vector<std::pair<WorkloadBuilder, PodBuilder>> b;
  for (int i = 1; i <= 12; ++i) b.push_back(running("b", i, "cq-b"));
  for (int k = 1; k <= 4; ++k) {
    const std::string name = "job-new-" + std::to_string(k);
    const std::string uid = "a-new-" + std::to_string(k);
    WorkloadBuilder w("a", name, uid, at(seconds(0)));
    w.ownedByJob(name, "job-" + uid).queue("lq-a").podSet(1, 1).pending(at(seconds(1)));
    ev.push_back({seconds(1), "c1", w.obj()});
    auto& [victim, victimPod] = b[static_cast<size_t>(7 + k)];
    victim.preempted(reason, at(seconds(30)), preemptionMessage(uid, reasonText, "/org/cq-a", "/org/cq-b"));
    ev.push_back({seconds(30), "c1", victim.obj()});
    ev.push_back({seconds(55), "c1", victimPod.obj(), true});
    victim.released(at(seconds(60)));
    ev.push_back({seconds(60), "c1", victim.obj()});
    w.reserved("cq-a", at(seconds(60))).admitted(at(seconds(60)));
    ev.push_back({seconds(60), "c1", w.obj()});
    PodBuilder p("a", name + "-0", uid + "-pod", at(seconds(60)));
    p.ownedByJob(name, "job-" + uid).gpus(1).scheduled("node-1", at(seconds(70)));
    ev.push_back({seconds(70), "c1", p.obj()});
    p.running(at(seconds(90)));
    ev.push_back({seconds(90), "c1", p.obj()});
    if (preemptorWorks) {
      p.firstWork(at(firstWork));
      ev.push_back({firstWork, "c1", p.obj()});
    }
  }
  return ev;
}

Harness runReclaim(seconds firstWork, bool works = true, std::string reason = "InCohortReclamation",
                   std::string text = "reclamation within the cohort") {
  Harness h(standaloneConfig("c1"));
  play(h, reclaimDrill(firstWork, works, std::move(reason), std::move(text)), {seconds(2400)});
  return h;
}

std::string reclaimId(int k) { return "reclaim/c1/a-new-" + std::to_string(k) + "/" + ms(at(seconds(0))); }

}  // namespace

TEST_CASE("Design §5 reclaim drill: 12 min vs 3 min to first work = 36 GPU-minutes earlier access", "[engine][reclaim]") {
  Harness before = runReclaim(seconds(720));
  Harness after = runReclaim(seconds(180));
  double earlier = 0;
  for (int k = 1; k <= 4; ++k) {
    auto r1 = before.reclaim(reclaimId(k));
    auto r2 = after.reclaim(reclaimId(k));
    REQUIRE(r1);
    REQUIRE(r2);
    CHECK(r1->outcome == ReclaimOutcome::Completed);
    CHECK(r1->reason == "InCohortReclamation");
    CHECK(r1->preemptor.name == "job-new-" + std::to_string(k));
    CHECK(r1->preemptor.clusterQueue == "cq-a");
    CHECK(*r1->queuedAt == at(seconds(0)));
    // reclaim_to_first_work = P.first_work − P.queued: 720 − 0 and 180 − 0.
    CHECK(*r1->reclaimToFirstWorkSeconds == Approx(720));
    CHECK(*r2->reclaimToFirstWorkSeconds == Approx(180));
    auto o = before.observation("obs/reclaim_to_first_work/c1/a-new-" + std::to_string(k) + "/" + ms(at(seconds(0))));
    REQUIRE(o);
    CHECK(o->seconds == Approx(720));
    CHECK(o->reason == "InCohortReclamation");
    CHECK(o->clusterQueue == "cq-a");
    CHECK(o->cluster == "c1");
    // The victim b-(8+k): 1 GPU × (evicted +30 s − max(first work −1800 s, checkpoint −600 s))
    //   = 1 × (30 + 600) = 630 GPU-seconds of lost work.
    REQUIRE(r1->victims.size() == 1);
    CHECK(r1->victims[0].workload.uid == "b-run-" + std::to_string(8 + k));
    CHECK(r1->victims[0].gpus == 1);
    CHECK(*r1->victims[0].workSince == at(seconds(-600)));
    CHECK(r1->victims[0].interruptedGpuSeconds == Approx(630));
    CHECK(r1->interruptedGpuSeconds == Approx(630));
    earlier += (*r1->reclaimToFirstWorkSeconds - *r2->reclaimToFirstWorkSeconds) * 1;  // × 1 GPU
  }
  // Σ 4 jobs × 1 GPU × (720 − 180) s = 2,160 GPU-s = 36 GPU-minutes = 0.6 GPU-h (US$1.80 at US$3/GPU-h).
  CHECK(earlier == Approx(2160));
  CHECK(earlier / 60 == Approx(36));
  CHECK(earlier / 3600 * 3.0 == Approx(1.80));

  auto snap = before.e.snapshot();
  REQUIRE(snap.reclaims.size() == 1);
  CHECK(snap.reclaims[0].clusterQueue == "cq-a");
  CHECK(snap.reclaims[0].outcome == ReclaimOutcome::Completed);
  CHECK(snap.reclaims[0].count == 4);
  // Interrupted GPU-seconds counter: 4 victims × 630 = 2,520, labelled with the victims' queue.
  REQUIRE(snap.interruptedSeconds.size() == 1);
  CHECK(snap.interruptedSeconds[0].clusterQueue == "cq-b");
  CHECK(snap.interruptedSeconds[0].reason == "InCohortReclamation");
  CHECK(snap.interruptedSeconds[0].seconds == Approx(2520));
  // Each victim's eviction is a milestone with the preemptor's uid.
  auto pre = before.milestone("b-run-9", Milestone::Preempted);
  REQUIRE(pre);
  CHECK(pre->preemptorUid == "a-new-1");
  CHECK(pre->eventTime == at(seconds(30)));
}

TEST_CASE("Fair-sharing preemption is a reclaim too, relisting changes nothing", "[engine][reclaim]") {
  Harness h = runReclaim(seconds(300), true, "InCohortFairSharing", "Fair Sharing within the cohort");
  auto r = h.reclaim(reclaimId(2));
  REQUIRE(r);
  CHECK(r->reason == "InCohortFairSharing");
  CHECK(*r->reclaimToFirstWorkSeconds == Approx(300));
  const size_t records = h.all.reclaims.size();
  h.relist(at(seconds(2500)));
  CHECK(h.step(at(seconds(2500))).empty());
  CHECK(h.all.reclaims.size() == records);
}

TEST_CASE("A preemptor that never works within the budget is a failed reclaim", "[engine][reclaim]") {
  Harness h = runReclaim(seconds(0), false);
  auto r = h.reclaim(reclaimId(1));
  REQUIRE(r);
  // Budget 30 min from the first victim's eviction (+30 s): failed at +1830 s.
  CHECK(r->outcome == ReclaimOutcome::Failed);
  CHECK_FALSE(r->reclaimToFirstWorkSeconds);
  CHECK(r->observedAt == at(seconds(2400)));
  auto snap = h.e.snapshot();
  REQUIRE(snap.reclaims.size() == 1);
  CHECK(snap.reclaims[0].outcome == ReclaimOutcome::Failed);
  CHECK(snap.reclaims[0].count == 4);
}

TEST_CASE("Priority preemption inside one ClusterQueue gets no reclaim record", "[engine][reclaim]") {
  Harness h = runReclaim(seconds(300), true, "InClusterQueue", "prioritization in the ClusterQueue");
  CHECK(h.all.reclaims.empty());
  auto snap = h.e.snapshot();
  CHECK(snap.reclaims.empty());
  REQUIRE(snap.interruptedSeconds.size() == 1);
  CHECK(snap.interruptedSeconds[0].reason == "InClusterQueue");
  CHECK(snap.interruptedSeconds[0].seconds == Approx(2520));
}

TEST_CASE("A victim seen before its preemptor waits for it", "[engine][reclaim]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n", 8, at(seconds(-7200))), at(seconds(-3600)));
  WorkloadBuilder v("b", "job-v", "v", at(seconds(-100)));
  v.ownedByJob("v", "job-v").podSet(1, 2).reserved("cq-b", at(seconds(-90)))
      .preempted("InCohortReclaimWhileBorrowing", at(seconds(10)),
                 preemptionMessage("p", "reclamation within the cohort while borrowing"));
  h.put("c1", v.obj(), at(seconds(11)));
  h.step(at(seconds(11)));
  CHECK(h.all.reclaims.empty());
  WorkloadBuilder p("a", "job-p", "p", at(seconds(0)));
  p.ownedByJob("p", "job-p").podSet(1, 2).reserved("cq-a", at(seconds(20)));
  h.put("c1", p.obj(), at(seconds(21)));
  h.step(at(seconds(21)));
  auto r = h.reclaim("reclaim/c1/p/" + ms(at(seconds(0))));
  REQUIRE(r);
  CHECK(r->outcome == ReclaimOutcome::Pending);
  CHECK(r->reason == "InCohortReclaimWhileBorrowing");
  REQUIRE(r->victims.size() == 1);
  CHECK(r->victims[0].interruptedGpuSeconds == 0);  // never did useful work
  CHECK(h.e.snapshot().pendingReclaims.size() == 1);
}

namespace {

// The kill point of the restart tests: +100 s, after the victims were evicted (+30 s), their pods
// deleted (+55 s) and their quota released (+60 s), the preemptors admitted (+60 s) and running
// (+90 s), but before any preemptor's first work: every reclaim is pending.
constexpr seconds kKill{100};

// What a relist at `t` sees of `drill`: the last version of every object changed at or before
// `t`, deleted objects gone (except `lingering`, a pod uid still listed while terminating),
// followed by the drill's later events unchanged.
std::vector<ScriptEvent> restartedAt(std::vector<ScriptEvent> drill, seconds t, const std::string& lingering = {}) {
  std::stable_sort(drill.begin(), drill.end(), [](const ScriptEvent& a, const ScriptEvent& b) { return a.t < b.t; });
  std::map<std::string, ScriptEvent> last;
  std::vector<std::string> order;
  std::vector<ScriptEvent> out;
  for (const auto& e : drill) {
    if (e.t > t) {
      out.push_back(e);
      continue;
    }
    const auto& m = model::metaOf(e.obj);
    const std::string key = e.cluster + "/" + std::to_string(static_cast<int>(model::kindOf(e.obj))) + "/" + m.uid + "/" + m.name;
    if (e.remove && m.uid != lingering) {
      last.erase(key);
      continue;
    }
    if (last.find(key) == last.end()) order.push_back(key);
    ScriptEvent listed = e;
    listed.t = t;
    listed.remove = false;
    last.insert_or_assign(key, listed);
  }
  std::vector<ScriptEvent> relisted;
  for (const auto& k : order) {
    if (auto it = last.find(k); it != last.end()) relisted.push_back(it->second);
  }
  relisted.insert(relisted.end(), out.begin(), out.end());
  return relisted;
}

// Engine A of the restart tests: the drill up to the kill point.
Harness killedAt(seconds t, bool works = true) {
  Harness a(standaloneConfig("c1"));
  std::vector<ScriptEvent> before;
  for (auto& e : reclaimDrill(seconds(720), works)) {
    if (e.t <= t) before.push_back(std::move(e));
  }
  play(a, std::move(before), {});
  return a;
}

double interruptedTotal(const Snapshot& s) {
  double v = 0;
  for (const auto& x : s.interruptedSeconds) v += x.seconds;
  return v;
}

}  // namespace

TEST_CASE("A pending reclaim restored after a restart keeps its victims' lost work and completes", "[engine][restart]") {
  Harness a = killedAt(kKill);
  // Each victim b-(8+k): 1 GPU × (evicted +30 s − max(first work −1800 s, checkpoint −600 s))
  //   = 1 × 630 = 630 GPU-seconds; all four were released at +60 s, so A counted 4 × 630 = 2,520.
  CHECK(interruptedTotal(a.e.snapshot()) == Approx(2520));
  Harness b(standaloneConfig("c1"));
  for (int k = 1; k <= 4; ++k) {
    auto r = a.reclaim(reclaimId(k));
    REQUIRE(r);
    REQUIRE(r->outcome == ReclaimOutcome::Pending);
    REQUIRE(r->victims.size() == 1);
    REQUIRE(r->victims[0].interruptedGpuSeconds == Approx(630));
    if (k <= 2) {  // as restored from the store, whose bodies hold no cycle ids
      r->cycleId.clear();
      r->victims[0].cycleId.clear();
    }
    b.e.restoreReclaim(*r);
  }
  // B relists at the kill point: the victims are pending again (requeued, quota released) and
  // their pods are gone — except b-run-9's, still listed while terminating, and b-run-9 itself is
  // relisted as a workload whose job failed during the eviction (Finished +60 s, no requeue): B
  // derives its interrupted cycle, already ended, and the same figures itself, and must still not
  // count them a second time.
  std::vector<ScriptEvent> relisted = restartedAt(reclaimDrill(seconds(720)), kKill, "b-run-9-pod");
  WorkloadBuilder failed("b", "job-b9", "b-run-9", at(seconds(-2400)));
  failed.ownedByJob("job-b9", "job-b-run-9").queue("lq-b").podSet(1, 1).reserved("cq-b", at(seconds(-2000)))
      .admitted(at(seconds(-2000)))
      .preempted("InCohortReclamation", at(seconds(30)),
                 preemptionMessage("a-new-1", "reclamation within the cohort", "/org/cq-a", "/org/cq-b"))
      .finished(at(seconds(60)), "Failed");
  for (auto& e : relisted) {
    if (const auto* w = std::get_if<model::Workload>(&e.obj); w != nullptr && w->meta.uid == "b-run-9") {
      e.obj = failed.obj();
    }
  }
  play(b, std::move(relisted), {seconds(2400)});

  Harness whole = runReclaim(seconds(720));
  for (int k = 1; k <= 4; ++k) {
    INFO("reclaim " << k);
    auto want = whole.reclaim(reclaimId(k));
    auto got = b.reclaim(reclaimId(k));
    REQUIRE(want);
    REQUIRE(got);
    CHECK(got->id == want->id);
    CHECK(got->outcome == ReclaimOutcome::Completed);
    CHECK(got->outcome == want->outcome);
    CHECK(got->preemptor.uid == want->preemptor.uid);
    CHECK(got->preemptor.name == "job-new-" + std::to_string(k));
    CHECK(got->preemptor.clusterQueue == want->preemptor.clusterQueue);
    CHECK(got->cycleId == want->cycleId);
    CHECK(got->cluster == want->cluster);
    CHECK(got->reason == want->reason);
    // queued 0 s, first victim evicted +30 s, first work +720 s: reclaim_to_first_work = 720 − 0.
    CHECK(*got->queuedAt == at(seconds(0)));
    CHECK(got->startedAt == at(seconds(30)));
    CHECK(got->startedAt == want->startedAt);
    CHECK(*got->firstWorkAt == at(seconds(720)));
    REQUIRE(got->reclaimToFirstWorkSeconds);
    CHECK(*got->reclaimToFirstWorkSeconds == Approx(720));
    CHECK(*got->reclaimToFirstWorkSeconds == Approx(*want->reclaimToFirstWorkSeconds));
    REQUIRE(got->victims.size() == 1);
    REQUIRE(want->victims.size() == 1);
    const auto& gv = got->victims[0];
    const auto& wv = want->victims[0];
    CHECK(gv.workload.uid == "b-run-" + std::to_string(8 + k));
    CHECK(gv.workload.uid == wv.workload.uid);
    CHECK(gv.workload.name == wv.workload.name);
    CHECK(gv.workload.namespace_ == wv.workload.namespace_);
    CHECK(gv.workload.clusterQueue == wv.workload.clusterQueue);
    // b-run-10's cycle is not stored and gone from the objects: its restored figures have none;
    // b-run-9's ended cycle is still derivable, found by its eviction time.
    if (k == 2) CHECK(gv.cycleId.empty());
    else CHECK(gv.cycleId == wv.cycleId);
    CHECK(gv.cluster == wv.cluster);
    CHECK(gv.reason == wv.reason);
    CHECK(gv.evictedAt == at(seconds(30)));
    CHECK(gv.gpus == 1);
    REQUIRE(gv.workSince);
    CHECK(*gv.workSince == at(seconds(-600)));
    CHECK(gv.interruptedGpuSeconds == Approx(630));  // 1 GPU × (30 − (−600)) s, as above
    CHECK(gv.interruptedGpuSeconds == Approx(wv.interruptedGpuSeconds));
    CHECK(got->interruptedGpuSeconds == Approx(630));
    CHECK(got->interruptedGpuSeconds == Approx(want->interruptedGpuSeconds));
    auto o = b.observation("obs/reclaim_to_first_work/c1/a-new-" + std::to_string(k) + "/" + ms(at(seconds(0))));
    REQUIRE(o);
    CHECK(o->seconds == Approx(720));
  }
  auto snap = b.e.snapshot();
  // The completions happen in B: 4 completed reclaims for cq-a.
  REQUIRE(snap.reclaims.size() == 1);
  CHECK(snap.reclaims[0].outcome == ReclaimOutcome::Completed);
  CHECK(snap.reclaims[0].count == 4);
  // A counted the 2,520 GPU-seconds; B (whose counter starts from 0) counts none of it again,
  // not even b-run-9's, whose ended cycle and lingering pod let B derive the 630 s itself.
  CHECK(interruptedTotal(snap) == 0);
  CHECK(snap.pendingReclaims.empty());
}

TEST_CASE("A restored pending reclaim whose preemptor never works fails at startedAt + budget", "[engine][restart]") {
  Harness a = killedAt(kKill, false);
  auto restore = [&](Harness& h) {
    for (int k = 1; k <= 4; ++k) {
      auto r = a.reclaim(reclaimId(k));
      REQUIRE(r);
      REQUIRE(r->outcome == ReclaimOutcome::Pending);
      h.e.restoreReclaim(*r);
    }
  };
  // Budget 30 min from the first victim's eviction: +30 s + 1,800 s = +1,830 s.
  auto check = [](Harness& h) {
    for (int k = 1; k <= 4; ++k) {
      auto r = h.reclaim(reclaimId(k));
      REQUIRE(r);
      CHECK(r->outcome == ReclaimOutcome::Failed);
      CHECK(r->observedAt == at(seconds(1830)));
      CHECK_FALSE(r->reclaimToFirstWorkSeconds);
      CHECK(r->preemptor.name == "job-new-" + std::to_string(k));
      REQUIRE(r->victims.size() == 1);
      CHECK(r->victims[0].interruptedGpuSeconds == Approx(630));  // 1 GPU × (30 − (−600)) s
    }
    auto snap = h.e.snapshot();
    REQUIRE(snap.reclaims.size() == 1);
    CHECK(snap.reclaims[0].outcome == ReclaimOutcome::Failed);
    CHECK(snap.reclaims[0].clusterQueue == "cq-a");
    CHECK(snap.reclaims[0].count == 4);
    CHECK(interruptedTotal(snap) == 0);
  };
  SECTION("the preemptor is relisted but never does useful work") {
    Harness b(standaloneConfig("c1"));
    restore(b);
    play(b, restartedAt(reclaimDrill(seconds(720), false), kKill), {seconds(1829)});
    // Re-derived from the relisted objects with the same figures: still pending, not re-emitted.
    CHECK(b.all.reclaims.empty());
    CHECK(b.e.snapshot().pendingReclaims.size() == 4);
    b.step(at(seconds(1830)));
    check(b);
  }
  SECTION("the preemptor is never seen again") {
    Harness b(standaloneConfig("c1"));
    restore(b);
    b.step(at(kKill));
    b.step(at(seconds(1829)));
    CHECK(b.all.reclaims.empty());  // still pending: nothing changed, nothing re-emitted
    CHECK(b.e.snapshot().pendingReclaims.size() == 4);
    b.step(at(seconds(1830)));
    check(b);
  }
}

TEST_CASE("A victim released only after the restart is counted by the new process", "[engine][restart]") {
  // Killed at +40 s: victims evicted (+30 s), pods still there (deleted +55 s), quota released
  // only at +60 s, so A has not counted their lost work yet (it counts at the release).
  Harness a = killedAt(seconds(40));
  CHECK(interruptedTotal(a.e.snapshot()) == 0);
  Harness b(standaloneConfig("c1"));
  for (int k = 1; k <= 4; ++k) {
    auto r = a.reclaim(reclaimId(k));
    REQUIRE(r);
    REQUIRE(r->outcome == ReclaimOutcome::Pending);
    b.e.restoreReclaim(*r);
  }
  play(b, restartedAt(reclaimDrill(seconds(720)), seconds(40)), {seconds(2400)});
  // B sees the interrupted cycles still holding quota, then their release: it counts them,
  // 4 victims × 1 GPU × (30 − (−600)) s = 2,520 GPU-seconds — once across both processes.
  CHECK(interruptedTotal(b.e.snapshot()) == Approx(2520));
  for (int k = 1; k <= 4; ++k) {
    auto r = b.reclaim(reclaimId(k));
    REQUIRE(r);
    CHECK(r->outcome == ReclaimOutcome::Completed);
    CHECK(*r->reclaimToFirstWorkSeconds == Approx(720));  // 720 − 0
    CHECK(r->interruptedGpuSeconds == Approx(630));
  }
}

// Found by the fault soak (reclaim, seed 4251): killed between the victims' eviction and their
// release, restarted after it. The relisted victims are requeued and show only their new cycle,
// so the new process lost the evicted cycles' release, evicted_to_released and lost work; with
// the evicted cycles restored from their stored milestones it finishes them as A would have.
TEST_CASE("A cycle evicted before the restart and released after it is finished by the new process", "[engine][restart]") {
  // Killed at +40 s: victims evicted at +30 s; their pods go at +55 s and quota at +60 s.
  Harness a = killedAt(seconds(40));
  CHECK(interruptedTotal(a.e.snapshot()) == 0);
  Harness b(standaloneConfig("c1"));
  for (int k = 1; k <= 4; ++k) {
    auto r = a.reclaim(reclaimId(k));
    REQUIRE(r);
    b.e.restoreReclaim(*r);
    auto stored = a.milestones("b-run-" + std::to_string(8 + k));
    REQUIRE(!stored.empty());
    REQUIRE(!a.milestone("b-run-" + std::to_string(8 + k), Milestone::Released));
    b.e.restoreCycle(stored);
  }
  // A running cycle restored too is the relisted object's current cycle: b-run-1 keeps one
  // cycle, its milestones not emitted again.
  b.e.restoreCycle(a.milestones("b-run-1"));
  // B starts at +100 s: the victims are requeued, their pods gone.
  play(b, restartedAt(reclaimDrill(seconds(720)), kKill), {seconds(2400)});
  const std::string cycle = ms(at(seconds(-2400)));  // created −2400 s: the evicted cycle's id
  for (int k = 1; k <= 4; ++k) {
    const std::string uid = "b-run-" + std::to_string(8 + k);
    INFO(uid);
    auto rel = b.milestone(uid, Milestone::Released, 0);
    REQUIRE(rel);
    CHECK(rel->cycleId == cycle);
    CHECK(rel->eventTime == at(seconds(60)));
    CHECK(rel->reason == "PendingEvaluation");
    // Restored milestones were committed by A: not emitted again.
    CHECK(!b.milestone(uid, Milestone::Evicted, 0));
    CHECK(!b.milestone(uid, Milestone::Reserved, 0));
    // The new cycle started at the requeue (+60 s).
    auto queued = b.milestone(uid, Milestone::Queued, 1);
    REQUIRE(queued);
    CHECK(queued->eventTime == at(seconds(60)));
    // evicted_to_released = 60 − 30 = 30 s.
    auto stage = b.observation("obs/stage/evicted_to_released/c1/" + uid + "/" + cycle);
    REQUIRE(stage);
    CHECK(stage->seconds == Approx(30));
    CHECK(!b.observation("obs/stage/queued_to_reserved/c1/" + uid + "/" + cycle));
    auto r = b.reclaim(reclaimId(k));
    REQUIRE(r);
    CHECK(r->outcome == ReclaimOutcome::Completed);
    REQUIRE(r->victims.size() == 1);
    CHECK(r->victims[0].interruptedGpuSeconds == Approx(630));  // 1 GPU × (30 − (−600)) s
  }
  CHECK(b.milestones("b-run-1").empty());
  // A counted nothing (no release yet); B counts each victim once at its release, with A's figure
  // (B never sees the pods and their −600 s checkpoints): 4 × 630 = 2,520 GPU-seconds.
  CHECK(interruptedTotal(b.e.snapshot()) == Approx(2520));
}

// Found by the fault soak (reclaim-improved, seed 4248): the manager's watches were down from
// before the victims' eviction until after their release, then the daemon was killed. The next
// life saw only requeued victims: no eviction, no release, and 0 lost work, because the cycle
// the victims lost (and their checkpoints) were known only to the dead process. Their open
// cycles are now durable (OpenCycleRecord, with work-since) and restored.
TEST_CASE("An open cycle whose eviction and release happened unseen is finished after a restart", "[engine][restart]") {
  // A saw everything up to +20 s: the victims running, their checkpoints at −600 s.
  Harness a = killedAt(seconds(20));
  Harness b(standaloneConfig("c1"));
  for (int k = 1; k <= 4; ++k) {
    const std::string uid = "b-run-" + std::to_string(8 + k);
    INFO(uid);
    CHECK(!a.reclaim(reclaimId(k)));  // A never saw the preemption
    auto open = a.openCycle(uid);
    REQUIRE(open);
    CHECK(open->open);
    REQUIRE(open->workSince);
    CHECK(*open->workSince == at(seconds(-600)));  // max(first work −1800 s, checkpoint −600 s)
    b.e.restoreCycle(a.milestones(uid), open->workSince);
  }
  // B starts at +100 s: the victims were evicted (+30 s), their pods deleted (+55 s), quota
  // released and requeued (+60 s) while nobody watched.
  play(b, restartedAt(reclaimDrill(seconds(720)), kKill), {seconds(2400)});
  const std::string cycle = ms(at(seconds(-2400)));
  for (int k = 1; k <= 4; ++k) {
    const std::string uid = "b-run-" + std::to_string(8 + k);
    INFO(uid);
    for (auto [m, t] : {std::pair{Milestone::Evicted, 30}, {Milestone::Preempted, 30}, {Milestone::Released, 60}}) {
      auto got = b.milestone(uid, m, 0);
      REQUIRE(got);
      CHECK(got->cycleId == cycle);
      CHECK(got->eventTime == at(seconds(t)));
    }
    auto stage = b.observation("obs/stage/evicted_to_released/c1/" + uid + "/" + cycle);
    REQUIRE(stage);
    CHECK(stage->seconds == Approx(30));  // 60 − 30
    auto r = b.reclaim(reclaimId(k));
    REQUIRE(r);
    CHECK(r->outcome == ReclaimOutcome::Completed);
    REQUIRE(r->victims.size() == 1);
    CHECK(r->victims[0].cycleId == cycle);
    REQUIRE(r->victims[0].workSince);
    CHECK(*r->victims[0].workSince == at(seconds(-600)));
    CHECK(r->victims[0].interruptedGpuSeconds == Approx(630));  // 1 GPU × (30 − (−600)) s
    // The ended cycle's durable open record goes; the new cycle (queued +60 s) has none until
    // it is reserved.
    auto last = b.openCycle(uid);
    REQUIRE(last);
    CHECK(!last->open);
    CHECK(last->cycleId == cycle);
  }
  // B counts the lost work at the releases it now sees: 4 × 630 = 2,520 GPU-seconds.
  CHECK(interruptedTotal(b.e.snapshot()) == Approx(2520));
}
