#include "firstwork/model/kueue_objects.hpp"

#include "detail/decoders.hpp"

namespace firstwork::model::detail {
namespace {

/// Appends `name` unless already present (spec.admissionChecks and the strategy may both list it).
bool addUnique(Ctx& c, std::vector<std::string>& list, std::string name) {
  if (name.empty()) return true;
  for (const auto& n : list) {
    if (n == name) return true;
  }
  if (list.size() >= kMaxEntries) return tooMany(c, kMaxEntries);
  list.push_back(std::move(name));
  return true;
}

/// spec.resourceGroups[].flavors[].resources[]{name, nominalQuota}, summed per resource.
bool readResourceGroups(Ctx& c, od::value& v, ResourceList& quota) {
  return forElements(c, v, [&](size_t, od::value& group) {
    return forFields(c, group, [&](std::string_view gk, od::value& gx) {
      if (!is(gk, "flavors")) return true;
      return forElements(c, gx, [&](size_t, od::value& flavor) {
        return forFields(c, flavor, [&](std::string_view fk, od::value& fx) {
          if (!is(fk, "resources")) return true;
          return forElements(c, fx, [&](size_t, od::value& res) {
            std::string name;
            int64_t milli = 0;
            bool present = false;
            bool ok = forFields(c, res, [&](std::string_view rk, od::value& rx) {
              if (is(rk, "name")) return readIdent(c, rx, name);
              if (is(rk, "nominalQuota")) return readQuantity(c, rx, milli, present);
              return true;
            });
            if (!ok) return false;
            if (!present || name.empty() || !isDeviceResource(name)) return true;
            if (!addResource(quota, name, milli)) return tooMany(c, kMaxResources);
            return true;
          });
        });
      });
    });
  });
}

}  // namespace

bool readMultiKueueCluster(Ctx& c, od::value& v, MultiKueueCluster& o) {
  return readTopLevel(c, v, Kind::MultiKueueCluster, o.meta, nullptr,
                      [&](std::string_view k, od::value& x) {
                        if (!is(k, "status")) return true;
                        return forFields(c, x, [&](std::string_view sk, od::value& sx) {
                          if (is(sk, "conditions")) return readConditions(c, sx, o.conditions);
                          return true;
                        });
                      });
}

bool readMultiKueueConfig(Ctx& c, od::value& v, MultiKueueConfig& o) {
  return readTopLevel(c, v, Kind::MultiKueueConfig, o.meta, nullptr,
                      [&](std::string_view k, od::value& x) {
                        if (!is(k, "spec")) return true;
                        return forFields(c, x, [&](std::string_view sk, od::value& sx) {
                          if (is(sk, "clusters")) return readStringList(c, sx, o.clusters);
                          return true;
                        });
                      });
}

bool readAdmissionCheck(Ctx& c, od::value& v, AdmissionCheck& o) {
  return readTopLevel(c, v, Kind::AdmissionCheck, o.meta, nullptr,
                      [&](std::string_view k, od::value& x) {
                        if (is(k, "spec")) {
                          return forFields(c, x, [&](std::string_view sk, od::value& sx) {
                            if (is(sk, "controllerName")) return readIdent(c, sx, o.controllerName);
                            if (is(sk, "parameters")) {
                              return forFields(c, sx, [&](std::string_view pk, od::value& px) {
                                if (is(pk, "kind")) return readIdent(c, px, o.parametersKind);
                                if (is(pk, "name")) return readIdent(c, px, o.parametersName);
                                return true;
                              });
                            }
                            return true;
                          });
                        }
                        if (is(k, "status")) {
                          return forFields(c, x, [&](std::string_view sk, od::value& sx) {
                            if (is(sk, "conditions")) return readConditions(c, sx, o.conditions);
                            return true;
                          });
                        }
                        return true;
                      });
}

bool readClusterQueue(Ctx& c, od::value& v, ClusterQueue& o) {
  // Both spellings of the admission-check list are merged; collected separately so a duplicated
  // key (hostile input) replaces its own list instead of appending to the other.
  std::vector<std::string> direct, strategy;
  bool ok = readTopLevel(
      c, v, Kind::ClusterQueue, o.meta, nullptr, [&](std::string_view k, od::value& x) {
        if (!is(k, "spec")) return true;
        return forFields(c, x, [&](std::string_view sk, od::value& sx) {
          // v1beta2 spec.cohortName, v1beta1 spec.cohort.
          if (is(sk, "cohortName") || is(sk, "cohort")) return readIdent(c, sx, o.cohort);
          if (is(sk, "admissionChecks")) return readStringList(c, sx, direct);
          if (is(sk, "admissionChecksStrategy")) {
            return forFields(c, sx, [&](std::string_view ak, od::value& ax) {
              if (!is(ak, "admissionChecks")) return true;
              strategy.clear();
              return forElements(c, ax, [&](size_t, od::value& e) {
                std::string name;
                bool ok2 = forFields(c, e, [&](std::string_view nk, od::value& nx) {
                  if (is(nk, "name")) return readIdent(c, nx, name);
                  return true;
                });
                return ok2 && addUnique(c, strategy, std::move(name));
              });
            });
          }
          if (is(sk, "resourceGroups")) {
            o.nominalQuota.clear();
            return readResourceGroups(c, sx, o.nominalQuota);
          }
          return true;
        });
      });
  if (!ok) return false;
  o.admissionChecks.clear();
  for (auto& n : direct) {
    if (!addUnique(c, o.admissionChecks, std::move(n))) return c.in("spec");
  }
  for (auto& n : strategy) {
    if (!addUnique(c, o.admissionChecks, std::move(n))) return c.in("spec");
  }
  shrink(o.admissionChecks);
  shrink(o.nominalQuota);
  return true;
}

}  // namespace firstwork::model::detail
