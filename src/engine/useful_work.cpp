#include "firstwork/engine/useful_work.hpp"

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/model/meta.hpp"

namespace firstwork::engine {

std::string_view signalKindName(SignalKind kind) {
  switch (kind) {
    case SignalKind::Annotation: return "annotation";
    case SignalKind::Condition: return "condition";
    case SignalKind::External: return "external";
    case SignalKind::ReadyProxy: return "ready_proxy";
  }
  return {};
}

PodSignals readPodSignals(const model::Pod& pod, const UsefulWorkConfig& config) {
  PodSignals out;
  auto conditionSignal = [&](std::string_view type,
                             SignalKind kind) -> std::optional<UsefulWorkSignal> {
    const model::BriefCondition* c = model::findCondition(pod.conditions, type);
    if (c == nullptr || c->status != model::ConditionStatus::True || !c->lastTransitionTime) {
      return std::nullopt;
    }
    return UsefulWorkSignal{kind, *c->lastTransitionTime, std::string(signalKindName(kind))};
  };

  if (config.annotation) {
    if (const SmallString* v = model::findValue(pod.meta.annotations, kFirstWorkAnnotation)) {
      auto t = parseRfc3339(*v);
      if (t) {
        out.firstWork = UsefulWorkSignal{SignalKind::Annotation, *t,
                                         std::string(signalKindName(SignalKind::Annotation))};
      } else {
        out.invalidFirstWork = *v;
      }
    }
    if (const SmallString* v = model::findValue(pod.meta.annotations, kLastCheckpointAnnotation)) {
      auto t = parseRfc3339(*v);
      if (t) {
        out.lastCheckpoint = *t;
      } else {
        out.invalidCheckpoint = *v;
      }
    }
  }
  if (!out.firstWork && !config.podConditionType.empty()) {
    out.firstWork = conditionSignal(config.podConditionType, SignalKind::Condition);
  }
  if (!out.firstWork && config.readyProxy) {
    out.firstWork = conditionSignal("Ready", SignalKind::ReadyProxy);
  }
  return out;
}

}  // namespace firstwork::engine
