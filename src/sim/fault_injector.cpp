#include "firstwork/sim/fault_injector.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "firstwork/sim/api_server.hpp"

namespace firstwork::sim {

namespace {

using std::chrono::milliseconds;

constexpr std::array<FaultKind, kFaultKindCount> kAllKinds{
    FaultKind::CutStreams,   FaultKind::TruncateEvent, FaultKind::GoneStorm,
    FaultKind::Stall,        FaultKind::ServerErrors,  FaultKind::Throttle,
    FaultKind::RotateToken,  FaultKind::RestartServer, FaultKind::KillWatcher};

// A new RV base lands this far above the current RV: far enough that no RV issued before the
// restart is reused. (A *lower* base — etcd restored from an older backup — re-issues RVs that
// objects already had, and a watcher that, like client-go's informers, treats an equal
// resourceVersion as "unchanged" then drops real updates; Kubernetes asks operators to restart
// every watcher after such a restore, so the soak does not plan it.)
constexpr uint64_t kMinRvJump = 1000;
constexpr uint64_t kMaxRvJump = 1000000;

std::string seconds(milliseconds d) { return fmt::format("{:.3f}s", static_cast<double>(d.count()) / 1000.0); }

}  // namespace

std::string_view faultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::CutStreams: return "cut_streams";
    case FaultKind::TruncateEvent: return "truncate_event";
    case FaultKind::GoneStorm: return "gone_storm";
    case FaultKind::Stall: return "stall";
    case FaultKind::ServerErrors: return "server_errors";
    case FaultKind::Throttle: return "throttle";
    case FaultKind::RotateToken: return "rotate_token";
    case FaultKind::RestartServer: return "restart_server";
    case FaultKind::KillWatcher: return "kill_watcher";
  }
  return "unknown";
}

std::string Fault::describe() const {
  std::string s = fmt::format("+{} {}", seconds(at), faultKindName(kind));
  if (!cluster.empty()) s += " " + cluster;
  switch (kind) {
    case FaultKind::GoneStorm:
      s += fmt::format(" {}x410 over {}", count, seconds(duration));
      break;
    case FaultKind::Stall:
      s += " for " + seconds(duration);
      break;
    case FaultKind::ServerErrors:
      s += fmt::format(" next {} requests 500", count);
      break;
    case FaultKind::Throttle:
      s += fmt::format(" next {} requests 429 Retry-After {}s", count, value);
      break;
    case FaultKind::RestartServer:
      s += fmt::format(" down {}, rv base +{}", seconds(duration), value);
      break;
    case FaultKind::KillWatcher:
      s += " down " + seconds(duration);
      break;
    default:
      break;
  }
  return s;
}

std::string FaultPlan::summary() const {
  std::array<int, kFaultKindCount> n{};
  for (const auto& f : faults) ++n[static_cast<size_t>(f.kind)];
  std::string s;
  for (auto k : kAllKinds) {
    if (n[static_cast<size_t>(k)] == 0) continue;
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", faultKindName(k), n[static_cast<size_t>(k)]);
  }
  return s.empty() ? "none" : s;
}

FaultPlan planFaults(const FaultPlanOptions& o) {
  // std::mt19937_64 is specified bit for bit; the distributions below are not portable across
  // standard libraries, so draws are made by hand from raw outputs.
  std::mt19937_64 rng(o.seed);
  auto uniform = [&](uint64_t lo, uint64_t hi) {  // [lo, hi]
    return lo + rng() % (hi - lo + 1);
  };
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };  // [0, 1)

  FaultPlan plan;
  plan.seed = o.seed;
  const int64_t skew = o.maxClockSkew.count();
  plan.clockSkew = std::chrono::seconds(static_cast<int64_t>(uniform(0, static_cast<uint64_t>(2 * skew))) - skew);

  std::vector<FaultKind> kinds = o.kinds;
  if (kinds.empty()) kinds.assign(kAllKinds.begin(), kAllKinds.end());
  const bool serverFaults = !o.clusters.empty();
  int kills = 0;
  std::optional<milliseconds> lastKill;
  double t = 0;
  const double mean = static_cast<double>(std::max<int64_t>(o.meanInterval.count(), 1));
  for (;;) {
    t += -std::log(1.0 - unit()) * mean;  // exponential gaps: faults cluster now and then
    if (t >= static_cast<double>(o.length.count())) break;
    Fault f;
    f.at = milliseconds(static_cast<int64_t>(t));
    f.kind = kinds[uniform(0, kinds.size() - 1)];
    if (f.kind == FaultKind::KillWatcher) {
      if (kills >= o.maxWatcherKills || (lastKill && f.at - *lastKill < o.minGapBetweenKills)) {
        continue;
      }
      ++kills;
      lastKill = f.at;
      f.duration = milliseconds(uniform(0, static_cast<uint64_t>(o.maxWatcherDowntime.count())));
      plan.faults.push_back(std::move(f));
      continue;
    }
    if (!serverFaults) continue;
    f.cluster = o.clusters[uniform(0, o.clusters.size() - 1)];
    switch (f.kind) {
      case FaultKind::GoneStorm:
        f.count = static_cast<int>(uniform(2, 6));
        f.duration = milliseconds(uniform(200, 2000));
        break;
      case FaultKind::Stall:
        f.duration = milliseconds(uniform(100, static_cast<uint64_t>(std::max<int64_t>(o.maxStall.count(), 100))));
        break;
      case FaultKind::ServerErrors:
        f.count = static_cast<int>(uniform(1, 8));
        break;
      case FaultKind::Throttle:
        f.count = static_cast<int>(uniform(1, 8));
        f.value = uniform(0, 2);
        break;
      case FaultKind::RestartServer:
        f.duration = milliseconds(uniform(0, static_cast<uint64_t>(o.maxServerDowntime.count())));
        f.value = uniform(kMinRvJump, kMaxRvJump);
        break;
      default:
        break;
    }
    plan.faults.push_back(std::move(f));
  }
  return plan;
}

// ------------------------------------------------------------------------------------------------

struct FaultInjector::State {
  FaultPlan plan;
  std::map<std::string, std::reference_wrapper<ApiServer>> servers;
  FaultHooks hooks;
  std::string tokenPrefix;
  std::mt19937_64 tokenRng;

  mutable std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  bool done = false;
  std::vector<std::string> applied;
  std::map<std::string, std::string> tokens;
  std::map<std::string, int> rotations;
  std::thread thread;

  /// Sleeps until `until` (steady clock) unless stopping; false when stopping.
  bool sleepUntil(std::chrono::steady_clock::time_point until) {
    std::unique_lock<std::mutex> lock(mu);
    return !cv.wait_until(lock, until, [&] { return stopping; });
  }

  void apply(const Fault& f) {
    if (f.kind == FaultKind::KillWatcher) {
      if (hooks.killWatcher) hooks.killWatcher(f.duration);
      return;
    }
    auto it = servers.find(f.cluster);
    if (it == servers.end()) return;
    ApiServer& s = it->second.get();
    switch (f.kind) {
      case FaultKind::CutStreams:
        s.cutStreamsMidEvent();
        break;
      case FaultKind::TruncateEvent:
        s.truncateNextEvent();
        break;
      case FaultKind::GoneStorm: {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < f.count; ++i) {
          if (i > 0 && !sleepUntil(start + f.duration * i / std::max(f.count - 1, 1))) break;
          s.compactHistory(true);
        }
        break;
      }
      case FaultKind::Stall:
        s.stallStreams(f.duration);
        break;
      case FaultKind::ServerErrors:
        s.failNextRequests(500, f.count);
        break;
      case FaultKind::Throttle:
        s.failNextRequests(429, f.count, static_cast<int>(f.value));
        break;
      case FaultKind::RotateToken: {
        std::string token;
        {
          std::lock_guard<std::mutex> lock(mu);
          token = fmt::format("{}{}-{}-{:016x}", tokenPrefix, f.cluster, ++rotations[f.cluster],
                              tokenRng());
        }
        if (hooks.rotateToken) hooks.rotateToken(f.cluster, token);
        s.rotateToken(token);
        std::lock_guard<std::mutex> lock(mu);
        tokens[f.cluster] = token;
        break;
      }
      case FaultKind::RestartServer: {
        // Even when stopping, a stopped server is started again: never leave one down.
        s.stop();
        sleepUntil(std::chrono::steady_clock::now() + f.duration);
        s.restartWithNewRvBase(s.currentResourceVersion() + f.value);
        s.start();
        break;
      }
      case FaultKind::KillWatcher:
        break;
    }
  }

  void run() {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& f : plan.faults) {
      if (!sleepUntil(start + f.at)) return;
      try {
        apply(f);
      } catch (const std::exception& e) {
        spdlog::warn("fault injector: {} failed: {}", f.describe(), e.what());
      }
      std::lock_guard<std::mutex> lock(mu);
      applied.push_back(f.describe());
    }
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  }
};

FaultInjector::FaultInjector(FaultPlan plan,
                             std::map<std::string, std::reference_wrapper<ApiServer>> servers,
                             FaultHooks hooks, std::string tokenPrefix)
    : state_(std::make_unique<State>()) {
  state_->tokenRng.seed(plan.seed ^ 0x746f6b656e73ULL);  // "tokens": a stream apart from the plan's
  state_->plan = std::move(plan);
  state_->servers = std::move(servers);
  state_->hooks = std::move(hooks);
  state_->tokenPrefix = std::move(tokenPrefix);
  for (const auto& [name, server] : state_->servers) state_->tokens[name] = server.get().token();
}

FaultInjector::~FaultInjector() { stop(); }

void FaultInjector::start() {
  if (state_->thread.joinable()) return;
  state_->thread = std::thread([s = state_.get()] { s->run(); });
}

void FaultInjector::stop() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
}

bool FaultInjector::waitUntilDone(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [&] { return state_->done; });
}

std::vector<std::string> FaultInjector::applied() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->applied;
}

std::string FaultInjector::currentToken(const std::string& cluster) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->tokens.find(cluster);
  return it == state_->tokens.end() ? std::string() : it->second;
}

}  // namespace firstwork::sim
