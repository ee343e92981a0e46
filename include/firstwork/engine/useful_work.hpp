#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "firstwork/core/clock.hpp"
#include "firstwork/engine/engine_config.hpp"
#include "firstwork/model/pod.hpp"

namespace firstwork::engine {

/// Pod annotation holding the RFC 3339 time the application began useful work (design §4).
inline constexpr std::string_view kFirstWorkAnnotation = "firstwork.dev/first-work-at";
/// Pod annotation holding the RFC 3339 time of the application's last checkpoint.
inline constexpr std::string_view kLastCheckpointAnnotation = "firstwork.dev/last-checkpoint-at";

/// Signal kinds in order of preference (design §4): a lower value is preferred.
enum class SignalKind : uint8_t { Annotation, Condition, External, ReadyProxy };
/// "annotation" | "condition" | "external" | "ready_proxy". (External signals are reported under
/// the name their source gave, e.g. "promql".)
std::string_view signalKindName(SignalKind kind);

struct UsefulWorkSignal {
  SignalKind kind = SignalKind::Annotation;
  SystemTime at{};
  Interned name;  // the `signal` field: signalKindName, or the external source's name
};

/// The signals one pod carries on its own (annotations and conditions; external signals are fed
/// separately).
struct PodSignals {
  /// The preferred signal the pod shows (annotation, else condition, else Ready proxy), if any.
  std::optional<UsefulWorkSignal> firstWork;
  std::optional<SystemTime> lastCheckpoint;
  /// Annotation values that are not RFC 3339 (ignored; the caller counts them once per value).
  std::string invalidFirstWork;
  std::string invalidCheckpoint;
};

/// Reads the useful-work signals of `pod` that `config` enables.
PodSignals readPodSignals(const model::Pod& pod, const UsefulWorkConfig& config);

}  // namespace firstwork::engine
