#include <array>
#include <string_view>

#include "firstwork/engine/engine_config.hpp"
#include "firstwork/engine/outputs.hpp"

namespace firstwork::engine {

namespace {
template <typename E, size_t N>
std::string_view pick(const std::array<std::string_view, N>& names, E value) {
  auto i = static_cast<size_t>(value);
  return i < N ? names[i] : std::string_view{};
}
}  // namespace

std::string_view clusterRoleName(ClusterRole role) {
  static constexpr std::array<std::string_view, 3> kNames{"management", "worker", "standalone"};
  return pick(kNames, role);
}

std::string_view milestoneName(Milestone milestone) {
  static constexpr std::array<std::string_view, kMilestoneCount> kNames{
      "queued",     "reserved", "dispatched", "admitted", "scheduled", "running",
      "first_work", "evicted",  "preempted",  "released", "finished"};
  return pick(kNames, milestone);
}

std::optional<Milestone> milestoneFromName(std::string_view name) {
  for (size_t i = 0; i < kMilestoneCount; ++i) {
    if (milestoneName(static_cast<Milestone>(i)) == name) return static_cast<Milestone>(i);
  }
  return std::nullopt;
}

std::string_view stageName(Stage stage) {
  static constexpr std::array<std::string_view, kStageCount> kNames{
      "queued_to_reserved",      "reserved_to_dispatched", "reconnect_to_dispatched",
      "dispatched_to_scheduled", "reserved_to_scheduled",  "scheduled_to_running",
      "running_to_first_work",   "evicted_to_released"};
  return pick(kNames, stage);
}

std::string_view histogramMetricName(HistogramKind kind) {
  static constexpr std::array<std::string_view, kHistogramKindCount> kNames{
      "firstwork_reservation_to_first_work_seconds",
      "firstwork_reclaim_to_first_work_seconds",
      "firstwork_reconnect_to_first_work_seconds",
      "firstwork_stage_seconds",
      "firstwork_recovery_seconds",
      "firstwork_worker_disconnected_seconds",
      "firstwork_observation_lag_seconds"};
  return pick(kNames, kind);
}

std::string_view incidentSourceName(IncidentSource source) {
  static constexpr std::array<std::string_view, 2> kNames{"multikueue", "probe"};
  return pick(kNames, source);
}

std::string_view incidentOutcomeName(IncidentOutcome outcome) {
  static constexpr std::array<std::string_view, 4> kNames{"open", "recovering", "recovered",
                                                          "failed"};
  return pick(kNames, outcome);
}

std::string_view reclaimOutcomeName(ReclaimOutcome outcome) {
  static constexpr std::array<std::string_view, 3> kNames{"pending", "completed", "failed"};
  return pick(kNames, outcome);
}

std::string_view duplicateKindName(DuplicateKind kind) {
  static constexpr std::array<std::string_view, 2> kNames{"concurrent", "rerun"};
  return pick(kNames, kind);
}

std::string_view strandedPhaseName(StrandedPhase phase) {
  static constexpr std::array<std::string_view, kStrandedPhaseCount> kNames{
      "disconnected", "idle", "pending_start", "starting"};
  return pick(kNames, phase);
}

std::string_view workloadStateName(WorkloadState state) {
  static constexpr std::array<std::string_view, kWorkloadStateCount> kNames{
      "queued", "reserved", "dispatched", "running", "productive"};
  return pick(kNames, state);
}

std::string_view stuckReasonName(StuckReason reason) {
  static constexpr std::array<std::string_view, kStuckReasonCount> kNames{
      "image_pull", "crash_loop", "config_error", "unschedulable", "pods_pending", "no_first_work"};
  return pick(kNames, reason);
}

bool isWorkloadCaused(StuckReason reason) {
  return reason == StuckReason::ImagePull || reason == StuckReason::CrashLoop ||
         reason == StuckReason::ConfigError;
}

std::string_view gpuStateName(GpuState state) {
  static constexpr std::array<std::string_view, 3> kNames{"reserved", "allocated", "productive"};
  return pick(kNames, state);
}

}  // namespace firstwork::engine
