#include "firstwork/inventory/inventory.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

namespace firstwork::inventory {

namespace {

constexpr std::string_view kNvidiaLabelPrefix = "nvidia.com/";
constexpr std::string_view kSharingStrategyLabel = "nvidia.com/gpu.sharing-strategy";
constexpr std::string_view kSharedProductSuffix = "-SHARED";

// Node taints the node lifecycle controller and `kubectl cordon` set: they are reported under the
// node's own reason rather than as a generic taint.
constexpr std::string_view kNotReadyTaint = "node.kubernetes.io/not-ready";
constexpr std::string_view kUnreachableTaint = "node.kubernetes.io/unreachable";
constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";

// Local lookups (firstwork_model's helpers are not needed for these few reads).
const std::string* labelValue(const model::KeyValues& kv, std::string_view key) {
  for (const auto& [k, v] : kv) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool conditionTrue(const std::vector<model::Condition>& conditions, std::string_view type) {
  for (const auto& c : conditions) {
    if (c.type == type) return c.status == model::ConditionStatus::True;
  }
  return false;
}

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

std::string objectKey(const model::ObjectMeta& meta) {
  std::string key = meta.namespace_;
  key += '/';
  key += meta.name;
  return key;
}

// Extended resources are whole numbers; milli-units only come from the quantity parser.
int64_t wholeUnits(int64_t milli) { return milli > 0 ? milli / 1000 : 0; }

// "<request>/<subrequest>" (firstAvailable) belongs to request "<request>".
std::string_view requestName(std::string_view result_request) {
  const size_t slash = result_request.find('/');
  return slash == std::string_view::npos ? result_request : result_request.substr(0, slash);
}

void addCount(std::map<std::pair<std::string, bool>, int64_t>& counts, std::string device_class,
              bool allocated, int64_t n) {
  if (n > 0) counts[{std::move(device_class), allocated}] += n;
}

std::vector<DeviceCount> toDeviceCounts(const std::map<std::pair<std::string, bool>, int64_t>& m) {
  std::vector<DeviceCount> out;
  out.reserve(m.size());
  for (const auto& [key, n] : m) out.push_back(DeviceCount{key.first, n, key.second});
  return out;
}

}  // namespace

Inventory::Inventory(InventoryConfig config) : config_(std::move(config)) {}

Inventory::ClusterState& Inventory::cluster(std::string_view name) {
  auto it = clusters_.find(name);
  if (it == clusters_.end()) it = clusters_.emplace(std::string(name), ClusterState{}).first;
  it->second.dirty = true;
  return it->second;
}

const Inventory::ClusterState* Inventory::findCluster(std::string_view name) const {
  auto it = clusters_.find(name);
  return it == clusters_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------
// Events

bool Inventory::onSlice(std::string_view cluster_name, model::EventType type,
                        const model::ResourceSlice& slice, SystemTime at) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return true;
  const bool ok = tracker_.onSlice(cluster_name, type, slice, at);
  if (ok) cluster(cluster_name);  // marks the figures dirty
  return ok;
}

bool Inventory::onNode(std::string_view cluster_name, model::EventType type,
                       const model::Node& node) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return true;
  if (node.meta.name.empty()) {
    ++rejected_objects_;
    return false;
  }
  ClusterState& state = cluster(cluster_name);
  if (type == model::EventType::Deleted) {
    if (auto it = state.nodes.find(node.meta.name); it != state.nodes.end()) state.nodes.erase(it);
    return true;
  }
  NodeRecord record;
  record.ready = conditionTrue(node.conditions, "Ready");
  record.unschedulable = node.unschedulable;
  for (const auto& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (taint.key == kNotReadyTaint || taint.key == kUnreachableTaint) {
      // The scheduler keeps pods off the node while the taint is there, even if the Ready
      // condition has already flipped back.
      record.ready = false;
    } else if (taint.key == kUnschedulableTaint) {
      record.unschedulable = true;
    } else if (std::find(config_.toleratedNodeTaintKeys.begin(),
                         config_.toleratedNodeTaintKeys.end(),
                         taint.key) == config_.toleratedNodeTaintKeys.end()) {
      record.tainted = true;
    }
  }
  for (const auto& [resource, milli] : node.allocatable) {
    if (tracked(resource)) record.allocatable.emplace_back(resource, milli);
  }
  for (const auto& [key, value] : node.meta.labels) {
    if (startsWith(key, kNvidiaLabelPrefix)) record.nvidiaLabels.emplace_back(key, value);
  }
  state.nodes.insert_or_assign(node.meta.name, std::move(record));
  return true;
}

bool Inventory::onPod(std::string_view cluster_name, model::EventType type, const model::Pod& pod) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return true;
  if (pod.meta.name.empty()) {
    ++rejected_objects_;
    return false;
  }
  ClusterState& state = cluster(cluster_name);
  const std::string key = objectKey(pod.meta);
  if (type == model::EventType::Deleted) {
    if (auto it = state.pods.find(key); it != state.pods.end()) state.pods.erase(it);
    return true;
  }
  PodRecord record;
  record.nodeName = pod.nodeName;
  record.terminated =
      pod.phase == model::PodPhase::Succeeded || pod.phase == model::PodPhase::Failed;
  for (const auto& [resource, milli] : pod.requests) {
    if (tracked(resource)) record.requests.emplace_back(resource, milli);
  }
  state.pods.insert_or_assign(key, std::move(record));
  return true;
}

bool Inventory::onClaim(std::string_view cluster_name, model::EventType type,
                        const model::ResourceClaim& claim) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return true;
  if (claim.meta.name.empty()) {
    ++rejected_objects_;
    return false;
  }
  ClusterState& state = cluster(cluster_name);
  const std::string key = objectKey(claim.meta);
  if (type == model::EventType::Deleted) {
    if (auto it = state.claims.find(key); it != state.claims.end()) state.claims.erase(it);
    return true;
  }
  ClaimRecord record;
  record.requests = claim.requests;
  record.allocated = claim.allocated;
  if (claim.allocated) record.allocations = claim.allocations;
  state.claims.insert_or_assign(key, std::move(record));
  return true;
}

void Inventory::advanceTo(SystemTime at) { tracker_.advanceTo(at); }

void Inventory::clearCluster(std::string_view cluster_name, SystemTime at) {
  tracker_.clearCluster(cluster_name, at);
  if (auto it = clusters_.find(cluster_name); it != clusters_.end()) clusters_.erase(it);
}

// ---------------------------------------------------------------------------------------------
// Node verdicts and sharing

std::optional<UnavailableReason> Inventory::nodeReason(const ClusterState& state,
                                                       std::string_view node) const {
  auto it = state.nodes.find(node);
  // An unknown node is gone (its slices are about to be garbage-collected) or not listed yet:
  // either way nothing can be scheduled there now.
  if (it == state.nodes.end() || !it->second.ready) return UnavailableReason::NodeNotReady;
  if (it->second.unschedulable) return UnavailableReason::NodeUnschedulable;
  if (it->second.tainted) return UnavailableReason::Tainted;
  return std::nullopt;
}

NodeSharing Inventory::sharingOf(const NodeRecord& node, std::string_view resource) {
  NodeSharing sharing;
  if (const auto* v = labelValue(node.nvidiaLabels, kSharingStrategyLabel)) sharing.strategy = *v;
  std::string key(resource);
  key += ".replicas";
  if (const auto* v = labelValue(node.nvidiaLabels, key)) {
    int64_t replicas = 0;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), replicas);
    if (ec == std::errc() && ptr == v->data() + v->size() && replicas >= 1) {
      sharing.replicas = replicas;
    }
  }
  key.assign(resource);
  key += ".product";
  if (const auto* v = labelValue(node.nvidiaLabels, key)) {
    sharing.product = *v;
    sharing.productShared = endsWith(*v, kSharedProductSuffix);
  }
  return sharing;
}

std::string Inventory::extendedClass(std::string_view resource, const NodeRecord* node) const {
  if (endsWith(resource, kSharedClassSuffix)) return std::string(resource);
  if (node != nullptr && startsWith(resource, kNvidiaLabelPrefix) &&
      sharingOf(*node, resource).shared()) {
    return std::string(resource) + std::string(kSharedClassSuffix);
  }
  return std::string(resource);
}

std::optional<NodeSharing> Inventory::nodeSharing(std::string_view cluster_name,
                                                  std::string_view node,
                                                  std::string_view resource) const {
  const ClusterState* state = findCluster(cluster_name);
  if (state == nullptr) return std::nullopt;
  auto it = state->nodes.find(node);
  if (it == state->nodes.end()) return std::nullopt;
  return sharingOf(it->second, resource);
}

// ---------------------------------------------------------------------------------------------
// Figures

std::optional<std::string> Inventory::classOfAllocation(std::string_view cluster_name,
                                                        const ClaimRecord& claim,
                                                        const model::DeviceAllocation& result) const {
  if (auto device = tracker_.findDevice(cluster_name, result.driver, result.pool, result.device)) {
    return classifyDevice(result.driver, *device->device);
  }
  // The device's slice is gone (or not listed yet): the request's DeviceClass still says what was
  // asked for.
  const std::string_view request = requestName(result.request);
  for (const auto& r : claim.requests) {
    if (r.name == request) return classForDeviceClassName(r.deviceClassName);
  }
  return std::nullopt;
}

void Inventory::recompute(std::string_view cluster_name, const ClusterState& state) const {
  auto& figures = state.figures;
  auto& unclassified = state.unclassified;
  figures.clear();
  unclassified.clear();
  auto figure = [&](const std::string& device_class, ClassKind kind) -> ClassFigures& {
    auto it = figures.find(device_class);
    if (it == figures.end()) {
      ClassFigures f;
      f.cluster = std::string(cluster_name);
      f.deviceClass = device_class;
      f.kind = kind;
      it = figures.emplace(device_class, std::move(f)).first;
    }
    return it->second;
  };

  // Extended resources held per node and class by bound, running pods.
  std::map<std::string, std::map<std::string, int64_t>, std::less<>> held;  // node -> class -> n
  for (const auto& [key, pod] : state.pods) {
    if (pod.terminated || pod.nodeName.empty()) continue;
    auto nit = state.nodes.find(pod.nodeName);
    const NodeRecord* node = nit == state.nodes.end() ? nullptr : &nit->second;
    for (const auto& [resource, milli] : pod.requests) {
      // A known node that does not publish the resource serves it through DRA
      // (DRAExtendedResource): the devices are counted through the claim, not twice.
      if (node != nullptr &&
          std::none_of(node->allocatable.begin(), node->allocatable.end(),
                       [&](const auto& kv) { return kv.first == resource; })) {
        continue;
      }
      const int64_t units = wholeUnits(milli);
      if (units == 0) continue;
      const std::string device_class = extendedClass(resource, node);
      held[pod.nodeName][device_class] += units;
      figure(device_class, ClassKind::ExtendedResource).allocated += units;
    }
  }

  for (const auto& [node_name, node] : state.nodes) {
    const auto reason = nodeReason(state, node_name);
    const auto held_it = held.find(node_name);
    for (const auto& [resource, milli] : node.allocatable) {
      const int64_t units = wholeUnits(milli);
      if (units == 0) continue;
      const std::string device_class = extendedClass(resource, &node);
      ClassFigures& f = figure(device_class, ClassKind::ExtendedResource);
      f.published += units;
      if (reason) {
        f.unavailable += units;
        f.unavailableByReason[static_cast<size_t>(*reason)] += units;
      } else {
        f.usable += units;
        int64_t used = 0;
        if (held_it != held.end()) {
          auto c = held_it->second.find(device_class);
          if (c != held_it->second.end()) used = c->second;
        }
        f.free += std::max<int64_t>(0, units - used);
      }
      if (device_class != resource || endsWith(resource, kSharedClassSuffix)) {
        // Shares: report the GPUs behind them, never count them as GPUs.
        f.shared = true;
        const std::string_view base =
            endsWith(resource, kSharedClassSuffix)
                ? std::string_view(resource).substr(0, resource.size() - kSharedClassSuffix.size())
                : std::string_view(resource);
        f.physicalDevices += units / sharingOf(node, base).replicas;
      }
    }
  }

  // DRA devices.
  std::map<std::array<std::string, 3>, std::optional<std::string>> usable_devices;
  tracker_.forEachDevice(cluster_name, [&](const DeviceView& view) {
    std::optional<UnavailableReason> reason = view.poolReason;
    if (!reason && !view.nodeName.empty()) reason = nodeReason(state, view.nodeName);
    if (!reason && view.tainted) reason = UnavailableReason::Tainted;
    const auto device_class = classifyDevice(view.driver, *view.device);
    if (!reason) {
      usable_devices.emplace(std::array<std::string, 3>{std::string(view.driver),
                                                        std::string(view.pool), view.device->name},
                             device_class);
    }
    if (!device_class) {
      UnclassifiedFigures& u = unclassified[std::string(view.driver)];
      u.cluster = std::string(cluster_name);
      u.driver = std::string(view.driver);
      ++u.published;
      if (!reason) ++u.usable;
      return;
    }
    ClassFigures& f = figure(*device_class, ClassKind::Dra);
    ++f.published;
    if (view.device->consumesCounters) ++f.partitionDevices;
    if (reason) {
      ++f.unavailable;
      ++f.unavailableByReason[static_cast<size_t>(*reason)];
    } else {
      ++f.usable;
      ++f.free;
    }
  });

  std::set<std::array<std::string, 3>> counted;  // a device shared by several claims counts once
  for (const auto& [key, claim] : state.claims) {
    if (!claim.allocated) continue;
    for (const auto& result : claim.allocations) {
      std::array<std::string, 3> id{result.driver, result.pool, result.device};
      if (!counted.insert(id).second) continue;
      const auto device_class = classOfAllocation(cluster_name, claim, result);
      if (!device_class) {
        UnclassifiedFigures& u = unclassified[result.driver];
        u.cluster = std::string(cluster_name);
        u.driver = result.driver;
        ++u.allocated;
        continue;
      }
      ClassFigures& f = figure(*device_class, ClassKind::Dra);
      ++f.allocated;
      if (auto it = usable_devices.find(id); it != usable_devices.end() && it->second == device_class) {
        --f.free;
      }
    }
  }

  // A class that neither publishes nor holds anything has no series.
  for (auto it = figures.begin(); it != figures.end();) {
    it = (it->second.published == 0 && it->second.allocated == 0) ? figures.erase(it)
                                                                    : std::next(it);
  }
  state.dirty = false;
}

std::vector<ClassFigures> Inventory::classes(std::string_view cluster_name) const {
  std::vector<ClassFigures> out;
  for (const auto& [name, state] : clusters_) {
    if (!cluster_name.empty() && name != cluster_name) continue;
    if (state.dirty) recompute(name, state);
    for (const auto& [device_class, f] : state.figures) out.push_back(f);
  }
  return out;
}

std::optional<ClassFigures> Inventory::figures(std::string_view cluster_name,
                                               std::string_view deviceClass) const {
  const ClusterState* state = findCluster(cluster_name);
  if (state == nullptr) return std::nullopt;
  if (state->dirty) recompute(cluster_name, *state);
  auto it = state->figures.find(deviceClass);
  if (it == state->figures.end()) return std::nullopt;
  return it->second;
}

int64_t Inventory::usableDevices(std::string_view cluster_name,
                                 std::string_view deviceClass) const {
  const auto f = figures(cluster_name, deviceClass);
  return f ? f->usable : 0;
}

int64_t Inventory::freeDevices(std::string_view cluster_name, std::string_view deviceClass) const {
  const auto f = figures(cluster_name, deviceClass);
  return f ? f->free : 0;
}

std::vector<UnclassifiedFigures> Inventory::unclassified() const {
  std::vector<UnclassifiedFigures> out;
  for (const auto& [name, state] : clusters_) {
    if (state.dirty) recompute(name, state);
    for (const auto& [driver, u] : state.unclassified) out.push_back(u);
  }
  return out;
}

std::vector<PoolStatus> Inventory::pools() const {
  return tracker_.pools([this](std::string_view cluster_name,
                               std::string_view node) -> std::optional<UnavailableReason> {
    const ClusterState* state = findCluster(cluster_name);
    if (state == nullptr) return UnavailableReason::NodeNotReady;
    return nodeReason(*state, node);
  });
}

InventorySnapshot Inventory::snapshot() const {
  InventorySnapshot s;
  s.at = tracker_.now();
  s.classes = classes();
  s.unclassified = unclassified();
  s.pools = pools();
  s.poolCounts = tracker_.poolCounts();
  s.poolIncompleteSeconds = tracker_.incompleteSeconds();
  s.rejectedSlices = tracker_.rejectedSlices();
  s.rejectedObjects = rejected_objects_;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Lookups for the engine

std::vector<DeviceCount> Inventory::demandForRequests(const model::ResourceList& perPod,
                                                      int64_t pods) const {
  std::map<std::pair<std::string, bool>, int64_t> counts;
  if (pods <= 0) return {};
  for (const auto& [resource, milli] : perPod) {
    if (!tracked(resource)) continue;
    addCount(counts, resource, false, wholeUnits(milli) * pods);
  }
  return toDeviceCounts(counts);
}

std::vector<DeviceCount> Inventory::podSetDemand(const model::PodSet& podSet) const {
  return demandForRequests(podSet.perPodRequests, podSet.count);
}

PodDevices Inventory::podDevices(std::string_view cluster_name, const model::Pod& pod) const {
  PodDevices out;
  if (pod.phase == model::PodPhase::Succeeded || pod.phase == model::PodPhase::Failed) return out;
  const ClusterState* state = findCluster(cluster_name);
  const bool bound = !pod.nodeName.empty();
  const NodeRecord* node = nullptr;
  if (state != nullptr && bound) {
    auto it = state->nodes.find(pod.nodeName);
    if (it != state->nodes.end()) node = &it->second;
  }
  std::map<std::pair<std::string, bool>, int64_t> counts;

  for (const auto& [resource, milli] : pod.requests) {
    if (!tracked(resource)) continue;
    const int64_t units = wholeUnits(milli);
    if (units == 0) continue;
    if (node != nullptr && std::none_of(node->allocatable.begin(), node->allocatable.end(),
                                        [&](const auto& kv) { return kv.first == resource; })) {
      // Served through a DRA claim the scheduler made for the extended resource; the model does
      // not link that claim to the pod.
      ++out.unresolvedClaims;
      continue;
    }
    addCount(counts, bound ? extendedClass(resource, node) : std::string(resource), bound, units);
  }

  for (const auto& pod_claim : pod.claims) {
    const std::string& claim_name = !pod_claim.resourceClaimName.empty()
                                        ? pod_claim.resourceClaimName
                                        : pod_claim.generatedClaimName;
    const ClaimRecord* claim = nullptr;
    if (state != nullptr && !claim_name.empty()) {
      auto it = state->claims.find(pod.meta.namespace_ + "/" + claim_name);
      if (it != state->claims.end()) claim = &it->second;
    }
    if (claim == nullptr) {
      ++out.unresolvedClaims;
      continue;
    }
    if (claim->allocated) {
      for (const auto& result : claim->allocations) {
        if (auto device_class = classOfAllocation(cluster_name, *claim, result)) {
          addCount(counts, std::move(*device_class), true, 1);
        } else {
          ++out.unclassified;
        }
      }
      continue;
    }
    for (const auto& request : claim->requests) {
      if (request.allocationModeAll) {
        ++out.unresolvedClaims;
        continue;
      }
      if (auto device_class = classForDeviceClassName(request.deviceClassName)) {
        addCount(counts, std::move(*device_class), false, request.count);
      } else {
        out.unclassified += std::max<int64_t>(0, request.count);
      }
    }
  }
  out.devices = toDeviceCounts(counts);
  return out;
}

}  // namespace firstwork::inventory
