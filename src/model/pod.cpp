#include "firstwork/model/pod.hpp"

#include <fmt/format.h>

#include <cstring>

#include "detail/decoders.hpp"

namespace firstwork::model::detail {
namespace {

// Pods have no API limit on containers; 128 is far above anything real.
constexpr size_t kMaxContainers = 128;

/// One container's requests of extended resources; a limit stands in for a missing request
/// (the API server defaults requests to limits for extended resources).
struct ContainerResources {
  ResourceList requests;
  ResourceList limits;
  bool sidecar = false;  // init container with restartPolicy: Always

  bool effective(Ctx& c, ResourceList& out) const {
    out = requests;
    for (const auto& [name, milli] : limits) {
      bool found = false;
      for (const auto& r : requests) found = found || r.first == name;
      if (!found && !addResource(out, name, milli)) return tooMany(c, kMaxResources);
    }
    return true;
  }
};

bool readContainer(Ctx& c, od::value& v, ContainerResources& cr) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "resources")) {
      return forFields(c, x, [&](std::string_view rk, od::value& rx) {
        if (is(rk, "requests")) return readResourceList(c, rx, cr.requests, isExtendedResource);
        if (is(rk, "limits")) return readResourceList(c, rx, cr.limits, isExtendedResource);
        return true;
      });
    }
    if (is(k, "restartPolicy")) {
      std::string_view p;
      if (!getString(c, x, p)) return false;
      cr.sidecar = is(p, "Always");
    }
    return true;
  });
}

bool readClaimRef(Ctx& c, od::value& v, PodClaim& claim, bool nested = false) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "name")) return readIdent(c, x, claim.name);
    if (is(k, "resourceClaimName")) return readIdent(c, x, claim.resourceClaimName);
    if (is(k, "resourceClaimTemplateName")) return readIdent(c, x, claim.resourceClaimTemplateName);
    // Kubernetes ≤ 1.30 nested the two names under `source` (one level; never recurse further).
    if (is(k, "source") && !nested) return readClaimRef(c, x, claim, true);
    return true;
  });
}

PodPhase podPhase(std::string_view s) {
  if (is(s, "Pending")) return PodPhase::Pending;
  if (is(s, "Running")) return PodPhase::Running;
  if (is(s, "Succeeded")) return PodPhase::Succeeded;
  if (is(s, "Failed")) return PodPhase::Failed;
  return PodPhase::Unknown;
}

bool readContainerState(Ctx& c, od::value& v, ContainerStatus& cs) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    od::json_type t;
    if (!typeOf(c, x, t)) return false;
    if (t == od::json_type::null) return true;
    if (is(k, "waiting")) {
      cs.state = ContainerStateKind::Waiting;
      return forFields(c, x, [&](std::string_view wk, od::value& wx) {
        if (is(wk, "reason")) return readText(c, wx, cs.reason);
        if (is(wk, "message")) return checkMessage(c, wx);
        return true;
      });
    }
    if (is(k, "running")) {
      cs.state = ContainerStateKind::Running;
      return forFields(c, x, [&](std::string_view rk, od::value& rx) {
        if (is(rk, "startedAt")) return readTime(c, rx, cs.startedAt);
        return true;
      });
    }
    if (is(k, "terminated")) {
      cs.state = ContainerStateKind::Terminated;
      return forFields(c, x, [&](std::string_view tk, od::value& tx) {
        if (is(tk, "exitCode")) return readInt32(c, tx, cs.exitCode);
        if (is(tk, "reason")) return readText(c, tx, cs.reason);
        if (is(tk, "message")) return checkMessage(c, tx);
        if (is(tk, "startedAt")) return readTime(c, tx, cs.startedAt);
        if (is(tk, "finishedAt")) return readTime(c, tx, cs.finishedAt);
        return true;
      });
    }
    return true;
  });
}

bool readContainerStatuses(Ctx& c, od::value& v, bool init, CompactVector<ContainerStatus>& dst) {
  dst.clear();
  return forElements(c, v, [&](size_t, od::value& x) {
    ContainerStatus cs;
    cs.init = init;
    bool ok = forFields(c, x, [&](std::string_view k, od::value& f) {
      if (is(k, "name")) return readIdent(c, f, cs.name);
      if (is(k, "ready")) return readBool(c, f, cs.ready);
      if (is(k, "restartCount")) return readInt32(c, f, cs.restartCount);
      if (is(k, "state")) return readContainerState(c, f, cs);
      return true;
    });
    if (!ok) return false;
    if (dst.size() >= kMaxContainers) return tooMany(c, kMaxContainers);
    dst.push_back(std::move(cs));
    return true;
  });
}

/// status.resourceClaimStatuses[] entry.
struct ClaimStatus {
  std::string name;
  std::string resourceClaimName;
};

}  // namespace

bool readPodSpec(Ctx& c, od::value& v, PodSpecParts& parts) {
  ResourceList regular;     // sum over containers
  ResourceList sidecars;    // sum over restartable init containers
  ResourceList initMax;     // max over init containers of their effective request
  ResourceList effective;
  bool ok = forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "containers")) {
      regular.clear();
      return forElements(c, x, [&](size_t, od::value& e) {
        ContainerResources cr;
        if (!readContainer(c, e, cr) || !cr.effective(c, effective)) return false;
        for (const auto& [name, milli] : effective) {
          if (!addResource(regular, name, milli)) return tooMany(c, kMaxResources);
        }
        return true;
      });
    }
    if (is(k, "initContainers")) {
      sidecars.clear();
      initMax.clear();
      return forElements(c, x, [&](size_t, od::value& e) {
        ContainerResources cr;
        if (!readContainer(c, e, cr) || !cr.effective(c, effective)) return false;
        // An init container runs next to the sidecars started before it; a sidecar keeps
        // running, so it also adds to the regular containers' sum (k8s PodRequests).
        if (cr.sidecar) {
          for (const auto& [name, milli] : effective) {
            if (!addResource(sidecars, name, milli)) return tooMany(c, kMaxResources);
          }
          for (const auto& [name, milli] : sidecars) {
            if (!maxResource(initMax, name, milli)) return tooMany(c, kMaxResources);
          }
        } else {
          for (const auto& [name, milli] : effective) {
            int64_t withSidecars = saturatingAdd(milli, milliOf(sidecars, name));
            if (!maxResource(initMax, name, withSidecars)) return tooMany(c, kMaxResources);
          }
        }
        return true;
      });
    }
    if (is(k, "resourceClaims")) {
      parts.claims.clear();
      return forElements(c, x, [&](size_t, od::value& e) {
        PodClaim claim;
        if (!readClaimRef(c, e, claim)) return false;
        if (parts.claims.size() >= kMaxEntries) return tooMany(c, kMaxEntries);
        parts.claims.push_back(std::move(claim));
        return true;
      });
    }
    if (is(k, "nodeName")) return readIdent(c, x, parts.nodeName);
    // Checked to be a list, not kept: nothing reads it (change 80).
    if (is(k, "schedulingGates")) return forElements(c, x, [](size_t, od::value&) { return true; });
    return true;
  });
  if (!ok) return false;
  parts.requests = std::move(regular);
  for (const auto& [name, milli] : sidecars) {
    if (!addResource(parts.requests, name, milli)) return tooMany(c, kMaxResources);
  }
  for (const auto& [name, milli] : initMax) {
    if (!maxResource(parts.requests, name, milli)) return tooMany(c, kMaxResources);
  }
  shrink(parts.requests);
  shrink(parts.claims);
  return true;
}

bool readPod(Ctx& c, od::value& v, Pod& p) {
  PodSpecParts spec;
  CompactVector<ContainerStatus> regular, init;
  std::vector<ClaimStatus> claimStatuses;
  bool ok = readTopLevel(c, v, Kind::Pod, p.meta, nullptr, [&](std::string_view k, od::value& x) {
    if (is(k, "spec")) return readPodSpec(c, x, spec);
    if (is(k, "status")) {
      return forFields(c, x, [&](std::string_view sk, od::value& sx) {
        if (is(sk, "phase")) {
          std::string_view s;
          if (!getString(c, sx, s)) return false;
          p.phase = podPhase(s);
          return true;
        }
        if (is(sk, "startTime")) {
          // Checked, not kept: nothing reads it (the running milestone comes from the
          // containers' startedAt), and the Pod is 8 bytes smaller (change 80).
          OptionalTime startTime;
          return readTime(c, sx, startTime);
        }
        if (is(sk, "conditions")) {
          return readConditions(c, sx, p.conditions, kUnreadPodConditionTypes);
        }
        if (is(sk, "containerStatuses")) return readContainerStatuses(c, sx, false, regular);
        if (is(sk, "initContainerStatuses")) return readContainerStatuses(c, sx, true, init);
        if (is(sk, "resourceClaimStatuses")) {
          claimStatuses.clear();
          return forElements(c, sx, [&](size_t, od::value& e) {
            ClaimStatus cs;
            bool ok2 = forFields(c, e, [&](std::string_view ck, od::value& cx) {
              if (is(ck, "name")) return readIdent(c, cx, cs.name);
              if (is(ck, "resourceClaimName")) return readIdent(c, cx, cs.resourceClaimName);
              return true;
            });
            if (!ok2) return false;
            if (claimStatuses.size() >= kMaxEntries) return tooMany(c, kMaxEntries);
            claimStatuses.push_back(std::move(cs));
            return true;
          });
        }
        return true;
      });
    }
    return true;
  });
  if (!ok) return false;
  p.nodeName = std::move(spec.nodeName);
  p.requests = std::move(spec.requests);
  p.claims = std::move(spec.claims);
  for (auto& cs : claimStatuses) {
    PodClaim* claim = nullptr;
    for (auto& pc : p.claims) {
      if (pc.name == cs.name) claim = &pc;
    }
    if (claim == nullptr) {
      if (p.claims.size() >= kMaxEntries) break;
      claim = &p.claims.emplace_back();
      claim->name = cs.name;
    }
    claim->generatedClaimName = std::move(cs.resourceClaimName);
  }
  p.containers = std::move(regular);
  p.containers.reserve(p.containers.size() + init.size());
  for (auto& cs : init) p.containers.push_back(std::move(cs));
  shrink(p.containers);
  shrink(p.claims);
  return true;
}

}  // namespace firstwork::model::detail

namespace firstwork::model {
namespace {

// Kubernetes' resourceclaim controller names the claim it makes for a pod's claim with
// generateName "<pod>-<pod's claim name>-", to which the API server adds 5 random characters
// (past 57 characters both names are first cut in proportion to their lengths, so that the
// whole stays within 63): what follows that prefix, when `claim` has it whole.
std::optional<std::string_view> generatedSuffix(std::string_view claim, std::string_view pod,
                                                std::string_view podClaim) {
  const size_t prefix = pod.size() + podClaim.size() + 2;
  if (claim.size() <= prefix || !claim.starts_with(pod) || claim[pod.size()] != '-') {
    return std::nullopt;
  }
  if (claim.substr(pod.size() + 1, podClaim.size()) != podClaim || claim[prefix - 1] != '-') {
    return std::nullopt;
  }
  return claim.substr(prefix);
}

}  // namespace

PodClaimRef::PodClaimRef(const PodClaim& c, std::string_view podName)
    : name(c.name), templateName(c.resourceClaimTemplateName) {
  const std::string_view resolved = claimNameOf(c);
  if (resolved.empty() || resolved.front() == kGeneratedMark) return;
  std::optional<std::string_view> suffix;
  if (c.resourceClaimName.empty() && resolved.size() <= NameBuffer().size()) {
    suffix = generatedSuffix(resolved, podName, c.name);
  }
  if (!suffix || suffix->size() + 1 > ShortString::kInlineBytes) {
    claim = ShortString(resolved);
    return;
  }
  std::array<char, ShortString::kInlineBytes> kept{};
  kept[0] = kGeneratedMark;
  std::memcpy(kept.data() + 1, suffix->data(), suffix->size());
  claim = ShortString(std::string_view(kept.data(), suffix->size() + 1));
}

std::string_view PodClaimRef::claimName(std::string_view podName, NameBuffer& buf) const {
  const std::string_view kept = claim.view();
  if (kept.empty() || kept.front() != kGeneratedMark) return kept;
  const std::string_view suffix = kept.substr(1);
  const std::string_view podClaim = name;
  const size_t n = podName.size() + podClaim.size() + suffix.size() + 2;
  if (podName.empty() || n > buf.size()) return {};  // rebuilt for another pod than its own
  char* out = buf.data();
  std::memcpy(out, podName.data(), podName.size());
  out += podName.size();
  *out++ = '-';
  std::memcpy(out, podClaim.data(), podClaim.size());
  out += podClaim.size();
  *out++ = '-';
  std::memcpy(out, suffix.data(), suffix.size());
  return {buf.data(), n};
}

bool PodClaimRef::resolvesTo(std::string_view podName, std::string_view resourceClaim) const {
  const std::string_view kept = claim.view();
  if (kept.empty() || kept.front() != kGeneratedMark) return kept == resourceClaim;
  // A generated name: the claim's when it has this pod's prefix and the kept suffix (nothing is
  // rebuilt: every event of a DRA pod compares its claims so).
  if (podName.empty()) return resourceClaim.empty();
  const auto suffix = generatedSuffix(resourceClaim, podName, name);
  return suffix && *suffix == kept.substr(1);
}

}  // namespace firstwork::model
