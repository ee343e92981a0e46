#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"
#include "firstwork/core/scaled_clock.hpp"
#include "firstwork/scenario/scenario.hpp"

namespace firstwork::sim {
class ApiServer;
}

namespace firstwork::scenario {

/// Cluster name (as in the scenario's `clusters:`) → the simulated API server playing it.
using ServerMap = std::map<std::string, std::reference_wrapper<sim::ApiServer>>;

/// How a ScenarioPlayer plays (plain data).
struct PlayerOptions {
  /// Start of the first play-through on the scenario clock. Default: the clock's now at start(),
  /// truncated to a whole second (Kubernetes timestamps have second precision, so every rendered
  /// time is drill start + a whole-second offset).
  std::optional<SystemTime> drillStart;
  /// Play again and again: iteration k starts at drillStart + k × duration. At the end of an
  /// iteration the player deletes every object the timeline created and recreates the setup
  /// objects the timeline changed, so each play-through starts from the same estate.
  bool loop = false;
  /// Called on the player thread when an iteration begins (after its setup is applied).
  std::function<void(int iteration, SystemTime drillStart)> onIteration;
};

/// Acts a scenario out on simulated API servers at the scenario clock's pace: applies each step
/// at drill start + offset (scaled), renders `{{t+…}}`, `{{uid:…}}` and `{{jobuid:…}}`
/// placeholders, cuts and restores the daemon's connections. Setup (`objects:` and steps at
/// offsets ≤ 0) is applied synchronously by start(); the rest on one player thread. A failing step
/// is recorded in errors() and logged, and play goes on. Public methods are thread-safe.
/// Shares no code with the daemon's engine or decoders: it is the reference the engine is checked
/// against.
class ScenarioPlayer {
 public:
  ScenarioPlayer(Scenario scenario, ServerMap servers, const ScaledClock& clock,
                 PlayerOptions options = {});
  ~ScenarioPlayer();  // stop()
  ScenarioPlayer(const ScenarioPlayer&) = delete;
  ScenarioPlayer& operator=(const ScenarioPlayer&) = delete;

  /// Checks that every scenario cluster has a server, applies the setup and starts the player
  /// thread. Fails (and starts nothing) when a cluster is missing or the player already ran.
  Status start();
  /// True once the drill has played to its `duration` (never while looping).
  bool waitUntilDone(std::chrono::milliseconds timeout);
  /// Stops the thread and restarts any server whose connection is cut. Idempotent.
  void stop();
  /// stop(), then deletes every object this player created that still exists (newest first), so
  /// another scenario can be played on the same servers. Objects it did not create are kept.
  void removeObjects();

  const Scenario& scenario() const { return scenario_; }
  /// Start of the current (or last) iteration on the scenario clock.
  SystemTime drillStart() const;
  int iteration() const;
  size_t stepsApplied() const;
  /// One line per failed step: "<origin> at <offset> on <cluster>: <what>".
  std::vector<std::string> errors() const;

 private:
  struct State;
  Scenario scenario_;
  std::unique_ptr<State> state_;
};

}  // namespace firstwork::scenario
