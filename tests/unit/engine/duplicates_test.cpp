#include <catch2/catch.hpp>

#include "drills.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace firstwork::testing;
using std::chrono::seconds;

namespace {

int64_t dupNow(const Snapshot& s, const std::string& cluster) {
  for (const auto& d : s.duplicatesNow) {
    if (d.cluster == cluster) return d.count;
  }
  return -1;
}

}  // namespace

TEST_CASE("A MultiKueue workload running on two workers at once is a duplicate execution", "[engine][duplicate]") {
  Harness h(multiKueueConfigFor({"w1", "w2"}));
  h.put("manager", multiKueueConfig("cfg", {"w1", "w2"}), at(seconds(-3600)));
  h.put("w1", gpuNode("a", 8, at(seconds(-7200))), at(seconds(-3600)));
  h.put("w2", gpuNode("b", 8, at(seconds(-7200))), at(seconds(-3600)));
  WorkloadBuilder m("team", "job-dup", "m-dup", at(seconds(0)));
  m.ownedByJob("dup", "job-dup").podSet(1, 1).reserved("cq", at(seconds(5))).dispatchedTo("w1", at(seconds(100)));
  h.put("manager", m.obj(), at(seconds(100)));
  // The copy on w2 was not garbage-collected (w2 was unreachable) and its job kept running.
  for (const std::string w : {"w1", "w2"}) {
    WorkloadBuilder copy("team", "job-dup", "copy-" + w, at(seconds(10)));
    copy.podSet(1, 1).remoteCopy().reserved("wcq", at(seconds(20))).admitted(at(seconds(20)));
    h.put(w, copy.obj(), at(seconds(100)));
  }
  auto p1 = PodBuilder("team", "dup-0", "pod-w1", at(seconds(110))).workloadAnnotation("job-dup").gpus(1)
                .scheduled("a", at(seconds(120))).running(at(seconds(200)));
  auto p2 = PodBuilder("team", "dup-0", "pod-w2", at(seconds(30))).workloadAnnotation("job-dup").gpus(1)
                .scheduled("b", at(seconds(40))).running(at(seconds(250)));
  h.put("w1", p1.obj(), at(seconds(201)));
  h.step(at(seconds(201)));
  CHECK(h.all.duplicates.empty());
  h.put("w2", p2.obj(), at(seconds(251)));
  h.step(at(seconds(251)));
  REQUIRE(h.all.duplicates.size() == 1);
  const auto& d = h.all.duplicates[0];
  CHECK(d.kind == DuplicateKind::Concurrent);
  CHECK(d.cluster == "w2");  // w1 won (status.clusterName)
  CHECK(d.clusters == std::vector<std::string>{"w1", "w2"});
  CHECK(d.workload.uid == "m-dup");
  CHECK(d.key == "dup/manager/m-dup/" + std::to_string(unixMs(at(seconds(0)))) + "/concurrent/w2");
  CHECK(d.eventTime == at(seconds(250)));
  auto snap = h.e.snapshot();
  CHECK(dupNow(snap, "w2") == 1);
  CHECK(dupNow(snap, "w1") == 0);
  REQUIRE(snap.duplicateExecutions.size() == 1);
  CHECK(snap.duplicateExecutions[0].count == 1);
  // Re-delivery does not count it again; the stray pod going away ends it.
  h.relist(at(seconds(300)));
  CHECK(h.step(at(seconds(300))).duplicates.empty());
  h.remove("w2", p2.obj(), at(seconds(400)));
  h.step(at(seconds(400)));
  snap = h.e.snapshot();
  CHECK(dupNow(snap, "w2") == 0);
  CHECK(snap.duplicateExecutions[0].count == 1);
}

TEST_CASE("A workload running again after it finished is a duplicate execution", "[engine][duplicate]") {
  Harness h(standaloneConfig("c1"));
  h.put("c1", gpuNode("n", 8, at(seconds(-7200))), at(seconds(-3600)));
  WorkloadBuilder w("ns", "job-once", "w-once", at(seconds(0)));
  w.ownedByJob("once", "job-once").podSet(1, 1).reserved("cq", at(seconds(5))).admitted(at(seconds(5)));
  auto pod = PodBuilder("ns", "once-0", "pod-1", at(seconds(5))).ownedByJob("once", "job-once").gpus(1)
                 .scheduled("n", at(seconds(6))).running(at(seconds(10))).firstWork(at(seconds(20)));
  h.put("c1", w.obj(), at(seconds(6)));
  h.put("c1", pod.obj(), at(seconds(21)));
  h.step(at(seconds(21)));
  h.put("c1", pod.succeeded(at(seconds(500))).obj(), at(seconds(501)));
  h.put("c1", w.finished(at(seconds(500))).obj(), at(seconds(501)));
  h.step(at(seconds(501)));
  CHECK(h.all.duplicates.empty());
  // Something restarts the job's pod after Finished.
  auto again = PodBuilder("ns", "once-0-r", "pod-2", at(seconds(600))).ownedByJob("once", "job-once").gpus(1)
                   .scheduled("n", at(seconds(601))).running(at(seconds(610)));
  h.put("c1", again.obj(), at(seconds(611)));
  h.step(at(seconds(611)));
  REQUIRE(h.all.duplicates.size() == 1);
  CHECK(h.all.duplicates[0].kind == DuplicateKind::Rerun);
  CHECK(h.all.duplicates[0].cluster == "c1");
  CHECK(h.all.duplicates[0].eventTime == at(seconds(610)));
  CHECK(dupNow(h.e.snapshot(), "c1") == 1);
}

namespace {

/// The MultiKueue duplicate drill's estate: manager Workload dispatched to w1 (the winner), a
/// worker copy on w1 and on w2 each (w2's was not garbage-collected).
void duplicateEstate(Harness& h) {
  h.put("manager", multiKueueConfig("cfg", {"w1", "w2"}), at(seconds(-3600)));
  h.put("w1", gpuNode("a", 8, at(seconds(-7200))), at(seconds(-3600)));
  h.put("w2", gpuNode("b", 8, at(seconds(-7200))), at(seconds(-3600)));
  WorkloadBuilder m("team", "job-dup", "m-dup", at(seconds(0)));
  m.ownedByJob("dup", "job-dup").podSet(1, 1).reserved("cq", at(seconds(5))).dispatchedTo("w1", at(seconds(100)));
  h.put("manager", m.obj(), at(seconds(100)));
  for (const std::string w : {"w1", "w2"}) {
    WorkloadBuilder copy("team", "job-dup", "copy-" + w, at(seconds(10)));
    copy.podSet(1, 1).remoteCopy().reserved("wcq", at(seconds(20))).admitted(at(seconds(20)));
    h.put(w, copy.obj(), at(seconds(100)));
  }
}

}  // namespace

// Found by the fault soak (duplicate-dispatch under a 410 storm on one worker): which pod the
// engine happened to see first decided whether a duplicate existed.
TEST_CASE("A duplicate execution is judged on event times, however late one worker's pods arrive",
          "[engine][duplicate]") {
  Harness h(multiKueueConfigFor({"w1", "w2"}));
  duplicateEstate(h);
  auto p1 = PodBuilder("team", "dup-0", "pod-w1", at(seconds(110))).workloadAnnotation("job-dup").gpus(1)
                .scheduled("a", at(seconds(120))).running(at(seconds(200)));
  auto p2 = PodBuilder("team", "dup-0", "pod-w2", at(seconds(30))).workloadAnnotation("job-dup").gpus(1)
                .scheduled("b", at(seconds(40))).running(at(seconds(250)));
  h.put("w1", p1.obj(), at(seconds(201)));
  h.step(at(seconds(201)));
  // w1's pod goes away (deletion observed at 400 s, no deletionTimestamp: as after a relist).
  h.remove("w1", p1.obj(), at(seconds(400)));
  h.step(at(seconds(400)));
  CHECK(h.all.duplicates.empty());
  // w2's telemetry was late: its pod, running since 250 s, is seen only at 450 s. The two ran at
  // once over [250 s, 400 s): one concurrent duplicate beginning at 250 s, not running any more.
  h.put("w2", p2.obj(), at(seconds(450)));
  h.step(at(seconds(450)));
  REQUIRE(h.all.duplicates.size() == 1);
  const auto& d = h.all.duplicates[0];
  CHECK(d.kind == DuplicateKind::Concurrent);
  CHECK(d.cluster == "w2");
  CHECK(d.clusters == std::vector<std::string>{"w1", "w2"});
  CHECK(d.eventTime == at(seconds(250)));
  CHECK(dupNow(h.e.snapshot(), "w2") == 0);
  // Seen in the other order, the same single duplicate.
  Harness g(multiKueueConfigFor({"w1", "w2"}));
  duplicateEstate(g);
  g.put("w2", p2.obj(), at(seconds(251)));
  g.step(at(seconds(251)));
  CHECK(g.all.duplicates.empty());  // w1 not seen yet: nothing to compare with
  g.put("w1", p1.obj(), at(seconds(460)));
  g.step(at(seconds(460)));
  REQUIRE(g.all.duplicates.size() == 1);
  CHECK(g.all.duplicates[0].eventTime == at(seconds(250)));
  CHECK(dupNow(g.e.snapshot(), "w2") == 1);
}

TEST_CASE("Pods that ran one after the other on two workers are not a duplicate execution",
          "[engine][duplicate]") {
  Harness h(multiKueueConfigFor({"w1", "w2"}));
  duplicateEstate(h);
  // w1's pod ran from 200 s and was deleted by 245 s (its deletionTimestamp; the deletion was
  // observed at 400 s). w2's pod started at 250 s: after, not during.
  auto p1 = PodBuilder("team", "dup-0", "pod-w1", at(seconds(110))).workloadAnnotation("job-dup").gpus(1)
                .scheduled("a", at(seconds(120))).running(at(seconds(200)));
  p1.mutate().meta.deletionTimestamp = at(seconds(245));
  auto p2 = PodBuilder("team", "dup-0", "pod-w2", at(seconds(30))).workloadAnnotation("job-dup").gpus(1)
                .scheduled("b", at(seconds(40))).running(at(seconds(250)));
  h.put("w1", p1.obj(), at(seconds(201)));
  h.remove("w1", p1.obj(), at(seconds(400)));
  h.put("w2", p2.obj(), at(seconds(450)));
  h.step(at(seconds(450)));
  CHECK(h.all.duplicates.empty());
  // Deleted later than w2's start: they did overlap, over [250 s, 300 s).
  Harness g(multiKueueConfigFor({"w1", "w2"}));
  duplicateEstate(g);
  p1.mutate().meta.deletionTimestamp = at(seconds(300));
  g.put("w1", p1.obj(), at(seconds(201)));
  g.remove("w1", p1.obj(), at(seconds(400)));
  g.put("w2", p2.obj(), at(seconds(450)));
  g.step(at(seconds(450)));
  REQUIRE(g.all.duplicates.size() == 1);
  CHECK(g.all.duplicates[0].eventTime == at(seconds(250)));
}

TEST_CASE("Pods of a worker copy keep its manager's workload observed until the manager is collected",
          "[engine]") {
  Harness h(multiKueueConfigFor({"w1"}));
  h.put("manager", multiKueueConfig("cfg", {"w1"}), at(seconds(-3600)));
  h.put("w1", gpuNode("a", 8, at(seconds(-7200))), at(seconds(-3600)));
  WorkloadBuilder m("team", "job-x", "m-x", at(seconds(0)));
  m.ownedByJob("x", "job-x").podSet(1, 1).reserved("cq", at(seconds(5))).dispatchedTo("w1", at(seconds(100)));
  h.put("manager", m.obj(), at(seconds(100)));
  WorkloadBuilder copy("team", "job-x", "copy-x", at(seconds(10)));
  copy.podSet(1, 1).remoteCopy().reserved("wcq", at(seconds(20))).admitted(at(seconds(20)));
  h.put("w1", copy.obj(), at(seconds(100)));
  PodBuilder p("team", "x-0", "pod-x", at(seconds(110)));
  p.workloadAnnotation("job-x").gpus(1).scheduled("a", at(seconds(120))).running(at(seconds(200)));
  h.put("w1", p.obj(), at(seconds(201)));
  h.step(at(seconds(201)));
  // First work on the worker's pod: the manager's open cycle is persisted with the pod event's
  // observation time (the pod reached the logical workload through the copy), not the
  // Workloads' 100 s.
  h.put("w1", p.firstWork(at(seconds(300))).obj(), at(seconds(301)));
  h.step(at(seconds(301)));
  auto open = h.openCycle("m-x");
  REQUIRE(open.has_value());
  REQUIRE(open->workSince.has_value());
  CHECK(*open->workSince == at(seconds(300)));
  CHECK(open->observedAt == at(seconds(301)));
  h.put("w1", p.checkpoint(at(seconds(400))).obj(), at(seconds(402)));
  h.step(at(seconds(402)));
  open = h.openCycle("m-x");
  REQUIRE(open.has_value());
  CHECK(open->observedAt == at(seconds(402)));

  // The manager Workload is deleted and, an hour later, collected with its logical workload; the
  // copy and its pod stay on the worker (it was unreachable). Their later events find no logical
  // workload and change nothing.
  h.remove("manager", m.obj(), at(seconds(1000)));
  h.step(at(seconds(1000)));
  h.step(at(seconds(1000 + 3700)));
  const size_t milestones = h.all.milestones.size();
  const size_t openCycles = h.all.openCycles.size();
  const size_t observations = h.all.observations.size();
  h.put("w1", p.checkpoint(at(seconds(4800))).obj(), at(seconds(4801)));
  h.put("w1", p.succeeded(at(seconds(4900))).obj(), at(seconds(4901)));
  h.step(at(seconds(4901)));
  CHECK(h.all.milestones.size() == milestones);
  CHECK(h.all.openCycles.size() == openCycles);
  CHECK(h.all.observations.size() == observations);
}
