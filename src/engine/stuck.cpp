#include "firstwork/engine/stuck.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "firstwork/model/meta.hpp"

namespace firstwork::engine {

namespace {

// kubelet waiting reasons (reference §2.5).
constexpr std::array<std::string_view, 7> kImagePull{
    "ErrImagePull",        "ImagePullBackOff",  "InvalidImageName",         "ErrImageNeverPull",
    "RegistryUnavailable", "ImageInspectError", "SignatureValidationFailed"};
constexpr std::array<std::string_view, 5> kConfigError{
    "CreateContainerConfigError", "CreateContainerError", "PreCreateHookError",
    "PreStartHookError", "PostStartHookError"};
constexpr std::array<std::string_view, 2> kCrashLoop{"CrashLoopBackOff", "RunContainerError"};

template <size_t N>
bool in(const std::array<std::string_view, N>& set, std::string_view s) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// Lower is more specific (wins when pods disagree).
int rank(StuckReason r) {
  switch (r) {
    case StuckReason::ImagePull: return 0;
    case StuckReason::ConfigError: return 1;
    case StuckReason::CrashLoop: return 2;
    case StuckReason::Unschedulable: return 3;
    case StuckReason::PodsPending: return 4;
    case StuckReason::NoFirstWork: return 5;
  }
  return 6;
}

bool podRunning(const model::Pod& pod) {
  if (pod.phase != model::PodPhase::Running && pod.phase != model::PodPhase::Succeeded) return false;
  bool any = false;
  for (const auto& c : pod.containers) {
    if (c.init) continue;
    any = true;
    if (c.state != model::ContainerStateKind::Running &&
        c.state != model::ContainerStateKind::Terminated) {
      return false;
    }
  }
  return any || pod.phase == model::PodPhase::Succeeded;
}

}  // namespace

std::optional<StuckReason> podStuckReason(const model::Pod& pod, int32_t crashLoopRestarts) {
  std::optional<StuckReason> best;
  auto take = [&](StuckReason r) {
    if (!best || rank(r) < rank(*best)) best = r;
  };
  for (const auto& c : pod.containers) {
    if (c.state == model::ContainerStateKind::Waiting) {
      if (in(kImagePull, c.reason)) {
        take(StuckReason::ImagePull);
      } else if (in(kConfigError, c.reason)) {
        take(StuckReason::ConfigError);
      } else if (in(kCrashLoop, c.reason)) {
        take(StuckReason::CrashLoop);
      }
    }
    if (crashLoopRestarts > 0 && c.restartCount >= crashLoopRestarts) take(StuckReason::CrashLoop);
  }
  if (best) return best;
  if (const auto* s = model::findCondition(pod.conditions, "PodScheduled");
      s != nullptr && s->status == model::ConditionStatus::False && s->reason == "Unschedulable") {
    return StuckReason::Unschedulable;
  }
  if (pod.phase == model::PodPhase::Succeeded || pod.phase == model::PodPhase::Failed) {
    return std::nullopt;  // ended: nothing keeps it from running any more
  }
  if (!podRunning(pod)) return StuckReason::PodsPending;
  return std::nullopt;
}

StuckReason workloadStuckReason(const std::vector<const model::Pod*>& pods, int64_t expectedPods,
                                int32_t crashLoopRestarts) {
  std::vector<std::optional<StuckReason>> reasons;
  reasons.reserve(pods.size());
  for (const model::Pod* pod : pods) reasons.push_back(podStuckReason(*pod, crashLoopRestarts));
  return workloadStuckReason(reasons, expectedPods);
}

StuckReason workloadStuckReason(const std::vector<std::optional<StuckReason>>& podReasons,
                                int64_t expectedPods) {
  std::optional<StuckReason> best;
  for (const auto& r : podReasons) {
    if (r && (!best || rank(*r) < rank(*best))) best = r;
  }
  if (best) return *best;
  if (static_cast<int64_t>(podReasons.size()) < std::max<int64_t>(expectedPods, 1)) {
    return StuckReason::PodsPending;
  }
  return StuckReason::NoFirstWork;
}

}  // namespace firstwork::engine
