#include "firstwork/model/workload.hpp"

#include "detail/decoders.hpp"

namespace firstwork::model::detail {
namespace {

// Kueue validates at most 18 podSets and 8 admission checks; the bounds leave room for growth.
constexpr size_t kMaxPodSets = 32;
constexpr size_t kMaxChecks = 32;

bool readNonNegative(Ctx& c, od::value& v, int32_t& dst) {
  if (!readInt32(c, v, dst)) return false;
  if (dst < 0) return c.fail("must not be negative");
  return true;
}

bool readPodSet(Ctx& c, od::value& v, PodSet& ps) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "name")) return readIdent(c, x, ps.name);
    if (is(k, "count")) return readNonNegative(c, x, ps.count);
    if (is(k, "template")) {
      return forFields(c, x, [&](std::string_view tk, od::value& tx) {
        if (!is(tk, "spec")) return true;
        PodSpecParts parts;
        if (!readPodSpec(c, tx, parts)) return false;
        ps.perPodRequests = std::move(parts.requests);
        ps.claims.clear();
        ps.claims.reserve(parts.claims.size());
        for (auto& pc : parts.claims) {
          ps.claims.push_back(PodSetClaim{Interned(pc.name), Interned(pc.resourceClaimTemplateName),
                                          ShortString(pc.resourceClaimName)});
        }
        return true;
      });
    }
    return true;
  });
}

bool readSpec(Ctx& c, od::value& v, Workload& w) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "queueName")) return readIdent(c, x, w.queueName);
    if (is(k, "priority")) return readInt32(c, x, w.priority);
    if (is(k, "active")) return readBool(c, x, w.active);
    // The priority class is checked, not kept: nothing reads it (change 80).
    std::string priorityClass;
    if (is(k, "priorityClassName")) return readIdent(c, x, priorityClass);  // v1beta1
    if (is(k, "priorityClassRef")) {                                        // v1beta2
      return forFields(c, x, [&](std::string_view rk, od::value& rx) {
        if (is(rk, "name")) return readIdent(c, rx, priorityClass);
        return true;
      });
    }
    if (is(k, "podSets")) {
      w.podSets.clear();
      bool ok = forElements(c, x, [&](size_t, od::value& e) {
        PodSet ps;
        if (!readPodSet(c, e, ps)) return false;
        if (w.podSets.size() >= kMaxPodSets) return tooMany(c, kMaxPodSets);
        w.podSets.push_back(std::move(ps));
        return true;
      });
      shrink(w.podSets);
      return ok;
    }
    return true;
  });
}

// status.admission.podSetAssignments[].flavors: resource -> ResourceFlavor name, checked (device
// resources only, as the rest of the decoder) but not kept.
bool checkFlavors(Ctx& c, od::value& v) {
  size_t n = 0;
  return forFields(
      c, v,
      [&](std::string_view resource, od::value& x) {
        if (!isDeviceResource(resource)) return true;
        SmallString flavor;  // inline: checked as an identifier, as it was kept
        if (!readIdent(c, x, flavor)) return false;
        if (resource.size() > kMaxIdentBytes) return c.fail("resource name too long");
        if (n++ >= kMaxResources) return tooMany(c, kMaxResources);
        return true;
      },
      /*mapKeys=*/true);
}

bool readAssignment(Ctx& c, od::value& v, PodSetAssignment& a) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "name")) return readIdent(c, x, a.name);
    if (is(k, "count")) return readNonNegative(c, x, a.count);
    // Checked, not kept: nothing reads them (change 106).
    if (is(k, "flavors")) return checkFlavors(c, x);
    if (is(k, "resourceUsage")) {
      ResourceList usage;
      return readResourceList(c, x, usage, isDeviceResource);
    }
    return true;
  });
}

bool readAdmission(Ctx& c, od::value& v, WorkloadAdmission& a) {
  a.clusterQueue.clear();
  a.podSetAssignments.clear();
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "clusterQueue")) return readIdent(c, x, a.clusterQueue);
    if (is(k, "podSetAssignments")) {
      a.podSetAssignments.clear();
      bool ok = forElements(c, x, [&](size_t, od::value& e) {
        PodSetAssignment psa;
        if (!readAssignment(c, e, psa)) return false;
        if (a.podSetAssignments.size() >= kMaxPodSets) return tooMany(c, kMaxPodSets);
        a.podSetAssignments.push_back(std::move(psa));
        return true;
      });
      shrink(a.podSetAssignments);
      return ok;
    }
    return true;
  });
}

CheckState checkState(std::string_view s) {
  if (is(s, "Pending")) return CheckState::Pending;
  if (is(s, "Ready")) return CheckState::Ready;
  if (is(s, "Retry")) return CheckState::Retry;
  if (is(s, "Rejected")) return CheckState::Rejected;
  return CheckState::Unknown;
}

bool readCheck(Ctx& c, od::value& v, AdmissionCheckStatus& s) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "name")) return readIdent(c, x, s.name);
    if (is(k, "state")) {
      std::string_view st;
      if (!getString(c, x, st)) return false;
      s.state = checkState(st);
      return true;
    }
    if (is(k, "lastTransitionTime")) return readTime(c, x, s.lastTransitionTime);
    if (is(k, "message")) return readMessage(c, x, s.message);
    return true;
  });
}

bool readPodSetResources(Ctx& c, od::value& v, PodSetResources& r) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "name")) return readIdent(c, x, r.name);
    if (is(k, "resources")) return readResourceList(c, x, r.resources, isDeviceResource);
    return true;
  });
}

/// `admission`, `rare`: the fields WorkloadAdmission and WorkloadRareStatus hold, boxed by the
/// caller only when one is set.
bool readStatus(Ctx& c, od::value& v, Workload& w, WorkloadAdmission& admission,
                WorkloadRareStatus& rare) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "conditions")) return readConditions(c, x, w.conditions);
    if (is(k, "admission")) return readAdmission(c, x, admission);
    if (is(k, "admissionChecks")) {
      w.admissionChecks.clear();
      bool ok = forElements(c, x, [&](size_t, od::value& e) {
        AdmissionCheckStatus s;
        if (!readCheck(c, e, s)) return false;
        if (w.admissionChecks.size() >= kMaxChecks) return tooMany(c, kMaxChecks);
        w.admissionChecks.push_back(std::move(s));
        return true;
      });
      shrink(w.admissionChecks);
      return ok;
    }
    if (is(k, "clusterName")) return readIdent(c, x, admission.clusterName);
    if (is(k, "nominatedClusterNames")) return readStringList(c, x, rare.nominatedClusterNames);
    // v1beta2 spelling, and v1beta1's misspelled one (kept in that version for compatibility).
    if (is(k, "accumulatedPastExecutionTimeSeconds") ||
        is(k, "accumulatedPastExexcutionTimeSeconds")) {
      return readInt32(c, x, rare.accumulatedPastExecutionTimeSeconds);
    }
    if (is(k, "requeueState")) {
      return forFields(c, x, [&](std::string_view rk, od::value& rx) {
        if (is(rk, "count")) return readInt32(c, rx, rare.requeueCount);
        return true;
      });
    }
    if (is(k, "resourceRequests")) {
      rare.resourceRequests.clear();
      bool ok = forElements(c, x, [&](size_t, od::value& e) {
        PodSetResources r;
        if (!readPodSetResources(c, e, r)) return false;
        if (rare.resourceRequests.size() >= kMaxPodSets) return tooMany(c, kMaxPodSets);
        rare.resourceRequests.push_back(std::move(r));
        return true;
      });
      shrink(rare.resourceRequests);
      return ok;
    }
    return true;
  });
}

}  // namespace

bool readWorkload(Ctx& c, od::value& v, Workload& w) {
  WorkloadAdmission admission;
  WorkloadRareStatus rare;
  // apiVersion is checked, not kept: nothing reads it (change 80).
  Interned apiVersion;
  const bool ok = readTopLevel(c, v, Kind::Workload, w.meta, &apiVersion,
                               [&](std::string_view k, od::value& x) {
                                 if (is(k, "spec")) return readSpec(c, x, w);
                                 if (is(k, "status")) return readStatus(c, x, w, admission, rare);
                                 return true;
                               });
  if (admission.empty()) {
    w.admission.reset();
  } else {
    w.admission.mut() = std::move(admission);
  }
  if (rare.empty()) {
    w.rareStatus.reset();
  } else {
    w.rareStatus.mut() = std::move(rare);
  }
  return ok;
}

}  // namespace firstwork::model::detail
