#pragma once
// Scripted drills of design §5 as object sequences: each event is an object version with the time
// the watch would deliver it on time. A telemetry gap withholds a cluster's events and delivers
// their last versions later (a relist after the daemon's connection comes back).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "builders.hpp"

namespace firstwork::testing {

struct ScriptEvent {
  std::chrono::seconds t;  // delivery time on time (= event time of the change)
  std::string cluster;
  model::Object obj;
  bool remove = false;
};

struct Gap {
  std::string cluster;
  std::chrono::seconds from;   // the daemon loses its connection to `cluster`
  std::chrono::seconds until;  // and gets it back: withheld objects arrive now (last versions)
};

/// Plays `events` (stable-sorted by time) with an advance() after each distinct time and at each
/// of `extraSteps`. Clusters in `probeClusters` are reported connected at the start (so that a gap
/// is an outage of the daemon's view).
inline void play(Harness& h, std::vector<ScriptEvent> events, std::vector<std::chrono::seconds> extraSteps,
                 std::optional<Gap> gap = std::nullopt, std::vector<std::string> probeClusters = {}) {
  std::stable_sort(events.begin(), events.end(),
                   [](const ScriptEvent& a, const ScriptEvent& b) { return a.t < b.t; });
  std::vector<std::chrono::seconds> times = extraSteps;
  for (const auto& e : events) times.push_back(e.t);
  if (gap) {
    times.push_back(gap->from);
    times.push_back(gap->until);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  bool started = false;
  std::map<std::string, ScriptEvent> withheld;  // by uid/name, last version
  std::vector<std::string> withheldOrder;
  size_t next = 0;
  for (auto t : times) {
    if (!started) {
      for (const auto& c : probeClusters) h.e.onConnection(c, true, at(t), at(t));
      started = true;
    }
    if (gap && t == gap->from) h.e.onConnection(gap->cluster, false, at(t), at(t));
    if (gap && t == gap->until) {
      for (const auto& k : withheldOrder) {
        const auto& e = withheld.at(k);
        if (e.remove) h.remove(e.cluster, e.obj, at(t));
        else h.put(e.cluster, e.obj, at(t));
      }
      withheld.clear();
      withheldOrder.clear();
      h.e.onConnection(gap->cluster, true, at(t), at(t));
    }
    for (; next < events.size() && events[next].t <= t; ++next) {
      const auto& e = events[next];
      if (gap && e.cluster == gap->cluster && e.t >= gap->from && e.t < gap->until) {
        const auto& m = model::metaOf(e.obj);
        std::string key = std::to_string(static_cast<int>(model::kindOf(e.obj))) + "/" + m.uid + "/" + m.name;
        if (withheld.find(key) == withheld.end()) withheldOrder.push_back(key);
        withheld.insert_or_assign(key, e);
        continue;
      }
      if (e.remove) h.remove(e.cluster, e.obj, at(e.t));
      else h.put(e.cluster, e.obj, at(e.t));
    }
    h.step(at(t));
  }
}

/// Times of the two workloads of the reconnection drill, relative to reconnection R.
struct ReconnectTimes {
  std::chrono::seconds runA, fwA, runB, fwB;
};

/// Design §5 reconnection drill: worker w1 (4 nodes × 8 GPUs = 32 usable) loses its MultiKueue
/// connection at D = +0 s; two 16-GPU jobs A and B (2 pods × 8 GPUs) are submitted at +60 s and
/// reserved on the manager (ClusterQueue cq → AdmissionCheck mk → MultiKueueConfig cfg → [w1]);
/// Kueue reconnects at R = +600 s, both are dispatched at R+60 s (worker copies reserved at
/// R+55 s), pods are created at R+65 s and scheduled at R+100 s, then run and do useful work at
/// the given times.
inline constexpr std::chrono::seconds kReconnect{600};

inline std::vector<ScriptEvent> reconnectDrill(ReconnectTimes d) {
  using std::chrono::seconds;
  const seconds R = kReconnect;
  std::vector<ScriptEvent> ev;
  ev.push_back({seconds(-3600), "manager", clusterQueue("cq", {"mk"})});
  ev.push_back({seconds(-3600), "manager", multiKueueCheck("mk", "cfg")});
  ev.push_back({seconds(-3600), "manager", multiKueueConfig("cfg", {"w1"})});
  ev.push_back({seconds(-3600), "manager", multiKueueCluster("w1", true, at(seconds(-7200)))});
  for (int i = 0; i < 4; ++i) {
    ev.push_back({seconds(-3600), "w1", gpuNode("node-" + std::to_string(i), 8, at(seconds(-7200)))});
  }
  ev.push_back({seconds(0), "manager", multiKueueCluster("w1", false, at(seconds(0)))});
  ev.push_back({R, "manager", multiKueueCluster("w1", true, at(R))});
  struct Job {
    std::string name, uid;
    seconds run, fw;
  };
  for (const Job& j : {Job{"job-a-1f2e3", "mA", d.runA, d.fwA}, Job{"job-b-4d5c6", "mB", d.runB, d.fwB}}) {
    WorkloadBuilder m("team", j.name, j.uid, at(seconds(60)));
    m.ownedByJob(j.name.substr(4, 1), "job-" + j.uid).queue("lq").podSet(2, 8);
    m.reserved("cq", at(seconds(60))).check(model::CheckState::Pending, at(seconds(60)));
    ev.push_back({seconds(60), "manager", m.obj()});
    WorkloadBuilder copy("team", j.name, j.uid + "-w1", at(R + seconds(50)));
    copy.podSet(2, 8).remoteCopy().reserved("w1-cq", at(R + seconds(55))).admitted(at(R + seconds(55)));
    ev.push_back({R + seconds(55), "w1", copy.obj()});
    m.dispatchedTo("w1", at(R + seconds(60)));
    ev.push_back({R + seconds(60), "manager", m.obj()});
    for (int i = 0; i < 2; ++i) {
      PodBuilder p("team", j.name + "-" + std::to_string(i), j.uid + "-pod-" + std::to_string(i),
                   at(R + seconds(65)));
      p.ownedByJob(j.name, "remote-job-" + j.uid).workloadAnnotation(j.name).gpus(8).label(
          "kueue.x-k8s.io/multikueue-worker-workload-pod", "true");
      ev.push_back({R + seconds(65), "w1", p.obj()});
      p.scheduled("node-" + std::to_string(i + (j.uid == "mB" ? 2 : 0)), at(R + seconds(100)));
      ev.push_back({R + seconds(100), "w1", p.obj()});
      p.running(at(R + j.run));
      ev.push_back({R + j.run, "w1", p.obj()});
      p.firstWork(at(R + j.fw));
      ev.push_back({R + j.fw, "w1", p.obj()});
    }
  }
  return ev;
}

}  // namespace firstwork::testing
