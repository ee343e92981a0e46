#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "firstwork/model/meta.hpp"

namespace firstwork::model {

/// One request of a ResourceClaim (v1 `exactly`, or the v1beta1 flat shape; for `firstAvailable`
/// the first alternative is kept and `firstAvailable` is set).
/// 48 bytes where it was 112: the names are Interned (a few request and DeviceClass names
/// repeat on every claim), the selectors a CompactVector and the flags together (one or two a
/// claim, 50,000 claims at the benchmark's full estate: bench/README.md, change 84).
struct DeviceRequest {
  Interned name;
  Interned deviceClassName;
  int64_t count = 1;
  /// selectors[].cel.expression (each truncated to 1 KiB). NVIDIA's MIG DeviceClass leaves the
  /// profile to them, so they are the only place a MIG request names its profile.
  CompactVector<std::string> selectors;
  bool allocationModeAll = false;
  bool firstAvailable = false;
  bool operator==(const DeviceRequest&) const = default;
};

/// status.allocation.devices.results[].
struct DeviceAllocation {
  Interned request;
  Interned driver;
  Interned pool;
  Interned device;
  bool operator==(const DeviceAllocation&) const = default;
};

/// resource.k8s.io ResourceClaim (v1, v1beta2, v1beta1).
struct ResourceClaim {
  ObjectMeta meta;
  CompactVector<DeviceRequest> requests;
  bool allocated = false;  // status.allocation present
  CompactVector<DeviceAllocation> allocations;
  std::optional<SystemTime> allocationTimestamp;
  /// status.reservedFor[] entries that are pods (resource "pods", the core group): their uids,
  /// all firstwork reads of the list (a claim's change marks its pods for a recount). Other
  /// consumers and every consumer's name are dropped when a claim is decoded: two strings and a
  /// tree of 96 bytes an entry less for each of 50,000 claims (bench/README.md, change 65); each
  /// uid inline (change 69).
  CompactVector<SmallString> reservedForPods;
};

/// A device attribute value, reduced to string form ("gpu", "1g.10gb", "true", "80").
struct DeviceAttribute {
  Interned name;  // qualified name as published, e.g. "type" or "gpu.nvidia.com/profile"
  /// Shared when at most kPooledAttributeBytes long: a node's devices, and the nodes of one
  /// model, publish the same product, architecture, driver and PCI values; longer values (GPU
  /// UUIDs, "GPU-" and 36 characters) are unique and owned.
  Interned value;
};

/// Device attribute values up to this long are pooled (see Interned::pooledUpTo).
inline constexpr size_t kPooledAttributeBytes = 32;

struct DeviceTaint {
  Interned key;
  std::string value;
  Interned effect;  // None | NoSchedule | NoExecute
};

/// A device in a ResourceSlice (v1 flat, or v1beta1 `basic:` unwrapped).
/// 56 bytes (its lists CompactVectors, its flags together): a slice's 8 devices take jemalloc's
/// 448-byte class, where 80-byte devices took the 640 (bench/README.md, change 79).
struct Device {
  Interned name;  // "gpu-0": the same names in every slice
  /// String/int/bool/version attributes, stringified; in the daemon only those it reads
  /// (DecodeOptions::deviceAttributes, change 78).
  CompactVector<DeviceAttribute> attributes;
  CompactVector<DeviceTaint> taints;
  /// Per-device node selection (slice spec.perDeviceNodeSelection): the device's own nodeName or
  /// allNodes. Empty/false for devices of slices that select the node at slice level.
  Interned nodeName;
  bool allNodes = false;
  bool consumesCounters = false;  // partitionable device
};

/// resource.k8s.io ResourceSlice.
struct ResourceSlice {
  ObjectMeta meta;
  Interned driver;
  Interned poolName;
  int64_t poolGeneration = 0;
  int64_t resourceSliceCount = 0;
  Interned nodeName;  // empty with allNodes / nodeSelector
  bool allNodes = false;
  bool perDeviceNodeSelection = false;  // each device names its node (Device::nodeName/allNodes)
  std::vector<Device> devices;
  bool sharedCounters = false;  // slice publishes counter sets (partitionable devices)
};

}  // namespace firstwork::model
