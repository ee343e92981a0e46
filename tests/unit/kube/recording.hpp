#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "firstwork/kube/observer.hpp"
#include "firstwork/kube/reflector.hpp"
#include "firstwork/model/object.hpp"

namespace firstwork::testing {

/// An EventSink that keeps every event and mirrors the store by UID (what a consumer sees).
class RecordingSink final : public kube::EventSink {
 public:
  struct Seen {
    model::EventType type;
    kube::EventOrigin origin;
    std::string name;
    std::string uid;
    std::string rv;
    std::string previousRv;  // the resourceVersion the sink held before the event; "" for none
    bool finalStateUnknown = false;
    uint64_t nameHash = 0;  // kube::ObjectEvent::nameHash
  };
  void onEvent(const kube::ObjectEvent& ev) override {
    const auto& m = model::metaOf(*ev.object);
    auto it = mirror.find(m.uid.str());
    Seen s{ev.type,
           ev.origin,
           m.name.str(),
           m.uid.str(),
           m.resourceVersion.str(),
           it != mirror.end() ? it->second : std::string(),
           ev.finalStateUnknown,
           ev.nameHash};
    events.push_back(s);
    // What a consumer relies on: Added only for unknown objects, Modified/Deleted only for
    // known ones, nothing repeated; a final state unknown only on a synthetic delete, with the
    // uid alone.
    if (ev.type == model::EventType::Added) {
      if (it != mirror.end()) ++violations;
    } else if (it == mirror.end()) {
      ++violations;
    } else if (ev.type == model::EventType::Modified && s.rv == it->second) {
      ++violations;  // a "change" to the same version is a duplicate
    }
    if (ev.finalStateUnknown &&
        (ev.type != model::EventType::Deleted || !ev.synthetic() || !m.name.empty())) {
      ++violations;
    }
    if (ev.finalStateUnknown != (ev.nameHash != 0)) ++violations;  // the name's hash with it
    if (ev.type == model::EventType::Deleted) {
      mirror.erase(s.uid);
    } else {
      mirror[s.uid] = m.resourceVersion.str();
    }
  }
  void onSynced(std::string_view, model::Kind) override { ++synced; }

  std::vector<Seen> events;
  std::map<std::string, std::string> mirror;  // uid → resourceVersion
  int synced = 0;
  int violations = 0;
};

/// A KubeObserver that counts what it is told.
class RecordingObserver final : public kube::KubeObserver {
 public:
  void onRequest(std::string_view, std::string_view, kube::RequestKind kind, long status) override {
    ++requests[{std::string(kube::requestKindName(kind)), status}];
  }
  void onEvent(std::string_view, std::string_view, model::EventType type, bool synthetic) override {
    ++events[{static_cast<int>(type), synthetic}];
  }
  void onRestart(std::string_view, std::string_view, kube::RestartReason reason) override {
    ++restarts[std::string(kube::restartReasonName(reason))];
  }
  void onWatchEvent(std::string_view, std::string_view, model::EventType type) override {
    ++watchEvents[std::string(kube::watchEventTypeName(type))];
  }
  void onDecodeError(std::string_view, std::string_view) override { ++decodeErrors; }
  void onWatchUp(std::string_view, std::string_view, bool up) override { watchUp = up; }
  void onTrackedObjects(std::string_view, std::string_view, size_t count) override {
    tracked = count;
  }
  void onStateChange(std::string_view, std::string_view, kube::ReflectorState s) override {
    states.push_back(s);
  }
  void onClockSkew(std::string_view, double seconds) override {
    skew = seconds;
    minAbsSkew = std::min(minAbsSkew, std::abs(seconds));
    ++skewReports;
  }
  void onConnection(std::string_view, const kube::ConnectionEvent& ev) override {
    connections.push_back(ev);
  }

  std::map<std::pair<std::string, long>, int> requests;
  std::map<std::pair<int, bool>, int> events;
  std::map<std::string, int> restarts;
  std::map<std::string, int> watchEvents;
  int decodeErrors = 0;
  bool watchUp = false;
  size_t tracked = 0;
  std::vector<kube::ReflectorState> states;
  double skew = 0;
  double minAbsSkew = 1e9;  // the report least delayed by the server's own work
  int skewReports = 0;
  std::vector<kube::ConnectionEvent> connections;
};

}  // namespace firstwork::testing
