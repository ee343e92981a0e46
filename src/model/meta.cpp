#include "firstwork/model/meta.hpp"

#include <algorithm>
#include <array>
#include <type_traits>

#include "detail/json.hpp"

namespace firstwork::model {

const SmallString* findValue(const KeyValues& kv, std::string_view key) {
  for (const auto& [k, v] : kv) {
    if (k == key) return &v;
  }
  return nullptr;
}

namespace {
template <typename C>
const C* findIn(const CompactVector<C>& conditions, std::string_view type) {
  for (const auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}
}  // namespace

const Condition* findCondition(const Conditions& conditions, std::string_view type) {
  return findIn(conditions, type);
}

const BriefCondition* findCondition(const BriefConditions& conditions, std::string_view type) {
  return findIn(conditions, type);
}

bool isTrue(const Conditions& conditions, std::string_view type) {
  const Condition* c = findCondition(conditions, type);
  return c != nullptr && c->status == ConditionStatus::True;
}

bool isTrue(const BriefConditions& conditions, std::string_view type) {
  const BriefCondition* c = findCondition(conditions, type);
  return c != nullptr && c->status == ConditionStatus::True;
}

int64_t milliOf(const ResourceList& list, std::string_view resource) {
  for (const auto& [name, milli] : list) {
    if (name == resource) return milli;
  }
  return 0;
}

namespace detail {
namespace {

// The label and annotation keys something reads (meta.hpp); everything else is dropped at
// decode time: most of an object's metadata is for other controllers, and what a pod carries for
// them (job names and indexes, Kueue's podset and queue labels, CNI network status) was a few
// hundred bytes of every tracked pod (bench/README.md, change 26). Readers:
//   kueue.x-k8s.io/workload               pod → its Workload (src/engine/milestone_engine.cpp)
//   kueue.x-k8s.io/job-uid                Workload → its job (same)
//   kueue.x-k8s.io/multikueue-origin      a worker's copy of a manager Workload (same)
//   resource.kubernetes.io/pod-claim-name claim → the pod's claim entry (same)
//   firstwork.dev/...                     useful-work signals (src/engine/useful_work.cpp); the
//                                         whole prefix: it is ours
//   nvidia.com/... (some)                 GPU feature discovery, below (src/inventory)

// Of NVIDIA's labels only the ones that tell how a node hands out its devices are read (GPU
// feature discovery: `<resource>.product|count|replicas|sharing-strategy` and
// `nvidia.com/mig.strategy`; see src/inventory/node_sharing.cpp). A GPU-operator node carries 40
// to 80 other nvidia.com/ labels (deploy flags, CUDA versions, per-profile MIG engine counts);
// keeping them could push the ones that matter past kMaxKeyValues.
bool keptNvidiaKey(std::string_view key) {
  constexpr std::string_view kSuffixes[] = {".product", ".count", ".replicas", ".sharing-strategy"};
  if (is(key, "nvidia.com/mig.strategy")) return true;
  for (auto s : kSuffixes) {
    if (key.size() > s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0) return true;
  }
  return false;
}

// Compared with literals, inline (detail::is): every label and annotation key of every object
// comes here (bench/README.md, change 113). A prefix alone is no key.
constexpr char kOwnPrefix[] = "firstwork.dev/";
constexpr char kNvidiaPrefix[] = "nvidia.com/";

bool keptKey(std::string_view key) {
  if (key.size() > sizeof kOwnPrefix - 1 && startsWith(key, kOwnPrefix)) return true;
  if (key.size() > sizeof kNvidiaPrefix - 1 && startsWith(key, kNvidiaPrefix)) {
    return keptNvidiaKey(key);
  }
  return is(key, "kueue.x-k8s.io/workload") || is(key, "kueue.x-k8s.io/job-uid") ||
         is(key, "kueue.x-k8s.io/multikueue-origin") ||
         is(key, "resource.kubernetes.io/pod-claim-name");
}

// Qualified label/annotation keys are at most 253 (prefix) + 1 + 63 (name) bytes.
constexpr size_t kMaxKeyBytes = 317;

bool readKeyValues(Ctx& c, od::value& v, KeyValues& dst) {
  dst.clear();
  bool ok = forFields(
      c, v,
      [&](std::string_view key, od::value& x) {
        if (key.size() > kMaxKeyBytes || !keptKey(key)) return true;
        SmallString value;
        if (!readText(c, x, value)) return false;
        for (auto& [k, old] : dst) {
          if (k == key) {  // duplicate key: the last one wins, as in Go's encoding/json
            old = std::move(value);
            return true;
          }
        }
        if (dst.size() < kMaxKeyValues) dst.emplace_back(Interned(key), std::move(value));
        return true;
      },
      /*mapKeys=*/true);
  shrink(dst);
  return ok;
}

bool readOwner(Ctx& c, od::value& v, OwnerReference& o, bool& controller) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "apiVersion")) {  // checked, not kept: nothing reads it (change 86)
      Interned apiVersion;
      return readIdent(c, x, apiVersion);
    }
    if (is(k, "kind")) return readIdent(c, x, o.kind);
    if (is(k, "name")) return readIdent(c, x, o.name);
    if (is(k, "uid")) return readIdent(c, x, o.uid);
    if (is(k, "controller")) return readBool(c, x, controller);
    return true;
  });
}

// An object has one controller and rarely more than a couple of owners. Keep the first 8 and,
// beyond that, only controller references, up to the general bound.
constexpr size_t kKeptOwners = 8;

bool readOwners(Ctx& c, od::value& v, CompactVector<OwnerReference>& dst) {
  dst.clear();
  size_t controllers = 0;  // dst[0, controllers) are the controller references
  bool ok = forElements(c, v, [&](size_t, od::value& x) {
    OwnerReference o;
    bool controller = false;
    if (!readOwner(c, x, o, controller)) return false;
    if (dst.size() < kKeptOwners || (controller && dst.size() < kMaxEntries)) {
      // The controller references first, each group in the order listed (the engine resolves an
      // object's Workload through its controller before its other owners).
      dst.insert(dst.begin() + static_cast<std::ptrdiff_t>(controller ? controllers++ : dst.size()),
                 std::move(o));
    }
    return true;
  });
  shrink(dst);
  return ok;
}

ConditionStatus conditionStatus(std::string_view s) {
  if (is(s, "True")) return ConditionStatus::True;
  if (is(s, "False")) return ConditionStatus::False;
  return ConditionStatus::Unknown;
}

template <typename C>
bool readCondition(Ctx& c, od::value& v, C& cond) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "type")) return readIdent(c, x, cond.type);
    if (is(k, "status")) {
      std::string_view s;
      if (!getString(c, x, s)) return false;
      cond.status = conditionStatus(s);
      return true;
    }
    if (is(k, "reason")) return readText(c, x, cond.reason);
    if (is(k, "message")) {
      if constexpr (std::is_same_v<C, Condition>) {
        return readMessage(c, x, cond.message);
      } else {
        return checkMessage(c, x);  // not kept (BriefCondition)
      }
    }
    if (is(k, "lastTransitionTime")) return readTime(c, x, cond.lastTransitionTime);
    return true;
  });
}

}  // namespace

bool readMeta(Ctx& c, od::value& v, ObjectMeta& m) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    switch (k.size()) {
      case 3:
        if (is(k, "uid")) return readIdent(c, x, m.uid);
        break;
      case 4:
        if (is(k, "name")) return readIdent(c, x, m.name);
        break;
      case 6:
        if (is(k, "labels")) return readKeyValues(c, x, m.labels);
        break;
      case 9:
        if (is(k, "namespace")) return readIdent(c, x, m.namespace_);
        break;
      case 10:
        if (is(k, "generation")) {  // checked, not kept (meta.hpp)
          int64_t generation = 0;
          return readInt64(c, x, generation);
        }
        break;
      case 11:
        if (is(k, "annotations")) return readKeyValues(c, x, m.annotations);
        break;
      case 15:
        if (is(k, "resourceVersion")) return readIdent(c, x, m.resourceVersion);
        if (is(k, "ownerReferences")) return readOwners(c, x, m.ownerReferences);
        break;
      case 17:
        if (is(k, "creationTimestamp")) return readTime(c, x, m.creationTimestamp);
        if (is(k, "deletionTimestamp")) return readTime(c, x, m.deletionTimestamp);
        break;
      default:
        break;
    }
    return true;
  });
}

namespace {
template <typename C>
bool readConditionList(Ctx& c, od::value& v, CompactVector<C>& dst,
                       std::span<const std::string_view> skip) {
  dst.clear();
  bool ok = forElements(c, v, [&](size_t, od::value& x) {
    C cond;
    if (!readCondition(c, x, cond)) return false;
    if (cond.type.empty()) return true;  // not a condition without its list-map key; skip it
    if (std::find(skip.begin(), skip.end(), cond.type.str()) != skip.end()) return true;
    if (dst.size() >= kMaxEntries) return tooMany(c, kMaxEntries);
    dst.push_back(std::move(cond));
    return true;
  });
  shrink(dst);
  return ok;
}
}  // namespace

bool readConditions(Ctx& c, od::value& v, Conditions& dst, std::span<const std::string_view> skip) {
  return readConditionList(c, v, dst, skip);
}

bool readConditions(Ctx& c, od::value& v, BriefConditions& dst,
                    std::span<const std::string_view> skip) {
  return readConditionList(c, v, dst, skip);
}

bool readStringList(Ctx& c, od::value& v, std::vector<std::string>& dst, size_t max) {
  dst.clear();
  bool ok = forElements(c, v, [&](size_t, od::value& x) {
    std::string s;
    if (!readIdent(c, x, s)) return false;
    if (s.empty()) return true;
    if (dst.size() >= max) return tooMany(c, max);
    dst.push_back(std::move(s));
    return true;
  });
  shrink(dst);
  return ok;
}

}  // namespace detail
}  // namespace firstwork::model
