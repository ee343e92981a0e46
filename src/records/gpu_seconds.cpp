// Durable GPU-seconds by state: periodic increments of the live counters (see GpuSecondsRecorder).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/records/records.hpp"

namespace firstwork::records {
namespace {

int64_t unixMs(SystemTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

std::string gpuSecondsJson(const GpuSecondsPeriod& period) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& i : period.items)
    items.push_back({{"cluster", i.cluster},
                     {"cluster_queue", i.clusterQueue},
                     {"device_class", i.deviceClass},
                     {"unit", i.unit},
                     {"state", i.state},
                     {"gpu_seconds", i.gpuSeconds}});
  return nlohmann::json{{"from", formatRfc3339(period.from)},
                        {"to", formatRfc3339(period.to)},
                        {"items", items}}
      .dump();
}

GpuSecondsRecorder::GpuSecondsRecorder(SystemTime start, std::chrono::seconds period)
    : period_(period), periodStart_(start) {}

std::optional<store::Record> GpuSecondsRecorder::onSnapshot(const engine::Snapshot& snapshot,
                                                            SystemTime now, bool flush) {
  // Capacity gauges are piecewise constant between snapshots: the value seen at the previous
  // call held until this one.
  if (lastCall_ && *lastCall_ < now) {
    const double secs = toSeconds(now - *lastCall_);
    for (const auto& [key, gpus] : capacityNow_) capacity_[key] += static_cast<double>(gpus) * secs;
  }
  capacityNow_.clear();
  for (const auto& g : snapshot.gpus)
    if (g.state == "published" || g.state == "usable")
      capacityNow_[{g.cluster, "", g.deviceClass, g.unit, g.state}] += g.gpus;
  lastCall_ = now;

  if (!(periodStart_ < now) || (!flush && now - periodStart_ < period_)) return std::nullopt;
  GpuSecondsPeriod p{periodStart_, now, {}};
  periodStart_ = now;
  for (const auto& c : snapshot.gpuSeconds) {
    Key key{c.cluster, c.clusterQueue, c.deviceClass, c.unit,
            std::string(engine::gpuStateName(c.state))};
    double& written = written_[key];
    // Counters are cumulative for the process lifetime; a period carries its increase.
    if (c.seconds - written > 1e-9)
      p.items.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                         std::get<4>(key), c.seconds - written});
    written = std::max(written, c.seconds);
  }
  for (const auto& [key, secs] : capacity_)
    if (secs > 0)
      p.items.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                         std::get<4>(key), secs});
  capacity_.clear();
  if (p.items.empty()) return std::nullopt;
  return store::Record{kGpuSecondsKind,
                       fmt::format("gpus/{}/{}", unixMs(p.from), unixMs(p.to)),
                       "",
                       "",
                       p.from,
                       gpuSecondsJson(p),
                       store::WriteMode::InsertOnce};
}

}  // namespace firstwork::records
