#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace firstwork::sim {

class ApiServer;

/// The faults a soak injects (issue 8: cut streams, 410 storms, stalls, 500/429, token rotation,
/// server restarts with a new RV base, the watcher killed and restarted). The cluster clock skew
/// is not a timed fault — a clock that jumps mid-drill changes the drill — but a property of the
/// whole run (FaultPlan::clockSkew).
enum class FaultKind : uint8_t {
  CutStreams,     // ApiServer::cutStreamsMidEvent: every open watch dies half-way through a line
  TruncateEvent,  // ApiServer::truncateNextEvent: one garbled line, the stream goes on
  GoneStorm,      // `count` × compactHistory(true) over `duration`: watches get ERROR 410 again and again
  Stall,          // ApiServer::stallStreams(duration): nothing sent, then everything at once
  ServerErrors,   // failNextRequests(500, count)
  Throttle,       // failNextRequests(429, count, Retry-After `value` s)
  RotateToken,    // a new token: Hooks::rotateToken first (the client's file), then the server's
  RestartServer,  // stop(), down for `duration`, restartWithNewRvBase(value), start()
  KillWatcher,    // Hooks::killWatcher(duration): the client process SIGKILLed, down for `duration`
};
inline constexpr size_t kFaultKindCount = 9;
/// "cut_streams", "truncate_event", "gone_storm", "stall", "server_errors", "throttle",
/// "rotate_token", "restart_server", "kill_watcher".
std::string_view faultKindName(FaultKind kind);

/// One planned fault (plain data).
struct Fault {
  std::chrono::milliseconds at{0};  // real time after FaultInjector::start()
  FaultKind kind = FaultKind::CutStreams;
  std::string cluster;              // target server (empty for KillWatcher)
  std::chrono::milliseconds duration{0};
  int count = 0;
  uint64_t value = 0;
  /// One line for logs and failure messages: `+1.250s stall worker-1 for 2.400s`.
  std::string describe() const;
};

struct FaultPlanOptions {
  uint64_t seed = 1;
  std::chrono::milliseconds length{10000};        // faults are planned in [0, length)
  std::chrono::milliseconds meanInterval{1000};   // mean gap between faults (exponential)
  std::vector<std::string> clusters;              // the servers faults may target
  std::vector<FaultKind> kinds;                   // allowed kinds; empty = all
  std::chrono::milliseconds maxStall{4000};
  std::chrono::milliseconds maxServerDowntime{1500};
  std::chrono::milliseconds maxWatcherDowntime{2000};
  int maxWatcherKills = 2;                        // KillWatcher at most this often per plan
  /// KillWatcher faults are at least this far apart (the watcher needs time to come back).
  std::chrono::milliseconds minGapBetweenKills{3000};
  std::chrono::seconds maxClockSkew{300};         // |skew| bound of FaultPlan::clockSkew
};

/// A deterministic fault schedule: the same options (seed included) give the same plan.
struct FaultPlan {
  uint64_t seed = 0;
  /// How far the clusters' clocks are from the watcher's (positive: ahead), uniform in
  /// [-maxClockSkew, maxClockSkew], whole seconds.
  std::chrono::seconds clockSkew{0};
  std::vector<Fault> faults;  // sorted by `at`
  /// How many faults of each kind, e.g. `cut_streams=3 stall=2 ...` (kinds with 0 left out).
  std::string summary() const;
};
FaultPlan planFaults(const FaultPlanOptions& options);

/// What the injector calls for faults outside the API servers. Called on the injector thread.
struct FaultHooks {
  /// Before the server switches to `token`: put it where the client reads its token (a file).
  std::function<void(const std::string& cluster, const std::string& token)> rotateToken;
  /// Kill the watching process (SIGKILL), wait `downtime`, start it again; returns when it runs.
  std::function<void(std::chrono::milliseconds downtime)> killWatcher;
};

/// Plays a FaultPlan against running API servers on its own thread, each fault at its planned
/// real time. Rotated tokens are `<tokenPrefix><cluster>-<n>-<16 hex>` (hex from the plan's
/// seed), so a test can recognise them in logs. Public methods are thread-safe; the servers
/// must outlive the injector.
class FaultInjector {
 public:
  FaultInjector(FaultPlan plan, std::map<std::string, std::reference_wrapper<ApiServer>> servers,
                FaultHooks hooks, std::string tokenPrefix = "rotated-");
  ~FaultInjector();  // stop()
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  void start();
  /// Stops before the next fault (a fault in progress finishes: a stopped server is started
  /// again). Idempotent.
  void stop();
  /// True once every fault was applied.
  bool waitUntilDone(std::chrono::milliseconds timeout);
  /// The faults applied so far, each a describe() line.
  std::vector<std::string> applied() const;
  /// The newest token of `cluster` (its original token until a rotation).
  std::string currentToken(const std::string& cluster) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace firstwork::sim
