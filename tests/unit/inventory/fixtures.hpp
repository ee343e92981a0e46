#pragma once
// Test-only readers for the shared YAML fixtures: a few lines of yaml-cpp that fill the model
// structs directly, so the inventory tests do not depend on the model decoders (which read JSON).
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <string>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/model/dra.hpp"
#include "firstwork/model/node.hpp"
#include "firstwork/model/pod.hpp"

namespace firstwork::testing {

inline std::string sharedFixture(const std::string& name) {
  return std::string(FIRSTWORK_SHARED_FIXTURES_DIR) + "/" + name;
}

/// A fixed event-time origin; tests add hand-picked offsets.
inline SystemTime t0() { return SystemTime{} + std::chrono::seconds(1'780'000'000); }
inline SystemTime at(int64_t seconds) { return t0() + std::chrono::seconds(seconds); }

inline model::Device deviceFromYaml(const YAML::Node& node) {
  model::Device device;
  device.name = node["name"].as<std::string>();
  // v1beta1 puts everything but the name under `basic:`.
  const YAML::Node body = node["basic"] ? node["basic"] : node;
  if (body["attributes"]) {
    for (const auto& kv : body["attributes"]) {
      model::DeviceAttribute attribute;
      attribute.name = kv.first.as<std::string>();
      for (const auto& typed : kv.second) attribute.value = typed.second.as<std::string>();
      device.attributes.push_back(attribute);
    }
  }
  if (body["taints"]) {
    for (const auto& t : body["taints"]) {
      device.taints.push_back(model::DeviceTaint{t["key"].as<std::string>(),
                                                 t["value"] ? t["value"].as<std::string>() : "",
                                                 t["effect"].as<std::string>()});
    }
  }
  device.consumesCounters = body["consumesCounters"] && body["consumesCounters"].size() > 0;
  return device;
}

inline model::ResourceSlice sliceFromYaml(const YAML::Node& object) {
  model::ResourceSlice slice;
  slice.meta.name = object["metadata"]["name"].as<std::string>();
  const YAML::Node spec = object["spec"];
  slice.driver = spec["driver"].as<std::string>();
  slice.poolName = spec["pool"]["name"].as<std::string>();
  slice.poolGeneration = spec["pool"]["generation"].as<int64_t>();
  slice.resourceSliceCount = spec["pool"]["resourceSliceCount"].as<int64_t>();
  if (spec["nodeName"]) slice.nodeName = spec["nodeName"].as<std::string>();
  slice.allNodes = spec["allNodes"] && spec["allNodes"].as<bool>();
  if (spec["devices"]) {
    for (const auto& d : spec["devices"]) slice.devices.push_back(deviceFromYaml(d));
  }
  slice.sharedCounters = spec["sharedCounters"] && spec["sharedCounters"].size() > 0;
  return slice;
}

/// Every ResourceSlice in a fixture file: single objects, `---` documents, and List items.
inline std::vector<model::ResourceSlice> loadSlices(const std::string& fixture) {
  std::vector<model::ResourceSlice> out;
  for (const auto& doc : YAML::LoadAllFromFile(sharedFixture(fixture))) {
    if (doc["items"]) {
      for (const auto& item : doc["items"]) out.push_back(sliceFromYaml(item));
    } else if (doc["kind"] && doc["kind"].as<std::string>() == "ResourceSlice") {
      out.push_back(sliceFromYaml(doc));
    }
  }
  return out;
}

inline model::ResourceClaim claimFromYaml(const YAML::Node& object) {
  model::ResourceClaim claim;
  claim.meta.name = object["metadata"]["name"].as<std::string>();
  if (object["metadata"]["namespace"]) {
    claim.meta.namespace_ = object["metadata"]["namespace"].as<std::string>();
  }
  if (object["spec"] && object["spec"]["devices"] && object["spec"]["devices"]["requests"]) {
    for (const auto& r : object["spec"]["devices"]["requests"]) {
      model::DeviceRequest request;
      request.name = r["name"].as<std::string>();
      const YAML::Node exactly = r["exactly"] ? r["exactly"] : r;
      request.deviceClassName = exactly["deviceClassName"].as<std::string>();
      if (exactly["count"]) request.count = exactly["count"].as<int64_t>();
      request.allocationModeAll =
          exactly["allocationMode"] && exactly["allocationMode"].as<std::string>() == "All";
      claim.requests.push_back(request);
    }
  }
  const YAML::Node allocation = object["status"]["allocation"];
  if (allocation) {
    claim.allocated = true;
    for (const auto& r : allocation["devices"]["results"]) {
      claim.allocations.push_back(model::DeviceAllocation{
          r["request"].as<std::string>(), r["driver"].as<std::string>(),
          r["pool"].as<std::string>(), r["device"].as<std::string>()});
    }
  }
  return claim;
}

/// Every ResourceClaim in a fixture file (single object or List items).
inline std::vector<model::ResourceClaim> loadClaims(const std::string& fixture) {
  std::vector<model::ResourceClaim> out;
  for (const auto& doc : YAML::LoadAllFromFile(sharedFixture(fixture))) {
    if (doc["items"]) {
      for (const auto& item : doc["items"]) out.push_back(claimFromYaml(item));
    } else if (doc["kind"] && doc["kind"].as<std::string>() == "ResourceClaim") {
      out.push_back(claimFromYaml(doc));
    }
  }
  return out;
}

// ---- hand-built objects -------------------------------------------------------------------------

inline model::Device gpuDevice(const std::string& name, const std::string& type = "gpu",
                               const std::string& profile = "") {
  model::Device d;
  d.name = name;
  d.attributes.push_back({"type", type});
  if (!profile.empty()) d.attributes.push_back({"profile", profile});
  return d;
}

inline model::ResourceSlice slice(const std::string& name, const std::string& driver,
                                  const std::string& pool, int64_t generation, int64_t count,
                                  std::vector<model::Device> devices,
                                  const std::string& node = "") {
  model::ResourceSlice s;
  s.meta.name = name;
  s.driver = driver;
  s.poolName = pool;
  s.poolGeneration = generation;
  s.resourceSliceCount = count;
  s.nodeName = node;
  s.allNodes = node.empty();
  s.devices = std::move(devices);
  return s;
}

/// `n` whole NVIDIA DRA GPUs named <prefix>0..n-1.
inline std::vector<model::Device> gpus(int n, const std::string& prefix = "gpu-") {
  std::vector<model::Device> out;
  for (int i = 0; i < n; ++i) out.push_back(gpuDevice(prefix + std::to_string(i)));
  return out;
}

inline model::Node node(const std::string& name, bool ready = true,
                        model::ResourceList allocatable = {}) {
  model::Node n;
  n.meta.name = name;
  model::BriefCondition condition;
  condition.type = "Ready";
  condition.status = ready ? model::ConditionStatus::True : model::ConditionStatus::False;
  n.conditions.push_back(condition);
  n.allocatable = std::move(allocatable);
  return n;
}

inline model::Pod pod(const std::string& ns, const std::string& name, const std::string& nodeName,
                      model::ResourceList requests = {},
                      model::PodPhase phase = model::PodPhase::Running) {
  model::Pod p;
  p.meta.namespace_ = ns;
  p.meta.name = name;
  p.meta.uid = ns + "-" + name + "-uid";
  p.nodeName = nodeName;
  p.requests = std::move(requests);
  p.phase = phase;
  return p;
}

}  // namespace firstwork::testing
