#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/strings_less.hpp"
#include "firstwork/model/decode.hpp"  // model::EventType
#include "firstwork/model/dra.hpp"

namespace firstwork::inventory {

/// State of one DRA resource pool, as the `state` label of `firstwork_dra_pools`.
///  - complete:   the highest generation present has exactly `resourceSliceCount` slices, they
///                agree on that count and on unique device names, and no older slice is left;
///  - incomplete: the highest generation has fewer (or more) slices than announced, its slices
///                disagree on `resourceSliceCount`, or its device names are not unique (invalid);
///  - stale:      the highest generation is complete but slices of an older generation are still
///                present (a driver update that has not cleaned up yet).
/// When a pool is both incomplete and has older slices left, it is `incomplete` (its devices are
/// not allocatable at all, which is the stronger statement); `PoolStatus::staleSlices` still
/// shows the leftovers.
enum class PoolState : uint8_t { Complete, Incomplete, Stale };
inline constexpr size_t kPoolStateCount = 3;
/// "complete" | "incomplete" | "stale".
std::string_view poolStateName(PoolState state);

/// Why a device counts as unavailable (the `reason` of unavailable devices; one per device, the
/// first that applies in this order):
///  1. pool_incomplete    — device of the current generation of an incomplete pool (Kubernetes
///                          does not allocate from incomplete pools);
///  2. pool_stale         — device published only by slices of an older generation;
///  3. duplicate          — device of a complete pool whose device names are not unique (the
///                          scheduler treats the whole pool as invalid);
///  4. node_not_ready     — the device's node is not Ready, or unknown (deleted, not listed yet);
///  5. node_unschedulable — the device's node is cordoned (`spec.unschedulable`);
///  6. tainted            — a NoSchedule/NoExecute taint on the device (DRA) or on its node
///                          (except tolerated taint keys, see InventoryConfig).
/// The order follows the Kubernetes allocator: incomplete pools are not validated at all, and
/// pool-level verdicts hold regardless of node state.
enum class UnavailableReason : uint8_t {
  PoolIncomplete,
  PoolStale,
  Duplicate,
  NodeNotReady,
  NodeUnschedulable,
  Tainted,
};
inline constexpr size_t kUnavailableReasonCount = 6;
/// "pool_incomplete" | "pool_stale" | "duplicate" | "node_not_ready" | "node_unschedulable" |
/// "tainted".
std::string_view unavailableReasonName(UnavailableReason reason);

/// Device counts per unavailability reason, indexed by `static_cast<size_t>(UnavailableReason)`.
using ReasonCounts = std::array<int64_t, kUnavailableReasonCount>;

/// What is wrong with a pool whose slices contradict each other (an *invalid* pool). Invalid
/// pools have state `incomplete`; they are also counted in `PoolCount::invalid`.
enum class PoolProblem : uint8_t {
  None,
  SliceCountMismatch,    // slices of the current generation disagree on resourceSliceCount
  DuplicateDeviceNames,  // a device name appears twice among the current generation's slices
};
/// "" | "resource_slice_count_mismatch" | "duplicate_device_names".
std::string_view poolProblemName(PoolProblem problem);

/// Per-pool detail for `/api/v1/pools`.
struct PoolStatus {
  std::string cluster;
  std::string driver;
  std::string pool;
  int64_t generation = 0;          // highest generation present
  int64_t slicesSeen = 0;          // slices of that generation present
  int64_t slicesExpected = 0;      // its resourceSliceCount (the largest announced on mismatch)
  int64_t staleSlices = 0;         // slices of older generations still present
  PoolState state = PoolState::Complete;
  PoolProblem problem = PoolProblem::None;
  SystemTime since{};              // when the pool entered `state` (event time)
  /// Distinct devices: every device of the current generation, plus devices that only older
  /// slices still publish (counted once, as pool_stale). Counter-set slices carry no devices.
  int64_t devices = 0;
  int64_t usable = 0;
  int64_t unavailable = 0;
  ReasonCounts unavailableByReason{};
  /// Devices that consume shared counters (partitionable devices): they are overlapping
  /// partitions of the same hardware, not all allocatable at once.
  int64_t partitionDevices = 0;
};

/// Number of pools per (cluster, driver, state): the `firstwork_dra_pools` gauge. Every state of a
/// (cluster, driver) that currently has at least one pool is listed, zeros included; a driver
/// whose pools are all gone is omitted (so its series go away).
struct PoolCount {
  std::string cluster;
  std::string driver;
  std::array<int64_t, kPoolStateCount> byState{};  // indexed by PoolState
  int64_t invalid = 0;  // pools with a PoolProblem (already counted as incomplete)
};

/// Pool-seconds spent incomplete or stale per (cluster, driver): the
/// `firstwork_dra_pool_incomplete_seconds_total` counter. Monotonic; kept after the driver's
/// pools are gone (a counter never goes back).
struct PoolSecondsTotal {
  std::string cluster;
  std::string driver;
  std::chrono::nanoseconds total{0};
  double seconds() const { return toSeconds(total); }
};

/// A device as the pool tracker sees it. References stay valid until the next PoolTracker
/// mutation (onSlice / clear).
struct DeviceView {
  std::string_view cluster;
  std::string_view driver;
  std::string_view pool;
  std::string_view nodeName;  // slice spec.nodeName; empty for allNodes / nodeSelector slices
  const model::Device* device = nullptr;
  /// Reasons 1–3 of UnavailableReason (pool-level), unset when the pool allows allocation.
  std::optional<UnavailableReason> poolReason;
  /// A NoSchedule or NoExecute taint on the device itself (effect None does not count).
  bool tainted = false;
};

/// Node-level verdict for a node name, used to complete per-pool detail: reasons 4–6 or none.
using NodeReasonFn =
    std::function<std::optional<UnavailableReason>(std::string_view cluster, std::string_view node)>;

/// Tracks DRA ResourceSlices per (cluster, driver, pool) and interprets pools the way the
/// Kubernetes allocator does (k8s.io/dynamic-resource-allocation structured GatherPools): only
/// the highest generation present counts, a pool is complete iff that generation has exactly
/// resourceSliceCount slices, duplicate device names make it invalid, counter-set slices and
/// device slices are merged per pool. Pure (no I/O, no clock reads: times are passed in);
/// single-threaded — owned and called by the daemon's event-loop thread only.
///
/// Generation resets: the highest generation is computed over the slices *currently present*, not
/// the highest ever seen. A driver that resets its generation deletes the old slices; once they
/// are gone the lower generation is the highest present and the pool is judged on it. A slice of a
/// lower generation that arrives while higher-generation slices exist is kept but is stale.
class PoolTracker {
 public:
  /// Applies one watch event (Added/Modified/Deleted; Bookmark/Error are ignored and return
  /// true). `at` is the time the change took effect; ResourceSlices carry no transition
  /// timestamps, so the daemon passes the observation time. The time integral is first advanced
  /// to `at` with the old state. Times earlier than the last advance are clamped to it (time never
  /// runs backwards in the integral). Returns false, and counts the slice in `rejectedSlices()`,
  /// when an Added/Modified slice is malformed (no name, empty driver or pool name,
  /// resourceSliceCount < 1, negative generation) or a Deleted slice has no name; the previous
  /// version of that slice, if any, is kept unchanged. A Deleted event for an unknown slice is a
  /// no-op.
  bool onSlice(std::string_view cluster, model::EventType type, const model::ResourceSlice& slice,
               SystemTime at);
  /// Same, keeping `slice` itself rather than a copy: the daemon's reflector keeps the decoded
  /// slice for its relists, and a copy of every device and attribute doubled what a slice costs.
  bool onSlice(std::string_view cluster, model::EventType type,
               std::shared_ptr<const model::ResourceSlice> slice, SystemTime at);

  /// Integrates pool-seconds spent incomplete or stale up to `at` (no-op if `at` is not later
  /// than the last advance).
  void advanceTo(SystemTime at);

  /// Forgets every slice of `cluster` (e.g. the cluster was removed from the configuration),
  /// after advancing the integral to `at`. Counters already accumulated are kept.
  void clearCluster(std::string_view cluster, SystemTime at);

  /// Per-pool detail, sorted by (cluster, driver, pool). Without `nodeReason` the usable and
  /// unavailable figures reflect pool-level reasons and device taints only; the Inventory passes
  /// its node verdicts to complete them.
  std::vector<PoolStatus> pools(const NodeReasonFn& nodeReason = {}) const;
  /// pools() without the device figures (devices, usable, unavailable and partitionDevices are
  /// 0): the Inventory keeps those per pool and completes them without a pass over every device.
  std::vector<PoolStatus> poolHeaders() const;
  /// Pool counts per (cluster, driver), sorted.
  std::vector<PoolCount> poolCounts() const;
  /// Incomplete-or-stale pool-seconds per (cluster, driver), sorted; integrated up to the last
  /// advance.
  std::vector<PoolSecondsTotal> incompleteSeconds() const;

  /// Calls `fn` for every device of `cluster` (current generation and stale-only leftovers).
  void forEachDevice(std::string_view cluster, const std::function<void(const DeviceView&)>& fn) const;
  /// Calls `fn` for every device of one pool (nothing when the pool has no slices left).
  void forEachPoolDevice(std::string_view cluster, std::string_view driver, std::string_view pool,
                         const std::function<void(const DeviceView&)>& fn) const;
  /// The (driver, pool) the slice `name` of `cluster` is stored in, nullopt when unknown.
  std::optional<std::pair<std::string, std::string>> poolOfSlice(std::string_view cluster,
                                                                 std::string_view name) const;
  /// The device `driver/pool/device` of `cluster` as the allocator would see it (the current
  /// generation's copy when several generations publish it), or nullopt.
  std::optional<DeviceView> findDevice(std::string_view cluster, std::string_view driver,
                                       std::string_view pool, std::string_view device) const;

  /// Slices currently stored (all generations).
  size_t sliceCount() const;
  /// Malformed slices rejected so far.
  uint64_t rejectedSlices() const { return rejected_slices_; }
  /// Time of the last advance (the integral is exact up to here).
  SystemTime now() const { return now_; }

 private:
  struct Pool {
    std::string cluster;
    std::string driver;
    std::string pool;
    std::map<std::string, std::shared_ptr<const model::ResourceSlice>, std::less<>> slices;  // by name
    // Derived by evaluate():
    int64_t generation = 0;
    int64_t slicesSeen = 0;
    int64_t slicesExpected = 0;
    int64_t staleSlices = 0;
    PoolState state = PoolState::Complete;
    PoolProblem problem = PoolProblem::None;
    SystemTime since{};
  };
  using PoolKey = std::array<std::string, 3>;  // cluster, driver, pool
  using SliceKey = std::array<std::string, 2>;  // cluster, slice name

  void evaluate(Pool& pool, SystemTime at, bool created);
  void removeSlice(std::string_view cluster, std::string_view name, SystemTime at);
  /// Counts `pool` in (+1) or out of (-1) its driver's figures, by its state and problem now.
  void countPool(const Pool& pool, int64_t sign);
  template <typename Fn>
  void visitDevices(const Pool& pool, Fn&& fn) const;

  // Looked up by views (StringsLess): a slice's event finds its pool without making the keys.
  std::map<PoolKey, Pool, StringsLess> pools_;
  std::map<SliceKey, PoolKey, StringsLess> slice_index_;  // where each slice lives
  /// Per (cluster, driver): pool-seconds integrated so far, and its pools by state now, kept as
  /// pools change: advancing the integral and poolCounts() (at every rendering of the metrics)
  /// cost the drivers, not a pass over every pool (10,000 at the benchmark's estate;
  /// bench/README.md, change 103).
  struct DriverTime {
    std::chrono::nanoseconds incomplete{0};
    std::array<int64_t, kPoolStateCount> byState{};  // indexed by PoolState
    int64_t invalid = 0;                             // pools with a PoolProblem
    int64_t notComplete() const {
      return byState[static_cast<size_t>(PoolState::Incomplete)] +
             byState[static_cast<size_t>(PoolState::Stale)];
    }
    bool noPools() const {
      return notComplete() + byState[static_cast<size_t>(PoolState::Complete)] == 0;
    }
  };
  std::map<std::array<std::string, 2>, DriverTime, StringsLess> driver_time_;  // cluster, driver
  SystemTime now_{};
  bool started_ = false;
  uint64_t rejected_slices_ = 0;
};

}  // namespace firstwork::inventory
