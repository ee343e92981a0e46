#include "firstwork/inventory/inventory.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

namespace firstwork::inventory {

namespace {

constexpr std::string_view kNvidiaLabelPrefix = "nvidia.com/";

// Node taints the node lifecycle controller and `kubectl cordon` set: they are reported under the
// node's own reason rather than as a generic taint.
constexpr std::string_view kNotReadyTaint = "node.kubernetes.io/not-ready";
constexpr std::string_view kUnreachableTaint = "node.kubernetes.io/unreachable";
constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";

bool conditionTrue(const std::vector<model::Condition>& conditions, std::string_view type) {
  for (const auto& c : conditions) {
    if (c.type == type) return c.status == model::ConditionStatus::True;
  }
  return false;
}

std::string objectKey(const model::ObjectMeta& meta) {
  std::string key = meta.namespace_;
  key += '/';
  key += meta.name;
  return key;
}

// Extended resources are whole numbers; milli-units only come from the quantity parser.
int64_t wholeUnits(int64_t milli) { return milli > 0 ? milli / 1000 : 0; }

// Devices behind `units` shares: units / replicas (a device whose replicas are partly published
// is still a device), or the count label when the replica count is not published.
int64_t physicalBehind(int64_t units, const NodeSharing& sharing) {
  if (sharing.replicas > 1) return (units + sharing.replicas - 1) / sharing.replicas;
  return sharing.count.value_or(0);
}

// "<request>/<subrequest>" (firstAvailable) belongs to request "<request>".
std::string_view requestName(std::string_view result_request) {
  const size_t slash = result_request.find('/');
  return slash == std::string_view::npos ? result_request : result_request.substr(0, slash);
}

void addCount(std::map<std::pair<std::string, bool>, int64_t>& counts, std::string device_class,
              bool allocated, int64_t n) {
  if (n > 0) counts[{std::move(device_class), allocated}] += n;
}

std::string deviceKey(std::string_view driver, std::string_view pool, std::string_view device) {
  std::string key;
  key.reserve(driver.size() + pool.size() + device.size() + 2);
  key.append(driver).push_back('\x1f');
  key.append(pool).push_back('\x1f');
  key.append(device);
  return key;
}

bool sameRequests(const std::vector<model::DeviceRequest>& a,
                  const std::vector<model::DeviceRequest>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.name == y.name && x.deviceClassName == y.deviceClassName &&
           x.allocationModeAll == y.allocationModeAll && x.count == y.count &&
           x.firstAvailable == y.firstAvailable && x.selectors == y.selectors;
  });
}

bool sameAllocations(const std::vector<model::DeviceAllocation>& a,
                     const std::vector<model::DeviceAllocation>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.request == y.request && x.driver == y.driver && x.pool == y.pool &&
           x.device == y.device;
  });
}

std::vector<DeviceCount> toDeviceCounts(const std::map<std::pair<std::string, bool>, int64_t>& m) {
  std::vector<DeviceCount> out;
  out.reserve(m.size());
  for (const auto& [key, n] : m) out.push_back(DeviceCount{key.first, n, key.second});
  return out;
}

}  // namespace

bool Inventory::sameClaim(const ClaimRecord& a, const ClaimRecord& b) {
  return a.allocated == b.allocated && sameRequests(a.requests, b.requests) &&
         sameAllocations(a.allocations, b.allocations);
}

Inventory::Inventory(InventoryConfig config) : config_(std::move(config)) {}

Inventory::ClusterState& Inventory::cluster(std::string_view name) {
  auto it = clusters_.find(name);
  if (it == clusters_.end()) it = clusters_.emplace(std::string(name), ClusterState{}).first;
  return it->second;
}

void Inventory::markChanged(ClusterState& state, Change change) {
  state.figuresDirty = true;
  switch (change) {
    case Change::Base: state.baseDirty = true; break;
    case Change::Pods: state.extendedDirty = true; break;
    case Change::Claims: state.draDirty = true; break;
    case Change::Figures: break;
  }
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
  if (ok) markChanged(cluster(cluster_name), Change::Base);
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
  auto existing = state.nodes.find(node.meta.name);
  if (type == model::EventType::Deleted) {
    if (existing != state.nodes.end()) {
      state.nodes.erase(existing);
      markChanged(state, Change::Base);
    }
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
    if (key.starts_with(kNvidiaLabelPrefix)) record.nvidiaLabels.emplace_back(key, value);
  }
  // Most Node updates (heartbeats, images, unrelated labels) change nothing the inventory reads:
  // they must not cost a recount.
  if (existing != state.nodes.end() && existing->second == record) return true;
  state.nodes.insert_or_assign(node.meta.name, std::move(record));
  markChanged(state, Change::Base);
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
  auto existing = state.pods.find(key);
  if (type == model::EventType::Deleted) {
    if (existing != state.pods.end()) {
      const bool incremental = holdPod(state, existing->second, -1);
      state.pods.erase(existing);
      markChanged(state, incremental ? Change::Figures : Change::Pods);
    }
    return true;
  }
  PodRecord record;
  record.nodeName = pod.nodeName;
  record.terminated =
      pod.phase == model::PodPhase::Succeeded || pod.phase == model::PodPhase::Failed;
  for (const auto& [resource, milli] : pod.requests) {
    if (tracked(resource)) record.requests.emplace_back(resource, milli);
  }
  // Container status churn changes nothing here; only binding, termination and requests do.
  if (existing != state.pods.end()) {
    if (existing->second == record) return true;
    holdPod(state, existing->second, -1);
  }
  const bool incremental = holdPod(state, record, +1);
  state.pods.insert_or_assign(key, std::move(record));
  markChanged(state, incremental ? Change::Figures : Change::Pods);
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
  auto existing = state.claims.find(key);
  if (type == model::EventType::Deleted) {
    if (existing != state.claims.end()) {
      const bool incremental = holdClaim(state, existing->second, -1);
      state.claims.erase(existing);
      markChanged(state, incremental ? Change::Figures : Change::Claims);
    }
    return true;
  }
  ClaimRecord record;
  record.requests = claim.requests;
  record.allocated = claim.allocated;
  if (claim.allocated) record.allocations = claim.allocations;
  if (existing != state.claims.end()) {
    if (sameClaim(existing->second, record)) return true;
    holdClaim(state, existing->second, -1);
  }
  const bool incremental = holdClaim(state, record, +1);
  state.claims.insert_or_assign(key, std::move(record));
  markChanged(state, incremental ? Change::Figures : Change::Claims);
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
  return readNodeSharing(node.nvidiaLabels, resource);
}

std::optional<std::string> Inventory::extendedClass(std::string_view resource,
                                                    const NodeRecord* node) const {
  if (node == nullptr || !resource.starts_with(kNvidiaLabelPrefix)) return std::string(resource);
  return sharingClass(resource, sharingOf(*node, resource));
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

std::vector<NodeResourceMode> Inventory::nodeModes(std::string_view cluster_name) const {
  std::vector<NodeResourceMode> out;
  for (const auto& [name, state] : clusters_) {
    if (!cluster_name.empty() && name != cluster_name) continue;
    for (const auto& [node_name, node] : state.nodes) {
      for (const auto& [resource, milli] : node.allocatable) {
        if (!resource.starts_with(kNvidiaLabelPrefix)) continue;
        NodeResourceMode m;
        m.cluster = name;
        m.node = node_name;
        m.resource = resource;
        m.sharing = sharingOf(node, resource);
        m.deviceClass = sharingClass(resource, m.sharing).value_or(std::string());
        m.units = wholeUnits(milli);
        if (!m.deviceClass.empty() && m.deviceClass.ends_with(kSharedClassSuffix)) {
          m.physicalDevices = physicalBehind(m.units, m.sharing);
        }
        out.push_back(std::move(m));
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Figures

bool Inventory::holdPod(ClusterState& state, const PodRecord& pod, int64_t sign) const {
  // While the allocation cache is current, a pod's change is applied to it directly (a pod event
  // costs O(its requests), not a rescan of every pod); otherwise the next query recounts.
  const bool incremental = !state.baseDirty && !state.extendedDirty;
  if (pod.terminated || pod.nodeName.empty()) return incremental;
  auto& by_resource = state.held[pod.nodeName];
  for (const auto& [resource, milli] : pod.requests) {
    const int64_t units = wholeUnits(milli);
    if (units == 0) continue;
    auto it = by_resource.find(resource);
    if (it == by_resource.end()) it = by_resource.emplace(resource, 0).first;
    it->second += sign * units;
    if (it->second == 0) by_resource.erase(it);
    if (incremental) applyExtendedDelta(state, pod.nodeName, resource, sign * units);
  }
  if (by_resource.empty()) state.held.erase(pod.nodeName);
  return incremental;
}

std::optional<std::string> Inventory::heldClass(const ClusterState& state, std::string_view node,
                                                std::string_view resource) const {
  auto classes_it = state.extendedClasses.find(node);
  if (classes_it == state.extendedClasses.end()) return std::string(resource);
  auto c = classes_it->second.find(resource);
  // A known node that does not publish the resource serves it through DRA (DRAExtendedResource):
  // those devices are counted through the claim, not twice.
  if (c == classes_it->second.end()) return std::nullopt;
  return c->second;
}

void Inventory::applyExtendedDelta(const ClusterState& state, std::string_view node,
                                   std::string_view resource, int64_t units) const {
  const auto device_class = heldClass(state, node, resource);
  if (!device_class) return;
  AllocationFigures& out = state.extended;
  if (device_class->empty()) {
    auto e = out.unclassifiedAllocated.try_emplace(std::string(resource), 0).first;
    e->second += units;
    if (e->second == 0) out.unclassifiedAllocated.erase(e);
    return;
  }
  out.allocated[*device_class] += units;
  auto usable_node = state.usableByNode.find(node);
  if (usable_node == state.usableByNode.end()) return;
  auto usable = usable_node->second.find(*device_class);
  const int64_t capacity = usable == usable_node->second.end() ? 0 : usable->second;
  int64_t& held = out.heldByNode[std::string(node)][*device_class];
  const int64_t before = std::max<int64_t>(0, capacity - held);
  held += units;
  const int64_t after = std::max<int64_t>(0, capacity - held);
  out.free[*device_class] += after - before;
}

bool Inventory::holdClaim(ClusterState& state, const ClaimRecord& claim, int64_t sign) const {
  const bool incremental = !state.baseDirty && !state.draDirty;
  if (!claim.allocated) return incremental;
  for (const auto& result : claim.allocations) {
    const std::string key = deviceKey(result.driver, result.pool, result.device);
    auto it = state.allocatedDevices.find(key);
    if (sign > 0) {
      if (it == state.allocatedDevices.end()) {
        AllocatedDevice device;
        device.driver = result.driver;
        device.requestedClass = requestedClass(claim, result);
        it = state.allocatedDevices.emplace(key, std::move(device)).first;
      }
      // A device counts once however many claims hold it: only 0 → 1 and 1 → 0 change figures.
      if (++it->second.claims == 1 && incremental) applyDraDelta(state, key, it->second, +1);
    } else if (it != state.allocatedDevices.end() && --it->second.claims <= 0) {
      if (incremental) applyDraDelta(state, key, it->second, -1);
      state.allocatedDevices.erase(it);
    }
  }
  return incremental;
}

void Inventory::applyDraDelta(const ClusterState& state, const std::string& key,
                              const AllocatedDevice& device, int64_t sign) const {
  AllocationFigures& out = state.dra;
  auto it = state.devices.find(key);
  const std::optional<std::string>& device_class =
      it != state.devices.end() ? it->second.deviceClass : device.requestedClass;
  auto bump = [sign](std::map<std::string, int64_t, std::less<>>& m, const std::string& k) {
    auto e = m.try_emplace(k, 0).first;
    e->second += sign;
    if (e->second == 0) m.erase(e);
  };
  if (!device_class) {
    bump(out.unclassifiedAllocated, device.driver);
    return;
  }
  bump(out.allocated, *device_class);
  if (it != state.devices.end() && it->second.usable) bump(out.allocatedUsable, *device_class);
}

std::optional<std::string> Inventory::requestedClass(const ClaimRecord& claim,
                                                     const model::DeviceAllocation& result) const {
  const std::string_view request = requestName(result.request);
  for (const auto& r : claim.requests) {
    if (r.name == request) return classForRequest(r);
  }
  return std::nullopt;
}

std::optional<std::string> Inventory::classOfAllocation(std::string_view cluster_name,
                                                        const ClaimRecord& claim,
                                                        const model::DeviceAllocation& result) const {
  if (auto device = tracker_.findDevice(cluster_name, result.driver, result.pool, result.device)) {
    return classifyDevice(result.driver, *device->device);
  }
  // The device's slice is gone (or not listed yet): the request's DeviceClass still says what was
  // asked for.
  return requestedClass(claim, result);
}

void Inventory::recomputeBase(std::string_view cluster_name, const ClusterState& state) const {
  auto& figures = state.baseFigures;
  auto& unclassified = state.baseUnclassified;
  figures.clear();
  unclassified.clear();
  state.usableByNode.clear();
  state.extendedClasses.clear();
  state.physicalByNode.clear();
  state.serving.clear();
  state.devices.clear();
  auto figure = [&](const std::string& device_class, ClassKind kind) -> ClassFigures& {
    auto it = figures.find(device_class);
    if (it == figures.end()) {
      ClassFigures f;
      f.cluster = std::string(cluster_name);
      f.deviceClass = device_class;
      f.kind = kind;
      f.unit = unitOf(device_class);
      f.physicalUnit = physicalUnitOf(device_class);
      it = figures.emplace(device_class, std::move(f)).first;
    }
    return it->second;
  };

  for (const auto& [node_name, node] : state.nodes) {
    const auto reason = nodeReason(state, node_name);
    auto& classes = state.extendedClasses[node_name];
    for (const auto& [resource, milli] : node.allocatable) {
      const auto device_class = extendedClass(resource, &node);
      classes.insert_or_assign(resource, device_class.value_or(std::string()));
      if (device_class && *device_class != resource) {
        auto& serving = state.serving[resource];
        if (std::find(serving.begin(), serving.end(), *device_class) == serving.end()) {
          serving.insert(std::lower_bound(serving.begin(), serving.end(), *device_class),
                         *device_class);
        }
      }
      const int64_t units = wholeUnits(milli);
      if (units == 0) continue;
      if (!device_class) {
        // The node's labels do not say what the units are: reported, never guessed.
        UnclassifiedFigures& u = unclassified[resource];
        u.cluster = std::string(cluster_name);
        u.source = resource;
        u.kind = ClassKind::ExtendedResource;
        u.published += units;
        if (!reason) u.usable += units;
        continue;
      }
      ClassFigures& f = figure(*device_class, ClassKind::ExtendedResource);
      f.published += units;
      if (reason) {
        f.unavailable += units;
        f.unavailableByReason[static_cast<size_t>(*reason)] += units;
      } else {
        f.usable += units;
        state.usableByNode[node_name][*device_class] += units;
      }
      if (device_class->ends_with(kSharedClassSuffix)) {
        // Shares: report the devices behind them, never count them as devices.
        const int64_t physical = physicalBehind(units, sharingOf(node, resource));
        f.shared = true;
        f.physicalDevices += physical;
        if (!reason) {
          f.physicalUsable += physical;
          state.physicalByNode[node_name][*device_class] += physical;
        }
      }
    }
  }

  tracker_.forEachDevice(cluster_name, [&](const DeviceView& view) {
    std::optional<UnavailableReason> reason = view.poolReason;
    if (!reason && !view.nodeName.empty()) reason = nodeReason(state, view.nodeName);
    if (!reason && view.tainted) reason = UnavailableReason::Tainted;
    auto device_class = classifyDevice(view.driver, *view.device);
    if (!device_class) {
      UnclassifiedFigures& u = unclassified[std::string(view.driver)];
      u.cluster = std::string(cluster_name);
      u.source = std::string(view.driver);
      u.kind = ClassKind::Dra;
      ++u.published;
      if (!reason) ++u.usable;
    } else {
      ClassFigures& f = figure(*device_class, ClassKind::Dra);
      ++f.published;
      if (view.device->consumesCounters) ++f.partitionDevices;
      if (reason) {
        ++f.unavailable;
        ++f.unavailableByReason[static_cast<size_t>(*reason)];
      } else {
        ++f.usable;
      }
    }
    // First copy wins when a pool publishes a name twice (such a pool is unusable anyway).
    state.devices.emplace(deviceKey(view.driver, view.pool, view.device->name),
                          DeviceInfo{std::move(device_class), !reason});
  });
  state.baseDirty = false;
  state.extendedDirty = true;
  state.draDirty = true;
}

void Inventory::recomputeExtended(const ClusterState& state) const {
  AllocationFigures& out = state.extended;
  out = AllocationFigures{};
  for (const auto& [node_name, by_resource] : state.held) {
    const bool usable = state.usableByNode.count(node_name) > 0;
    for (const auto& [resource, units] : by_resource) {
      const auto device_class = heldClass(state, node_name, resource);
      if (!device_class) continue;
      if (device_class->empty()) {
        out.unclassifiedAllocated[resource] += units;
        continue;
      }
      out.allocated[*device_class] += units;
      if (usable) out.heldByNode[node_name][*device_class] += units;
    }
  }
  // Free is per node: devices held on one node do not free devices on another.
  for (const auto& [node_name, by_class] : state.usableByNode) {
    const auto held_it = out.heldByNode.find(node_name);
    for (const auto& [device_class, units] : by_class) {
      int64_t used = 0;
      if (held_it != out.heldByNode.end()) {
        auto c = held_it->second.find(device_class);
        if (c != held_it->second.end()) used = c->second;
      }
      out.free[device_class] += std::max<int64_t>(0, units - used);
    }
  }
  state.extendedDirty = false;
}

void Inventory::recomputeDra(const ClusterState& state) const {
  AllocationFigures& out = state.dra;
  out = AllocationFigures{};
  for (const auto& [key, allocated] : state.allocatedDevices) {
    auto it = state.devices.find(key);
    const std::optional<std::string>& device_class =
        it != state.devices.end() ? it->second.deviceClass : allocated.requestedClass;
    if (!device_class) {
      ++out.unclassifiedAllocated[allocated.driver];
      continue;
    }
    ++out.allocated[*device_class];
    if (it != state.devices.end() && it->second.usable) ++out.allocatedUsable[*device_class];
  }
  state.draDirty = false;
}

void Inventory::mergeFigures(std::string_view cluster_name, const ClusterState& state) const {
  state.figures = state.baseFigures;
  state.unclassified = state.baseUnclassified;
  auto figure = [&](const std::string& device_class, ClassKind kind) -> ClassFigures& {
    auto it = state.figures.find(device_class);
    if (it == state.figures.end()) {
      ClassFigures f;
      f.cluster = std::string(cluster_name);
      f.deviceClass = device_class;
      f.kind = kind;
      f.unit = unitOf(device_class);
      f.physicalUnit = physicalUnitOf(device_class);
      it = state.figures.emplace(device_class, std::move(f)).first;
    }
    return it->second;
  };
  for (const auto& [device_class, n] : state.extended.allocated) {
    figure(device_class, ClassKind::ExtendedResource).allocated += n;
  }
  for (const auto& [device_class, n] : state.dra.allocated) {
    figure(device_class, ClassKind::Dra).allocated += n;
  }
  for (auto& [device_class, f] : state.figures) {
    if (f.kind == ClassKind::ExtendedResource) {
      auto it = state.extended.free.find(device_class);
      f.free = it == state.extended.free.end() ? 0 : it->second;
    } else {
      auto it = state.dra.allocatedUsable.find(device_class);
      f.free = f.usable - (it == state.dra.allocatedUsable.end() ? 0 : it->second);
    }
  }
  for (const auto* allocation : {&state.dra, &state.extended}) {
    for (const auto& [source, n] : allocation->unclassifiedAllocated) {
      UnclassifiedFigures& u = state.unclassified[source];
      u.cluster = std::string(cluster_name);
      u.source = source;
      u.kind = allocation == &state.dra ? ClassKind::Dra : ClassKind::ExtendedResource;
      u.allocated += n;
    }
  }
  // Devices behind shares with at least one tenant: per usable node min(devices, shares held)
  // (the device plugin spreads replicas over the node's devices; see ClassFigures).
  for (const auto& [node_name, by_class] : state.physicalByNode) {
    const auto held_it = state.extended.heldByNode.find(node_name);
    if (held_it == state.extended.heldByNode.end()) continue;
    for (const auto& [device_class, devices] : by_class) {
      auto h = held_it->second.find(device_class);
      if (h == held_it->second.end()) continue;
      auto f = state.figures.find(device_class);
      if (f != state.figures.end()) f->second.physicalAllocated += std::min(devices, h->second);
    }
  }
  // A class that neither publishes nor holds anything has no series.
  for (auto it = state.figures.begin(); it != state.figures.end();) {
    it = (it->second.published == 0 && it->second.allocated == 0) ? state.figures.erase(it)
                                                                  : std::next(it);
  }
  state.figuresDirty = false;
}

const Inventory::ClusterState* Inventory::fresh(std::string_view cluster_name) const {
  const ClusterState* state = findCluster(cluster_name);
  if (state == nullptr || !state->figuresDirty) return state;
  if (state->baseDirty) recomputeBase(cluster_name, *state);
  if (state->extendedDirty) recomputeExtended(*state);
  if (state->draDirty) recomputeDra(*state);
  mergeFigures(cluster_name, *state);
  return state;
}

std::vector<ClassFigures> Inventory::classes(std::string_view cluster_name) const {
  std::vector<ClassFigures> out;
  for (const auto& [name, state] : clusters_) {
    if (!cluster_name.empty() && name != cluster_name) continue;
    fresh(name);
    for (const auto& [device_class, f] : state.figures) out.push_back(f);
  }
  return out;
}

std::optional<ClassFigures> Inventory::figures(std::string_view cluster_name,
                                               std::string_view deviceClass) const {
  const ClusterState* state = fresh(cluster_name);
  if (state == nullptr) return std::nullopt;
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
    fresh(name);
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
  s.nodeModes = nodeModes();
  s.pools = pools();
  s.poolCounts = tracker_.poolCounts();
  s.poolIncompleteSeconds = tracker_.incompleteSeconds();
  s.rejectedSlices = tracker_.rejectedSlices();
  s.rejectedObjects = rejected_objects_;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Lookups for the engine

const std::vector<std::string>& Inventory::alsoServedBy(std::string_view cluster_name,
                                                        std::string_view requestClass) const {
  static const std::vector<std::string> kNone;
  const ClusterState* state = fresh(cluster_name);
  if (state == nullptr) return kNone;
  auto it = state->serving.find(requestClass);
  return it == state->serving.end() ? kNone : it->second;
}

std::vector<std::string> Inventory::servingClasses(std::string_view cluster_name,
                                                   std::string_view requestClass) const {
  std::vector<std::string> out{std::string(requestClass)};
  for (const auto& c : alsoServedBy(cluster_name, requestClass)) out.push_back(c);
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, int64_t, std::less<>> Inventory::physicalUsableByNode(
    std::string_view cluster_name, std::string_view deviceClass) const {
  std::map<std::string, int64_t, std::less<>> out;
  const ClusterState* state = fresh(cluster_name);
  if (state == nullptr) return out;
  for (const auto& [node_name, by_class] : state->physicalByNode) {
    auto it = by_class.find(deviceClass);
    if (it != by_class.end() && it->second > 0) out.emplace(node_name, it->second);
  }
  return out;
}

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
    const auto device_class = bound ? extendedClass(resource, node) : std::string(resource);
    if (!device_class) {
      out.unclassified += units;  // the node's labels do not say what the units are
      continue;
    }
    addCount(counts, *device_class, bound, units);
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
      if (auto device_class = classForRequest(request)) {
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
