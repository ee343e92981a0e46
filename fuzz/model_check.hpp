#pragma once
// What every successfully decoded object must satisfy, whatever the input was (decode.hpp and
// src/model/detail/json.hpp): it is of the requested kind, has a name and a uid, identifiers
// within the 512-byte bound, quantities that are not negative, and only valid UTF-8 text.
#include <string>
#include <string_view>
#include <variant>

#include "firstwork/model/decode.hpp"
#include "fuzz_check.hpp"

namespace firstwork::fuzz {

inline void checkText(std::string_view s) { FW_FUZZ_CHECK(validUtf8(s)); }

inline void checkIdent(std::string_view s) {
  FW_FUZZ_CHECK(s.size() <= 512);
  checkText(s);
}

inline void checkResources(const model::ResourceList& list) {
  for (const auto& [name, milli] : list) {
    checkText(name);
    FW_FUZZ_CHECK(milli >= 0);
  }
}

inline void checkConditions(const model::Conditions& conditions) {
  for (const auto& c : conditions) {
    checkText(c.type);
    checkText(c.reason);
    checkText(c.message);
  }
}

// A Pod's or a Node's conditions keep no message (model::BriefCondition).
inline void checkConditions(const model::BriefConditions& conditions) {
  for (const auto& c : conditions) {
    checkText(c.type);
    checkText(c.reason);
  }
}

inline void checkMeta(const model::ObjectMeta& m) {
  FW_FUZZ_CHECK(!m.name.empty());
  FW_FUZZ_CHECK(!m.uid.empty());
  checkIdent(m.name);
  checkIdent(m.namespace_);
  checkIdent(m.uid);
  checkIdent(m.resourceVersion.str());
  for (const auto& [k, v] : m.labels) checkText(k), checkText(v);
  for (const auto& [k, v] : m.annotations) checkText(k), checkText(v);
  for (const auto& o : m.ownerReferences) {
    checkText(o.kind);
    checkText(o.name);
    checkText(o.uid);
  }
}

struct ObjectChecker {
  void operator()(const model::Workload& w) const {
    checkText(w.queueName);
    checkText(w.admission->clusterQueue);
    checkText(w.admission->clusterName);
    for (const auto& ps : w.podSets) {
      checkText(ps.name);
      FW_FUZZ_CHECK(ps.count >= 0);
      checkResources(ps.perPodRequests);
      for (const auto& c : ps.claims) {
        checkText(c.name);
        checkText(c.resourceClaimTemplateName);
        checkText(c.resourceClaimName);
      }
    }
    checkConditions(w.conditions);
    for (const auto& a : w.admission->podSetAssignments) {
      checkText(a.name);
      FW_FUZZ_CHECK(a.count >= 0);
    }
    for (const auto& a : w.admissionChecks) checkText(a.name), checkText(a.message);
    for (const auto& n : w.rareStatus->nominatedClusterNames) checkText(n);
    for (const auto& r : w.rareStatus->resourceRequests) {
      checkText(r.name), checkResources(r.resources);
    }
  }
  void operator()(const model::MultiKueueCluster& o) const { checkConditions(o.conditions); }
  void operator()(const model::MultiKueueConfig& o) const {
    for (const auto& c : o.clusters) checkText(c);
  }
  void operator()(const model::AdmissionCheck& o) const {
    checkText(o.controllerName);
    checkText(o.parametersKind);
    checkText(o.parametersName);
    checkConditions(o.conditions);
  }
  void operator()(const model::ClusterQueue& o) const {
    checkText(o.cohort);
    for (const auto& c : o.admissionChecks) checkText(c);
    checkResources(o.nominalQuota);
  }
  void operator()(const model::Pod& p) const {
    checkText(p.nodeName);
    checkResources(p.requests);
    for (const auto& c : p.claims) {
      checkText(c.name);
      checkText(c.resourceClaimName);
      checkText(c.resourceClaimTemplateName);
      checkText(c.generatedClaimName);
    }
    checkConditions(p.conditions);
    for (const auto& c : p.containers) {
      checkText(c.name);
      checkText(c.reason);
    }
  }
  void operator()(const model::ResourceClaim& rc) const {
    for (const auto& r : rc.requests) checkText(r.name), checkText(r.deviceClassName);
    for (const auto& a : rc.allocations) {
      checkText(a.request);
      checkText(a.driver);
      checkText(a.pool);
      checkText(a.device);
    }
    for (const auto& uid : rc.reservedForPods) checkText(uid);
  }
  void operator()(const model::ResourceSlice& rs) const {
    checkText(rs.driver);
    checkText(rs.poolName);
    checkText(rs.nodeName);
    for (const auto& d : rs.devices) {
      checkText(d.name);
      checkText(d.nodeName);
      for (const auto& a : d.attributes) checkText(a.name), checkText(a.value);
      for (const auto& t : d.taints) checkText(t.key), checkText(t.value), checkText(t.effect);
    }
  }
  void operator()(const model::Node& n) const {
    checkConditions(n.conditions);
    for (const auto& t : n.taints) checkText(t.key), checkText(t.value), checkText(t.effect);
    checkResources(n.allocatable);
    checkResources(n.capacity);
  }
};

/// Every property of a successfully decoded object of `kind`.
inline void checkObject(const model::Object& obj, model::Kind kind) {
  FW_FUZZ_CHECK(model::kindOf(obj) == kind);
  checkMeta(model::metaOf(obj));
  std::visit(ObjectChecker{}, obj);
}

}  // namespace firstwork::fuzz
