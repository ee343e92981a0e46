#include "firstwork/inventory/pool_tracker.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <utility>
#include <vector>

namespace firstwork::inventory {

std::string_view poolStateName(PoolState state) {
  switch (state) {
    case PoolState::Complete: return "complete";
    case PoolState::Incomplete: return "incomplete";
    case PoolState::Stale: return "stale";
  }
  return "complete";
}

std::string_view unavailableReasonName(UnavailableReason reason) {
  switch (reason) {
    case UnavailableReason::PoolIncomplete: return "pool_incomplete";
    case UnavailableReason::PoolStale: return "pool_stale";
    case UnavailableReason::Duplicate: return "duplicate";
    case UnavailableReason::NodeNotReady: return "node_not_ready";
    case UnavailableReason::NodeUnschedulable: return "node_unschedulable";
    case UnavailableReason::Tainted: return "tainted";
  }
  return "pool_incomplete";
}

std::string_view poolProblemName(PoolProblem problem) {
  switch (problem) {
    case PoolProblem::None: return "";
    case PoolProblem::SliceCountMismatch: return "resource_slice_count_mismatch";
    case PoolProblem::DuplicateDeviceNames: return "duplicate_device_names";
  }
  return "";
}

namespace {

bool hasBlockingTaint(const model::Device& device) {
  // Effect None is informational (KEP-5055): it never keeps a device from being allocated.
  return std::any_of(device.taints.begin(), device.taints.end(), [](const model::DeviceTaint& t) {
    return t.effect == "NoSchedule" || t.effect == "NoExecute";
  });
}

bool wellFormed(const model::ResourceSlice& slice) {
  return !slice.meta.name.empty() && !slice.driver.empty() && !slice.poolName.empty() &&
         slice.resourceSliceCount >= 1 && slice.poolGeneration >= 0;
}

}  // namespace

bool PoolTracker::onSlice(std::string_view cluster, model::EventType type,
                          const model::ResourceSlice& slice, SystemTime at) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return true;
  return onSlice(cluster, type, std::make_shared<const model::ResourceSlice>(slice), at);
}

bool PoolTracker::onSlice(std::string_view cluster, model::EventType type,
                          std::shared_ptr<const model::ResourceSlice> shared, SystemTime at) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error || !shared) return true;
  const model::ResourceSlice& slice = *shared;
  advanceTo(at);
  const SystemTime effective = now_;
  const std::string_view name = slice.meta.name;

  if (type == model::EventType::Deleted) {
    if (name.empty()) {
      ++rejected_slices_;
      return false;
    }
    removeSlice(cluster, name, effective);
    return true;
  }

  if (!wellFormed(slice)) {
    ++rejected_slices_;
    return false;
  }

  // Found by views: a republished slice (the common event) makes no key, and its index entry
  // stays as it is.
  const std::array<std::string_view, 3> pool_key{cluster, slice.driver, slice.poolName};
  auto indexed = slice_index_.find(std::array<std::string_view, 2>{cluster, name});
  // An update may move a slice to another pool (spec.pool.name is not immutable).
  if (indexed != slice_index_.end() && !std::equal(indexed->second.begin(), indexed->second.end(),
                                                   pool_key.begin(), pool_key.end())) {
    removeSlice(cluster, name, effective);
    indexed = slice_index_.end();
  }
  auto pit = pools_.find(pool_key);
  const bool created = pit == pools_.end();
  if (created) {
    pit = pools_.emplace(PoolKey{std::string(cluster), slice.driver, slice.poolName}, Pool{}).first;
    Pool& pool = pit->second;
    pool.cluster = pit->first[0];
    pool.driver = pit->first[1];
    pool.pool = pit->first[2];
    pool.since = effective;
    // The counter series exists from the first pool of a driver on, starting at zero.
    driver_time_.try_emplace({pool.cluster, pool.driver});
  }
  Pool& pool = pit->second;
  if (auto held = pool.slices.find(name); held != pool.slices.end()) {
    held->second = std::move(shared);
  } else {
    pool.slices.emplace(std::string(name), std::move(shared));
  }
  if (indexed == slice_index_.end()) {
    slice_index_.emplace(SliceKey{std::string(cluster), std::string(name)}, pit->first);
  }
  evaluate(pool, effective, created);
  return true;
}

void PoolTracker::removeSlice(std::string_view cluster, std::string_view name, SystemTime at) {
  auto it = slice_index_.find(std::array<std::string_view, 2>{cluster, name});
  if (it == slice_index_.end()) return;
  auto pit = pools_.find(it->second);
  slice_index_.erase(it);
  if (pit == pools_.end()) return;
  if (auto held = pit->second.slices.find(name); held != pit->second.slices.end()) {
    pit->second.slices.erase(held);
  }
  if (pit->second.slices.empty()) {
    countPool(pit->second, -1);
    pools_.erase(pit);
  } else {
    evaluate(pit->second, at, false);
  }
}

void PoolTracker::evaluate(Pool& pool, SystemTime at, bool created) {
  int64_t generation = 0;
  bool first = true;
  for (const auto& [name, held] : pool.slices) {
    const model::ResourceSlice& slice = *held;
    if (first || slice.poolGeneration > generation) generation = slice.poolGeneration;
    first = false;
  }
  int64_t seen = 0;
  int64_t stale = 0;
  int64_t expected = 0;
  bool mismatch = false;  // the current generation's slices announce different counts
  for (const auto& [name, held] : pool.slices) {
    const model::ResourceSlice& slice = *held;
    if (slice.poolGeneration == generation) {
      if (seen > 0 && slice.resourceSliceCount != expected) mismatch = true;
      ++seen;
      expected = std::max(expected, slice.resourceSliceCount);
    } else {
      ++stale;
    }
  }
  const bool incomplete = mismatch || seen != expected;
  bool duplicate = false;
  if (!incomplete) {
    // Like the allocator, only complete pools are validated; counter-set slices carry no devices.
    // (Sorted views, not a set: a set's node a device cost more than the rest of the event.)
    std::vector<std::string_view> names;
    for (const auto& [name, held] : pool.slices) {
      const model::ResourceSlice& slice = *held;
      if (slice.poolGeneration != generation) continue;
      for (const auto& device : slice.devices) names.emplace_back(device.name);
    }
    std::sort(names.begin(), names.end());
    duplicate = std::adjacent_find(names.begin(), names.end()) != names.end();
  }
  PoolState state = PoolState::Complete;
  if (incomplete || duplicate) {
    state = PoolState::Incomplete;
  } else if (stale > 0) {
    state = PoolState::Stale;
  }
  if (!created) countPool(pool, -1);  // by the state and problem it was counted with
  pool.generation = generation;
  pool.slicesSeen = seen;
  pool.slicesExpected = expected;
  pool.staleSlices = stale;
  pool.problem = mismatch    ? PoolProblem::SliceCountMismatch
                 : duplicate ? PoolProblem::DuplicateDeviceNames
                             : PoolProblem::None;
  if (created || state != pool.state) pool.since = at;
  pool.state = state;
  countPool(pool, +1);
}

void PoolTracker::advanceTo(SystemTime at) {
  if (!started_) {
    started_ = true;
    now_ = at;
    return;
  }
  if (at <= now_) return;
  const auto dt = std::chrono::duration_cast<std::chrono::nanoseconds>(at - now_);
  for (auto& [key, time] : driver_time_) time.incomplete += dt * time.notComplete();
  now_ = at;
}

void PoolTracker::clearCluster(std::string_view cluster, SystemTime at) {
  advanceTo(at);
  for (auto it = pools_.begin(); it != pools_.end();) {
    if (it->first[0] != cluster) {
      ++it;
      continue;
    }
    countPool(it->second, -1);
    it = pools_.erase(it);
  }
  for (auto it = slice_index_.begin(); it != slice_index_.end();) {
    it = it->first[0] == cluster ? slice_index_.erase(it) : std::next(it);
  }
}

void PoolTracker::countPool(const Pool& pool, int64_t sign) {
  auto it = driver_time_.find(std::array<std::string_view, 2>{pool.cluster, pool.driver});
  if (it == driver_time_.end()) return;
  it->second.byState[static_cast<size_t>(pool.state)] += sign;
  if (pool.problem != PoolProblem::None) it->second.invalid += sign;
}

template <typename Fn>
void PoolTracker::visitDevices(const Pool& pool, Fn&& fn) const {
  std::optional<UnavailableReason> current_reason;
  if (pool.state == PoolState::Incomplete) {
    current_reason = pool.problem == PoolProblem::DuplicateDeviceNames
                         ? UnavailableReason::Duplicate
                         : UnavailableReason::PoolIncomplete;
  }
  for (const auto& [name, held] : pool.slices) {
    const model::ResourceSlice& slice = *held;
    if (slice.poolGeneration != pool.generation) continue;
    for (const auto& device : slice.devices) {
      DeviceView view;
      view.cluster = pool.cluster;
      view.driver = pool.driver;
      view.pool = pool.pool;
      view.nodeName = slice.nodeName;
      view.device = &device;
      view.poolReason = current_reason;
      view.tainted = hasBlockingTaint(device);
      if (!fn(view)) return;
    }
  }
  if (pool.staleSlices == 0) return;
  // Devices only older generations still publish: counted once each, as stale leftovers.
  std::set<std::string_view> current_names;
  for (const auto& [name, held] : pool.slices) {
    const model::ResourceSlice& slice = *held;
    if (slice.poolGeneration != pool.generation) continue;
    for (const auto& device : slice.devices) current_names.insert(device.name);
  }
  std::set<std::string_view> stale_names;
  for (const auto& [name, held] : pool.slices) {
    const model::ResourceSlice& slice = *held;
    if (slice.poolGeneration == pool.generation) continue;
    for (const auto& device : slice.devices) {
      if (current_names.count(device.name) > 0 || !stale_names.insert(device.name).second) continue;
      DeviceView view;
      view.cluster = pool.cluster;
      view.driver = pool.driver;
      view.pool = pool.pool;
      view.nodeName = slice.nodeName;
      view.device = &device;
      view.poolReason = UnavailableReason::PoolStale;
      view.tainted = hasBlockingTaint(device);
      if (!fn(view)) return;
    }
  }
}

std::vector<PoolStatus> PoolTracker::poolHeaders() const {
  std::vector<PoolStatus> out;
  out.reserve(pools_.size());
  for (const auto& [key, pool] : pools_) {
    PoolStatus s;
    s.cluster = pool.cluster;
    s.driver = pool.driver;
    s.pool = pool.pool;
    s.generation = pool.generation;
    s.slicesSeen = pool.slicesSeen;
    s.slicesExpected = pool.slicesExpected;
    s.staleSlices = pool.staleSlices;
    s.state = pool.state;
    s.problem = pool.problem;
    s.since = pool.since;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<PoolStatus> PoolTracker::pools(const NodeReasonFn& nodeReason) const {
  std::vector<PoolStatus> out = poolHeaders();
  auto s = out.begin();
  for (const auto& [key, pool] : pools_) {
    visitDevices(pool, [&](const DeviceView& view) {
      ++s->devices;
      if (view.device->consumesCounters) ++s->partitionDevices;
      std::optional<UnavailableReason> reason = view.poolReason;
      if (!reason && nodeReason && !view.nodeName.empty()) {
        reason = nodeReason(view.cluster, view.nodeName);
      }
      if (!reason && view.tainted) reason = UnavailableReason::Tainted;
      if (reason) {
        ++s->unavailable;
        ++s->unavailableByReason[static_cast<size_t>(*reason)];
      } else {
        ++s->usable;
      }
      return true;
    });
    ++s;
  }
  return out;
}

std::vector<PoolCount> PoolTracker::poolCounts() const {
  std::vector<PoolCount> out;
  for (const auto& [key, time] : driver_time_) {
    if (time.noPools()) continue;  // a driver whose pools are gone keeps its counter only
    PoolCount c;
    c.cluster = key[0];
    c.driver = key[1];
    c.byState = time.byState;
    c.invalid = time.invalid;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<PoolSecondsTotal> PoolTracker::incompleteSeconds() const {
  std::vector<PoolSecondsTotal> out;
  out.reserve(driver_time_.size());
  for (const auto& [key, time] : driver_time_) {
    out.push_back(PoolSecondsTotal{key[0], key[1], time.incomplete});
  }
  return out;
}

void PoolTracker::forEachDevice(std::string_view cluster,
                                const std::function<void(const DeviceView&)>& fn) const {
  // Pools are ordered by cluster first, so one cluster's pools are a contiguous range.
  auto it = pools_.lower_bound(std::array<std::string_view, 3>{cluster, {}, {}});
  for (; it != pools_.end() && it->first[0] == cluster; ++it) {
    visitDevices(it->second, [&](const DeviceView& view) {
      fn(view);
      return true;
    });
  }
}

void PoolTracker::forEachPoolDevice(std::string_view cluster, std::string_view driver,
                                    std::string_view pool,
                                    const std::function<void(const DeviceView&)>& fn) const {
  auto it = pools_.find(std::array<std::string_view, 3>{cluster, driver, pool});
  if (it == pools_.end()) return;
  visitDevices(it->second, [&](const DeviceView& view) {
    fn(view);
    return true;
  });
}

std::optional<std::pair<std::string, std::string>> PoolTracker::poolOfSlice(
    std::string_view cluster, std::string_view name) const {
  auto it = slice_index_.find(std::array<std::string_view, 2>{cluster, name});
  if (it == slice_index_.end()) return std::nullopt;
  return std::make_pair(it->second[1], it->second[2]);
}

std::optional<DeviceView> PoolTracker::findDevice(std::string_view cluster,
                                                  std::string_view driver, std::string_view pool,
                                                  std::string_view device) const {
  auto it = pools_.find(std::array<std::string_view, 3>{cluster, driver, pool});
  if (it == pools_.end()) return std::nullopt;
  std::optional<DeviceView> found;
  visitDevices(it->second, [&](const DeviceView& view) {
    if (view.device->name != device) return true;
    found = view;
    return false;
  });
  return found;
}

size_t PoolTracker::sliceCount() const { return slice_index_.size(); }

}  // namespace firstwork::inventory
