// Sharing modes of NVIDIA extended resources, read from the node labels that NVIDIA's GPU feature
// discovery (GFD, part of the GPU operator and of the device plugin's Helm chart) publishes, and
// the unit each device class counts.
//
// Label sources (NVIDIA/k8s-device-plugin, GFD's labelers):
//  * `<resource>.product`, `<resource>.count`, `<resource>.replicas`,
//    `<resource>.sharing-strategy` — internal/lm/resource.go @ aaccdfd2 (baseLabeler). `replicas`
//    is 0 when sharing is disabled for the resource, 1 when not shared, N > 1 with N replicas per
//    device; `sharing-strategy` is `none` unless replicas > 1, then `time-slicing` or `mps`
//    (api/config/v1/sharing.go @ 03973a97); the product gets a `-SHARED` suffix when the resource
//    is shared and not renamed (getProductName). Older GFD (internal/lm/resource.go @ 02f65cca)
//    wrote no `sharing-strategy` label and knew only time-slicing.
//  * renamed shares: `<resource>.shared` (DefaultSharedResourceNameSuffix,
//    api/config/v1/consts.go @ 05ff6e80); the labels stay under the original resource name.
//  * `nvidia.com/mig.strategy` = `single` | `mixed` (internal/lm/strategy.go @ d03f4aa0; `none`
//    writes no label). Mixed: one resource `nvidia.com/mig-<profile>` per MIG profile with its own
//    product/count/replicas labels. Single: `nvidia.com/gpu` counts MIG devices, and the MIG
//    labeler overrides `nvidia.com/gpu.product` with `<model>-MIG-<profile>` and
//    `nvidia.com/gpu.count` with the number of MIG devices; an invalid single-strategy layout is
//    published as product `<model>-MIG-INVALID` with count 0 (internal/lm/mig-strategy.go
//    @ 062f0903). A single-strategy node whose GPUs have MIG disabled gets plain GPU labels.
#include <algorithm>
#include <charconv>

#include "firstwork/inventory/inventory.hpp"

namespace firstwork::inventory {

namespace {

constexpr std::string_view kMigStrategyLabel = "nvidia.com/mig.strategy";
constexpr std::string_view kSharedProductSuffix = "-SHARED";
constexpr std::string_view kMigProductInfix = "-MIG-";
constexpr std::string_view kInvalidMigProfile = "INVALID";
constexpr std::string_view kNvidiaGpuResource = "nvidia.com/gpu";
constexpr std::string_view kNvidiaMigResourcePrefix = "nvidia.com/mig-";

const SmallString* resourceLabel(const model::KeyValues& labels, std::string_view resource,
                                 std::string_view suffix) {
  std::string key(resource);
  key += '.';
  key += suffix;
  return model::findValue(labels, key);
}

std::optional<int64_t> parseCount(std::string_view v) {
  int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || ptr != v.data() + v.size() || n < 0) return std::nullopt;
  return n;
}

NodeSharing unknown(NodeSharing s, std::string problem) {
  s.mode = SharingMode::Unknown;
  s.problem = std::move(problem);
  return s;
}

}  // namespace

std::string_view unitName(Unit unit) {
  switch (unit) {
    case Unit::Gpu: return "gpu";
    case Unit::Mig: return "mig";
    case Unit::Share: return "share";
    case Unit::Device: return "device";
    case Unit::Unknown: break;
  }
  return "unknown";
}

std::string_view sharingModeName(SharingMode mode) {
  switch (mode) {
    case SharingMode::Exclusive: return "exclusive";
    case SharingMode::TimeSlicing: return "time-slicing";
    case SharingMode::Mps: return "mps";
    case SharingMode::MigSingle: return "mig-single";
    case SharingMode::MigMixed: return "mig-mixed";
    case SharingMode::Unlabelled: return "unlabelled";
    case SharingMode::Unknown: break;
  }
  return "unknown";
}

NodeSharing readNodeSharing(const model::KeyValues& labels, std::string_view resource) {
  NodeSharing s;
  const bool renamed = resource.ends_with(kSharedClassSuffix);
  // Renamed shares carry their labels under the original name.
  const std::string_view base =
      renamed ? resource.substr(0, resource.size() - kSharedClassSuffix.size()) : resource;
  const bool migResource = base.starts_with(kNvidiaMigResourcePrefix);
  if (migResource) s.migProfile = std::string(base.substr(kNvidiaMigResourcePrefix.size()));

  const SmallString* replicas = resourceLabel(labels, base, "replicas");
  const SmallString* strategy = resourceLabel(labels, base, "sharing-strategy");
  const SmallString* product = resourceLabel(labels, base, "product");
  const SmallString* count = resourceLabel(labels, base, "count");
  const SmallString* migStrategy = model::findValue(labels, kMigStrategyLabel);
  if (strategy != nullptr) s.strategy = *strategy;
  if (migStrategy != nullptr) s.migStrategy = *migStrategy;
  if (product != nullptr) {
    s.product = *product;
    s.productShared = product->ends_with(kSharedProductSuffix);
  }
  if (count != nullptr) {
    s.count = parseCount(*count);
    if (!s.count) return unknown(s, "unparsable " + std::string(base) + ".count \"" + *count + "\"");
  }
  if (replicas != nullptr) {
    const auto n = parseCount(*replicas);
    if (!n) {
      return unknown(s, "unparsable " + std::string(base) + ".replicas \"" + *replicas + "\"");
    }
    s.replicas = std::max<int64_t>(*n, 1);  // 0: sharing disabled for the resource
  }
  const bool labelled =
      replicas != nullptr || strategy != nullptr || product != nullptr || count != nullptr;

  // MIG single strategy: nvidia.com/gpu counts MIG devices of the one profile in the product.
  if (base == kNvidiaGpuResource && migStrategy != nullptr && *migStrategy == "single") {
    std::string_view p = s.product;
    if (p.ends_with(kSharedProductSuffix)) p.remove_suffix(kSharedProductSuffix.size());
    const size_t at = p.rfind(kMigProductInfix);
    if (at != std::string_view::npos) {
      const std::string_view profile = p.substr(at + kMigProductInfix.size());
      if (profile.empty() || profile == kInvalidMigProfile) {
        return unknown(s, "GPU feature discovery reports an invalid mig.strategy=single layout "
                          "(product \"" + s.product + "\")");
      }
      s.migProfile = std::string(profile);
      s.migSingle = true;
    } else if (product == nullptr) {
      return unknown(s, "mig.strategy=single without a nvidia.com/gpu.product label: the MIG "
                        "profile the resource counts is unknown");
    }
  } else if (migStrategy != nullptr && *migStrategy != "single" && *migStrategy != "mixed" &&
             *migStrategy != "none" && (base == kNvidiaGpuResource || migResource)) {
    return unknown(s, "unknown nvidia.com/mig.strategy \"" + *migStrategy + "\"");
  }

  if (strategy != nullptr && *strategy != "none" && *strategy != "time-slicing" &&
      *strategy != "mps") {
    return unknown(s, "unknown " + std::string(base) + ".sharing-strategy \"" + *strategy + "\"");
  }
  const bool shared = renamed || s.replicas > 1 || s.productShared;
  if (shared) {
    if (strategy != nullptr && *strategy == "none") {
      return unknown(s, std::string(base) + ".sharing-strategy is none but the resource is " +
                            "shared (replicas " + std::to_string(s.replicas) +
                            (s.productShared ? ", -SHARED product" : "") + ")");
    }
    // The physical devices behind the shares come from the replica count (or the count label).
    if (s.replicas <= 1 && !s.count) {
      return unknown(s, "shares of " + std::string(base) +
                            " without a replica count: the physical devices behind them are "
                            "unknown");
    }
    // GFD before the sharing-strategy label knew only time-slicing.
    s.mode = strategy != nullptr && *strategy == "mps" ? SharingMode::Mps : SharingMode::TimeSlicing;
    return s;
  }
  if (strategy != nullptr && *strategy != "none") {
    return unknown(s, std::string(base) + ".sharing-strategy is " + *strategy +
                          " but the resource is not shared (replicas " +
                          std::to_string(s.replicas) + ")");
  }
  if (s.migSingle) {
    s.mode = SharingMode::MigSingle;
  } else if (migResource) {
    s.mode = SharingMode::MigMixed;  // the resource name itself names the profile
  } else {
    s.mode = labelled ? SharingMode::Exclusive : SharingMode::Unlabelled;
  }
  return s;
}

std::optional<std::string> sharingClass(std::string_view resource, const NodeSharing& sharing) {
  if (sharing.mode == SharingMode::Unknown) return std::nullopt;
  const bool renamed = resource.ends_with(kSharedClassSuffix);
  std::string device_class =
      sharing.migSingle
          ? std::string(kNvidiaMigResourcePrefix) + sharing.migProfile
          : std::string(renamed ? resource.substr(0, resource.size() - kSharedClassSuffix.size())
                                : resource);
  if (renamed || sharing.shared()) device_class += kSharedClassSuffix;
  return device_class;
}

Unit Inventory::unitOf(std::string_view deviceClass) const {
  if (deviceClass.ends_with(kSharedClassSuffix)) return Unit::Share;
  if (deviceClass == kNvidiaGpuResource || deviceClass == config_.nvidiaDriver) return Unit::Gpu;
  if (deviceClass.starts_with(kNvidiaMigResourcePrefix)) return Unit::Mig;
  const std::string draMig = config_.nvidiaDriver + std::string(kMigClassInfix);
  if (deviceClass.starts_with(draMig)) return Unit::Mig;
  return Unit::Device;
}

Unit Inventory::physicalUnitOf(std::string_view deviceClass) const {
  if (!deviceClass.ends_with(kSharedClassSuffix)) return unitOf(deviceClass);
  return unitOf(deviceClass.substr(0, deviceClass.size() - kSharedClassSuffix.size()));
}

}  // namespace firstwork::inventory
