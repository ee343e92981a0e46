#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "firstwork/engine/outputs.hpp"
#include "firstwork/model/pod.hpp"

namespace firstwork::engine {

/// The reason one pod is not starting, judged from its own status (kubelet waiting reasons,
/// restarts, PodScheduled), or nullopt when the pod shows nothing wrong:
///   image_pull    ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull,
///                 RegistryUnavailable, ImageInspectError, SignatureValidationFailed
///   config_error  CreateContainerConfigError, CreateContainerError, PreCreateHookError,
///                 PreStartHookError, PostStartHookError
///   crash_loop    CrashLoopBackOff, RunContainerError, or a container restarted at least
///                 `crashLoopRestarts` times
///   unschedulable PodScheduled=False with reason Unschedulable
///   pods_pending  anything else that keeps the pod from running (scheduling gates, Pending,
///                 ContainerCreating, PodInitializing, CreatePodSandboxError, ...)
/// Init containers count like regular ones.
std::optional<StuckReason> podStuckReason(const model::Pod& pod, int32_t crashLoopRestarts);

/// The workload's reason from its pods: the most specific pod reason wins, in the order
/// image_pull, config_error, crash_loop, unschedulable, pods_pending; fewer pods than
/// `expectedPods` is pods_pending; all pods running without a useful-work signal is no_first_work.
StuckReason workloadStuckReason(const std::vector<const model::Pod*>& pods, int64_t expectedPods,
                                int32_t crashLoopRestarts);
/// The same from each pod's reason (podStuckReason), as the engine keeps it from the pod's last
/// event: a pod's reason depends on nothing but the pod and `crashLoopRestarts`.
StuckReason workloadStuckReason(const std::vector<std::optional<StuckReason>>& podReasons,
                                int64_t expectedPods);

}  // namespace firstwork::engine
