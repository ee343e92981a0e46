#include "firstwork/scenario/scenario_player.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "detail/kinds.hpp"
#include "detail/merge.hpp"
#include "detail/naming.hpp"
#include "detail/placeholders.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/sim/api_server.hpp"

namespace firstwork::scenario {

using detail::Json;

namespace {

using detail::objectKey;

std::string jsonString(const Json& j, const char* a, const char* b) {
  if (!j.is_object() || !j.contains(a) || !j[a].is_object() || !j[a].contains(b) || !j[a][b].is_string())
    return "";
  return j[a][b].get<std::string>();
}

}  // namespace

struct ScenarioPlayer::State {
  State(const Scenario& s, ServerMap m, const ScaledClock& c, PlayerOptions o)
      : sc(s), servers(std::move(m)), clock(c), options(std::move(o)) {}

  const Scenario& sc;
  ServerMap servers;
  const ScaledClock& clock;
  PlayerOptions options;

  // --- shared with other threads (guarded by mu) ---
  mutable std::mutex mu;
  std::condition_variable cv;
  bool started = false;
  bool stopping = false;
  bool done = false;
  SystemTime drillStart{};
  int iteration = 0;
  size_t applied = 0;
  std::vector<std::string> errors;
  std::thread thread;

  // --- owned by whoever applies steps: start() before the thread exists, then the thread ---
  struct Tracked {
    std::string cluster, kind, resource, ns, name;
    Json object;  // as the server returned it after our last write
    bool setup = false;
    uint64_t order = 0;
  };
  std::map<std::string, Tracked> objects;
  std::set<std::string> touchedSetup;  // setup objects the timeline changed or deleted
  std::set<std::string> cut;           // clusters whose server we stopped
  uint64_t writes = 0;
  SystemTime iterationStart{};
  int iterationNo = 0;

  void recordError(const Step& step, const std::string& what) {
    std::string line = fmt::format("{} at {} on {}: {}", step.origin, formatOffset(step.at), step.cluster, what);
    spdlog::warn("scenario {}: step failed: {}", sc.name, line);
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(std::move(line));
  }

  std::optional<std::string> uidOf(const std::string& cluster, const std::string& kind, const std::string& ns,
                                   const std::string& name) {
    auto it = objects.find(objectKey(cluster, kind, ns, name));
    if (it != objects.end()) {
      std::string uid = jsonString(it->second.object, "metadata", "uid");
      if (!uid.empty()) return uid;
    }
    // Not written by this player (or the server did not echo a uid): ask the server.
    const auto* info = detail::findKind(kind);
    auto server = servers.find(cluster);
    if (!info || server == servers.end()) return std::nullopt;
    for (const auto& text : server->second.get().objects(std::string(info->resource))) {
      Json o = Json::parse(text, nullptr, false);
      if (jsonString(o, "metadata", "name") == name && jsonString(o, "metadata", "namespace") == ns) {
        std::string uid = jsonString(o, "metadata", "uid");
        if (!uid.empty()) return uid;
      }
    }
    return std::nullopt;
  }

  std::string jobUid(const std::string& cluster, const std::string& ns, const std::string& name) const {
    // A Job's UID is stable within one play-through and new in the next, like a resubmitted Job.
    return detail::uuidFrom(fmt::format("{}/{}/{}/{}/{}", sc.name, iterationNo, cluster, ns, name));
  }

  // The current object: our last write, else the server's copy.
  std::optional<Json> current(const Step& step, sim::ApiServer& server) {
    auto it = objects.find(objectKey(step.cluster, step.kind, step.ns, step.name));
    if (it != objects.end()) return it->second.object;
    for (const auto& text : server.objects(step.resource)) {
      Json o = Json::parse(text, nullptr, false);
      if (jsonString(o, "metadata", "name") == step.name && jsonString(o, "metadata", "namespace") == step.ns)
        return o;
    }
    return std::nullopt;
  }

  void remember(const Step& step, const std::string& stored) {
    std::string key = objectKey(step.cluster, step.kind, step.ns, step.name);
    Json object = Json::parse(stored, nullptr, false);
    auto it = objects.find(key);
    if (it == objects.end()) {
      Tracked t{step.cluster, step.kind, step.resource, step.ns, step.name, std::move(object), step.setup, ++writes};
      objects.emplace(key, std::move(t));
    } else {
      it->second.object = std::move(object);
      if (!step.setup && it->second.setup) touchedSetup.insert(key);
    }
  }

  // Applies one step; failures are recorded, never thrown.
  void apply(const Step& step) {
    auto serverIt = servers.find(step.cluster);
    if (serverIt == servers.end()) {
      recordError(step, "no server for this cluster");
      return;
    }
    sim::ApiServer& server = serverIt->second.get();
    std::string key = objectKey(step.cluster, step.kind, step.ns, step.name);
    try {
      switch (step.action) {
        case StepAction::CutConnection:
          server.stop();
          cut.insert(step.cluster);
          break;
        case StepAction::RestoreConnection:
          server.start();
          cut.erase(step.cluster);
          break;
        case StepAction::Delete: {
          bool removed = server.remove(step.resource, step.ns, step.name);
          auto it = objects.find(key);
          if (it != objects.end()) {
            if (it->second.setup && !step.setup) touchedSetup.insert(key);
            objects.erase(it);
          }
          if (!removed) {
            recordError(step, "object to delete does not exist");
            return;
          }
          break;
        }
        default: {
          Json body = Json::parse(step.body, nullptr, false);
          if (body.is_discarded()) {
            recordError(step, "step body is not JSON");
            return;
          }
          detail::RenderContext ctx;
          ctx.drillStart = iterationStart;
          ctx.cluster = step.cluster;
          ctx.uid = [this](const std::string& c, const std::string& k, const std::string& n, const std::string& nm) {
            return uidOf(c, k, n, nm);
          };
          ctx.jobUid = [this](const std::string& c, const std::string& n, const std::string& nm) { return jobUid(c, n, nm); };
          if (auto st = detail::renderJson(body, ctx); !st) {
            recordError(step, st.error());
            return;
          }
          std::string stored;
          if (step.action == StepAction::Patch) {
            auto cur = current(step, server);
            if (!cur) {
              recordError(step, "object to patch does not exist");
              return;
            }
            Json merged = std::move(*cur);
            detail::mergePatch(merged, body);
            // The sim replaces by namespace/name; an old resourceVersion is not a precondition here.
            if (merged.contains("metadata") && merged["metadata"].is_object()) merged["metadata"].erase("resourceVersion");
            stored = server.update(step.resource, merged.dump());
          } else if (step.action == StepAction::Update) {
            if (auto cur = current(step, server)) {
              // Keep what the API server owns (uid, creationTimestamp) when the file omits it.
              for (const char* field : {"uid", "creationTimestamp"}) {
                std::string v = jsonString(*cur, "metadata", field);
                if (!v.empty() && !(body["metadata"].contains(field))) body["metadata"][field] = v;
              }
            }
            stored = server.update(step.resource, body.dump());
          } else {
            // The sim stamps creationTimestamp with real time when absent; objects of a drill
            // carry scenario time.
            if (!body["metadata"].contains("creationTimestamp"))
              body["metadata"]["creationTimestamp"] =
                  formatRfc3339(iterationStart + std::chrono::duration_cast<SystemTime::duration>(step.at));
            stored = step.action == StepAction::Create ? server.create(step.resource, body.dump())
                                                       : server.apply(step.resource, body.dump());
          }
          remember(step, stored);
        }
      }
    } catch (const std::exception& e) {
      recordError(step, e.what());
      return;
    }
    std::lock_guard<std::mutex> lock(mu);
    ++applied;
  }

  // Waits (on the scaled clock) until `target`; false when stopping.
  bool waitUntil(SystemTime target) {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      SystemTime now = clock.systemNow();
      if (now >= target) return true;
      auto real = clock.toReal(std::chrono::duration_cast<std::chrono::nanoseconds>(target - now));
      // Bounded waits: a clock that is not what it seems (or a missed notify) cannot hang us.
      cv.wait_for(lock, std::min<std::chrono::nanoseconds>(real, std::chrono::milliseconds(200)) +
                            std::chrono::microseconds(100));
    }
    return false;
  }

  // Setup of iteration `k`: all of it the first time; afterwards only the setup objects the last
  // play-through changed (they were deleted by endIteration()). Then timeline steps at ≤ 0.
  void applySetup(bool first) {
    for (const auto& step : sc.steps) {
      if (!step.setup) continue;
      if (!first && !touchedSetup.count(objectKey(step.cluster, step.kind, step.ns, step.name))) continue;
      apply(step);
    }
    if (!first) touchedSetup.clear();
    for (const auto& step : sc.steps)
      if (!step.setup && step.at.count() <= 0) apply(step);
  }

  // Returns the estate to its setup state: connections restored, timeline objects deleted
  // (newest first), changed setup objects deleted so applySetup() recreates them.
  void endIteration() {
    for (const auto& cluster : std::set<std::string>(cut)) {
      try {
        servers.at(cluster).get().start();
      } catch (const std::exception& e) {
        spdlog::warn("scenario {}: restarting {} failed: {}", sc.name, cluster, e.what());
      }
    }
    cut.clear();
    removeTracked([this](const std::string& key, const Tracked& t) { return !t.setup || touchedSetup.count(key) > 0; });
  }

  // Deletes tracked objects, newest first; `which` selects them.
  void removeTracked(const std::function<bool(const std::string&, const Tracked&)>& which) {
    std::vector<std::pair<uint64_t, std::string>> doomed;
    for (const auto& [key, t] : objects)
      if (which(key, t)) doomed.emplace_back(t.order, key);
    std::sort(doomed.rbegin(), doomed.rend());
    for (const auto& [order, key] : doomed) {
      const Tracked& t = objects.at(key);
      try {
        servers.at(t.cluster).get().remove(t.resource, t.ns, t.name);
      } catch (const std::exception& e) {
        spdlog::warn("scenario {}: removing {} failed: {}", sc.name, key, e.what());
      }
      objects.erase(key);
    }
  }

  void run() {
    size_t firstTimed = 0;
    while (firstTimed < sc.steps.size() && (sc.steps[firstTimed].setup || sc.steps[firstTimed].at.count() <= 0))
      ++firstTimed;
    for (;;) {
      if (options.onIteration) options.onIteration(iterationNo, iterationStart);
      for (size_t i = firstTimed; i < sc.steps.size(); ++i) {
        const Step& step = sc.steps[i];
        if (!waitUntil(iterationStart + std::chrono::duration_cast<SystemTime::duration>(step.at))) return;
        apply(step);
      }
      if (!waitUntil(iterationStart + std::chrono::duration_cast<SystemTime::duration>(sc.duration))) return;
      if (!options.loop) {
        std::lock_guard<std::mutex> lock(mu);
        done = true;
        cv.notify_all();
        return;
      }
      endIteration();
      iterationStart += std::chrono::duration_cast<SystemTime::duration>(sc.duration);
      ++iterationNo;
      {
        std::lock_guard<std::mutex> lock(mu);
        drillStart = iterationStart;
        iteration = iterationNo;
      }
      applySetup(false);
    }
  }
};

ScenarioPlayer::ScenarioPlayer(Scenario scenario, ServerMap servers, const ScaledClock& clock,
                               PlayerOptions options)
    : scenario_(std::move(scenario)),
      state_(std::make_unique<State>(scenario_, std::move(servers), clock, std::move(options))) {}

ScenarioPlayer::~ScenarioPlayer() { stop(); }

SystemTime ScenarioPlayer::drillStart() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->drillStart;
}

int ScenarioPlayer::iteration() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->iteration;
}

size_t ScenarioPlayer::stepsApplied() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->applied;
}

std::vector<std::string> ScenarioPlayer::errors() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->errors;
}

Status ScenarioPlayer::start() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.started) return makeError(fmt::format("scenario {}: the player was already started", scenario_.name));
  }
  std::vector<std::string> missing;
  for (const auto& c : scenario_.clusters)
    if (!s.servers.count(c.name)) missing.push_back(c.name);
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return makeError(fmt::format("scenario {}: no API server for cluster(s) {}", scenario_.name, list));
  }
  SystemTime start = s.options.drillStart.value_or(
      std::chrono::floor<std::chrono::seconds>(s.clock.systemNow()));
  s.iterationStart = start;
  s.iterationNo = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.started = true;
    s.drillStart = start;
  }
  s.applySetup(true);
  s.thread = std::thread([&s] { s.run(); });
  return Ok{};
}

bool ScenarioPlayer::waitUntilDone(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [&] { return state_->done; });
}

void ScenarioPlayer::stop() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stopping = true;
  }
  s.cv.notify_all();
  if (s.thread.joinable()) s.thread.join();
  // Never leave a server stopped behind us.
  for (const auto& cluster : std::set<std::string>(s.cut)) {
    try {
      s.servers.at(cluster).get().start();
    } catch (const std::exception& e) {
      spdlog::warn("scenario {}: restarting {} failed: {}", scenario_.name, cluster, e.what());
    }
  }
  s.cut.clear();
}

void ScenarioPlayer::removeObjects() {
  stop();
  state_->removeTracked([](const std::string&, const State::Tracked&) { return true; });
  state_->touchedSetup.clear();
}

}  // namespace firstwork::scenario
