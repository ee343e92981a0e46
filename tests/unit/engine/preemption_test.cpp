#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "firstwork/engine/preemption.hpp"
#include "firstwork/model/decode.hpp"
#include "firstwork/model/meta.hpp"

using namespace firstwork;
using namespace firstwork::engine;

namespace {

std::string readFixture(const std::string& name) {
  std::ifstream in(std::string(FIRSTWORK_TEST_FIXTURES_DIR) + "/k8s/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

model::Workload fixtureWorkload(const std::string& name) {
  auto obj = model::decodeObject(readFixture(name), model::Kind::Workload);
  REQUIRE(obj.ok());
  return std::get<model::Workload>(obj.value());
}

}  // namespace

TEST_CASE("Kueue <= v0.7 messages name the preemptor and ClusterQueue or cohort", "[engine][preemption]") {
  // pkg/scheduler/preemption/preemption.go (v0.6): "Preempted to accommodate a workload (UID: %s)
  // in the %s" with origin "ClusterQueue" (reason InClusterQueue) or "cohort" (reason InCohort).
  auto cq = parsePreemptionMessage("Preempted to accommodate a workload (UID: 0a1b) in the ClusterQueue");
  REQUIRE(cq);
  CHECK(cq->preemptorUid == "0a1b");
  CHECK(cq->jobUid.empty());
  CHECK(cq->reason == PreemptionReason::InClusterQueue);
  auto cohort = parsePreemptionMessage("Preempted to accommodate a workload (UID: 9f8e) in the cohort");
  REQUIRE(cohort);
  CHECK(cohort->preemptorUid == "9f8e");
  CHECK(cohort->reason == PreemptionReason::InCohort);
  CHECK(isReclaim(cohort->reason));
  CHECK(preemptionReasonFromCondition("InCohort") == PreemptionReason::InCohort);
}

TEST_CASE("Kueue v0.8-v0.10 messages give the reason text", "[engine][preemption]") {
  // v0.8 (#2411): "Preempted to accommodate a workload (UID: %s) due to %s".
  auto m = parsePreemptionMessage(
      "Preempted to accommodate a workload (UID: 1234) due to reclamation within the cohort while borrowing");
  REQUIRE(m);
  CHECK(m->preemptorUid == "1234");
  CHECK(m->reason == PreemptionReason::InCohortReclaimWhileBorrowing);
  CHECK(m->reasonText == "reclamation within the cohort while borrowing");
  auto r = parsePreemptionMessage("Preempted to accommodate a workload (UID: 1234) due to reclamation within the cohort");
  REQUIRE(r);
  CHECK(r->reason == PreemptionReason::InCohortReclamation);
}

TEST_CASE("Kueue v0.11+ and v0.15+ messages carry JobUID and paths", "[engine][preemption]") {
  auto m = parsePreemptionMessage(
      "Preempted to accommodate a workload (UID: aa, JobUID: bb) due to Fair Sharing within the "
      "cohort; preemptor path: /root/team-b; preemptee path: /root/team-a");
  REQUIRE(m);
  CHECK(m->preemptorUid == "aa");
  CHECK(m->jobUid == "bb");
  CHECK(m->reason == PreemptionReason::InCohortFairSharing);
  CHECK(m->preemptorPath == "/root/team-b");
  CHECK(m->preempteePath == "/root/team-a");
  // The Preempted event appends priorities after the paths.
  auto ev = parsePreemptionMessage(
      "Preempted to accommodate a workload (UID: aa, JobUID: UNKNOWN) due to UNKNOWN; preemptor "
      "path: /x; preemptee path: /y; preemptor effective priority: 10 (base: 10, boost: 0); "
      "preemptee effective priority: 0 (base: 0, boost: 0)");
  REQUIRE(ev);
  CHECK(ev->jobUid.empty());
  CHECK(ev->reason == PreemptionReason::Unknown);
  CHECK(ev->preempteePath == "/y");
}

TEST_CASE("Re-admission keeps the message behind 'Previously:'", "[engine][preemption]") {
  auto m = parsePreemptionMessage(
      "Previously: Preempted to accommodate a workload (UID: u1, JobUID: j1) due to prioritization in the ClusterQueue");
  REQUIRE(m);
  CHECK(m->previously);
  CHECK(m->preemptorUid == "u1");
  CHECK(m->reason == PreemptionReason::InClusterQueue);
  CHECK_FALSE(isReclaim(m->reason));
}

TEST_CASE("Messages that are not preemptions are rejected", "[engine][preemption]") {
  CHECK_FALSE(parsePreemptionMessage("Exceeded the PodsReady timeout default/job-a"));
  CHECK_FALSE(parsePreemptionMessage("Preempted to accommodate a workload (UID: broken"));
  CHECK_FALSE(parsePreemptionMessage(""));
  auto unknown = parsePreemptionMessage("Preempted to accommodate a workload (UID: UNKNOWN, JobUID: UNKNOWN) due to UNKNOWN");
  REQUIRE(unknown);
  CHECK(unknown->preemptorUid.empty());
}

TEST_CASE("Preemption messages of the real fixtures parse", "[engine][preemption]") {
  // Kueue docs (concepts/preemption.md, message format of v0.11-v0.14).
  auto docs = fixtureWorkload("kueue-workload-status-preempted-docs.json");
  const auto* pre = model::findCondition(docs.conditions, "Preempted");
  REQUIRE(pre != nullptr);
  auto m = parsePreemptionMessage(pre->message);
  REQUIRE(m);
  CHECK(m->preemptorUid == "5c023c28-8533-4927-b266-56bca5e310c1");
  CHECK(m->jobUid == "4548c8bd-c399-4027-bb02-6114f3a8cdeb");
  CHECK(m->reason == PreemptionReason::InClusterQueue);
  CHECK(preemptionReasonFromCondition(pre->reason) == PreemptionReason::InClusterQueue);
  CHECK(m->preemptorPath.empty());

  // v0.15+ with paths, after phase 2 (Requeued).
  auto fs = fixtureWorkload("kueue-workload-v1beta2-preempted-fairsharing-requeued-CONSTRUCTED.json");
  const auto* p2 = model::findCondition(fs.conditions, "Preempted");
  REQUIRE(p2 != nullptr);
  auto m2 = parsePreemptionMessage(p2->message);
  REQUIRE(m2);
  CHECK(m2->preemptorUid == "2a3b4c5d-6666-4e7f-8a9b-000000000006");
  CHECK(m2->jobUid == "3b4c5d6e-7777-4f8a-9b0c-000000000007");
  CHECK(m2->reason == PreemptionReason::InCohortFairSharing);
  CHECK(m2->preemptorPath == "/org-root/team-b-cq");
  CHECK(m2->preempteePath == "/org-root/team-a-cq");
  CHECK(isReclaim(preemptionReasonFromCondition(p2->reason)));
}
