#include <catch2/catch.hpp>

#include "builders.hpp"
#include "firstwork/engine/stuck.hpp"
#include "firstwork/engine/useful_work.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace firstwork::testing;

TEST_CASE("The first-work annotation is the preferred signal", "[engine][signals]") {
  auto pod = PodBuilder("ns", "p", "u", at(0s)).running(at(60s)).ready(at(70s)).firstWork(at(300s));
  UsefulWorkConfig cfg;
  cfg.readyProxy = true;
  auto s = readPodSignals(pod.get(), cfg);
  REQUIRE(s.firstWork);
  CHECK(s.firstWork->kind == SignalKind::Annotation);
  CHECK(s.firstWork->at == at(300s));
  CHECK(s.firstWork->name == "annotation");
}

TEST_CASE("A configured pod condition and the Ready proxy are used only when enabled", "[engine][signals]") {
  auto pod = PodBuilder("ns", "p", "u", at(0s))
                 .running(at(60s))
                 .ready(at(70s))
                 .condition(cond("firstwork.dev/FirstWork", true, "", at(200s)));
  UsefulWorkConfig cfg;
  CHECK_FALSE(readPodSignals(pod.get(), cfg).firstWork);  // defaults: annotation only
  cfg.podConditionType = "firstwork.dev/FirstWork";
  auto c = readPodSignals(pod.get(), cfg);
  REQUIRE(c.firstWork);
  CHECK(c.firstWork->kind == SignalKind::Condition);
  CHECK(c.firstWork->at == at(200s));
  cfg.podConditionType.clear();
  cfg.readyProxy = true;
  auto r = readPodSignals(pod.get(), cfg);
  REQUIRE(r.firstWork);
  CHECK(r.firstWork->kind == SignalKind::ReadyProxy);
  CHECK(r.firstWork->name == "ready_proxy");
}

TEST_CASE("Invalid annotation values are reported, not used", "[engine][signals]") {
  auto pod = PodBuilder("ns", "p", "u", at(0s))
                 .annotation("firstwork.dev/first-work-at", "yesterday")
                 .annotation("firstwork.dev/last-checkpoint-at", "2026-05-01T10:05:00Z");
  auto s = readPodSignals(pod.get(), UsefulWorkConfig{});
  CHECK_FALSE(s.firstWork);
  CHECK(s.invalidFirstWork == "yesterday");
  REQUIRE(s.lastCheckpoint);
  CHECK(*s.lastCheckpoint == at(300s));
}

TEST_CASE("Pod stuck reasons follow the kubelet's waiting reasons", "[engine][stuck]") {
  auto base = [] { return PodBuilder("ns", "p", "u", at(0s)).scheduled("n1", at(10s)); };
  for (const char* r : {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                        "RegistryUnavailable", "ImageInspectError", "SignatureValidationFailed"}) {
    CHECK(podStuckReason(base().waiting(r).get(), 3) == StuckReason::ImagePull);
  }
  CHECK(podStuckReason(base().waiting("CreateContainerConfigError").get(), 3) == StuckReason::ConfigError);
  CHECK(podStuckReason(base().waiting("CreateContainerError").get(), 3) == StuckReason::ConfigError);
  CHECK(podStuckReason(base().waiting("CrashLoopBackOff").get(), 3) == StuckReason::CrashLoop);
  CHECK(podStuckReason(base().waiting("RunContainerError").get(), 3) == StuckReason::CrashLoop);
  CHECK(podStuckReason(base().running(at(60s)).restarts(5).get(), 3) == StuckReason::CrashLoop);
  CHECK(podStuckReason(base().waiting("ContainerCreating").get(), 3) == StuckReason::PodsPending);
  CHECK_FALSE(podStuckReason(base().running(at(60s)).get(), 3));
  auto unsched = PodBuilder("ns", "p", "u", at(0s)).unschedulable(at(5s));
  CHECK(podStuckReason(unsched.get(), 3) == StuckReason::Unschedulable);
}

TEST_CASE("A workload's stuck reason is its most specific pod reason", "[engine][stuck]") {
  auto running = PodBuilder("ns", "a", "ua", at(0s)).scheduled("n", at(1s)).running(at(60s));
  auto bad = PodBuilder("ns", "b", "ub", at(0s)).scheduled("n", at(1s)).waiting("ImagePullBackOff");
  auto pending = PodBuilder("ns", "c", "uc", at(0s)).unschedulable(at(1s));
  CHECK(workloadStuckReason({&running.get(), &pending.get(), &bad.get()}, 3, 3) == StuckReason::ImagePull);
  CHECK(workloadStuckReason({&running.get(), &pending.get()}, 2, 3) == StuckReason::Unschedulable);
  CHECK(workloadStuckReason({&running.get()}, 2, 3) == StuckReason::PodsPending);  // one pod missing
  CHECK(workloadStuckReason({&running.get()}, 1, 3) == StuckReason::NoFirstWork);
}
