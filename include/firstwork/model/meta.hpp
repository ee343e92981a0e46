#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/compact_vector.hpp"
#include "firstwork/core/interned.hpp"
#include "firstwork/core/optional_time.hpp"
#include "firstwork/core/small_string.hpp"
#include "firstwork/model/resource_version.hpp"

namespace firstwork::model {

/// A part of an object most objects leave empty, kept out of line: it costs a pointer while
/// empty and reads as a default T then. Copies deeply (decoded objects are values). Used where
/// moving rarely set fields out takes an object into a smaller allocation (model::Object is as
/// large as its largest kind, and every tracked object is one block of that size).
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  ~Boxed() = default;

  const T& operator*() const { return p_ ? *p_ : empty(); }
  const T* operator->() const { return &**this; }
  /// For writing: the value, allocated (default) when the box is empty.
  T& mut() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  /// True when the value is allocated (a written box; it may have been written empty).
  bool held() const { return p_ != nullptr; }
  void reset() { p_.reset(); }

 private:
  static const T& empty() {
    static const T e{};
    return e;
  }
  std::unique_ptr<T> p_;
};

/// Small ordered key/value list: objects carry few relevant labels/annotations, and a flat vector
/// is smaller and faster than a map at that size.
/// Keys come from a small vocabulary (the prefixes below), so they are interned; values are not
/// (job names and uids are unique, and the pool never shrinks): each is a SmallString, inline up
/// to 38 characters (a Job's uid, a Workload's name, an RFC 3339 time; bench/README.md, change
/// 71).
/// A CompactVector (16 bytes; change 72).
using KeyValues = CompactVector<std::pair<Interned, SmallString>>;

/// Returns the value for `key`, or nullptr.
const SmallString* findValue(const KeyValues& kv, std::string_view key);

/// metadata.ownerReferences[]: what firstwork reads of one, in 80 bytes (jemalloc's 80-byte
/// class; 96 with its apiVersion and controller flag: bench/README.md, change 86). Its apiVersion
/// and controller flag are checked when decoded but not kept: ObjectMeta::ownerReferences lists
/// the controller references first.
struct OwnerReference {
  Interned kind;     // e.g. "Job"
  ShortString name;  // inline up to 30 characters (change 77)
  SmallString uid;   // inline: a uid is 36 characters
};

/// metav1.ObjectMeta, slimmed. Decoders keep only the labels and annotations something reads:
/// `kueue.x-k8s.io/workload`, `kueue.x-k8s.io/job-uid`, `kueue.x-k8s.io/multikueue-origin`,
/// `resource.kubernetes.io/pod-claim-name`, every `firstwork.dev/` key, and of `nvidia.com/` the
/// GPU feature discovery sharing labels `*.product`, `*.count`, `*.replicas`,
/// `*.sharing-strategy` and `nvidia.com/mig.strategy`; never more than 64 of each (a reader of
/// another key must add it to the list in src/model/meta.cpp).
struct ObjectMeta {
  /// Inline up to 30 characters, as most names are (a Job's, its pods', its Workload's): a
  /// std::string of the same 32 bytes took a heap block past 15 (bench/README.md, change 77).
  ShortString name;
  Interned namespace_;  // empty for cluster-scoped objects
  SmallString uid;      // inline: a uid is 36 characters (bench/README.md, change 69)
  /// 8 bytes (change 72). metadata.generation is checked when decoded but not kept: nothing
  /// reads it.
  ResourceVersion resourceVersion;
  SystemTime creationTimestamp{};
  OptionalTime deletionTimestamp;  // 8 bytes: the object one size class smaller (change 69)
  KeyValues labels;
  KeyValues annotations;
  /// The controller references first (an object has one, a hostile one may list more), then the
  /// others, each group in the order listed; past 8 references only controllers are kept.
  CompactVector<OwnerReference> ownerReferences;
};

/// A namespaced object's namespace and name, viewed: the key of indexes whose entries hold the
/// object itself (no "ns/name" copy an entry), hashed by hashOf.
struct NamespacedName {
  std::string_view ns;
  std::string_view name;
  bool operator==(const NamespacedName&) const = default;
};
inline NamespacedName namespacedName(const ObjectMeta& m) { return {m.namespace_, m.name}; }
inline size_t hashOf(NamespacedName k) noexcept {
  const size_t h = std::hash<std::string_view>{}(k.name);
  return h ^ (std::hash<std::string_view>{}(k.ns) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

enum class ConditionStatus : uint8_t { Unknown, True, False };

/// metav1.Condition and the Pod/Node condition shapes (lastProbeTime is not kept).
struct Condition {
  Interned type;
  ConditionStatus status = ConditionStatus::Unknown;
  Interned reason;
  /// Shared when at most kPooledMessageBytes long (the same few messages on every object),
  /// owned when longer (those name the object: preemptions, scheduling failures).
  Interned message;
  /// 8 bytes: a condition 40 bytes where it was 48, and most objects' conditions one jemalloc
  /// size class smaller (bench/README.md, change 70).
  OptionalTime lastTransitionTime;
};

/// A Pod or Node condition (core/v1 PodCondition, NodeCondition) without its message: nothing
/// reads a pod's or a node's condition messages (only a Workload's: preemptions, admission
/// checks), so they are checked when decoded but not kept. 32 bytes where a Condition is 40: a
/// pod's two kept conditions take a 64-byte block, not an 80-byte one (bench/README.md,
/// change 89). A reader of such a message must keep it again (a Condition there).
struct BriefCondition {
  Interned type;
  ConditionStatus status = ConditionStatus::Unknown;
  Interned reason;
  OptionalTime lastTransitionTime;
};

/// Condition messages up to this long are pooled (see Interned::pooledUpTo).
inline constexpr size_t kPooledMessageBytes = 64;

/// An object's status.conditions: a CompactVector (16 bytes), as every list a decoded kind
/// carries, so that each kind fits 232 bytes (bench/README.md, change 80).
using Conditions = CompactVector<Condition>;
/// A Pod's or a Node's status.conditions.
using BriefConditions = CompactVector<BriefCondition>;

/// Returns the condition of `type`, or nullptr.
const Condition* findCondition(const Conditions& conditions, std::string_view type);
const BriefCondition* findCondition(const BriefConditions& conditions, std::string_view type);
/// True when the condition of `type` exists with status True.
bool isTrue(const Conditions& conditions, std::string_view type);
bool isTrue(const BriefConditions& conditions, std::string_view type);

/// A resource name with its quantity in milli-units (see core/quantity.hpp). A CompactVector
/// (change 80).
using ResourceList = CompactVector<std::pair<Interned, int64_t>>;

/// Milli-units of `resource` in `list`, 0 when absent.
int64_t milliOf(const ResourceList& list, std::string_view resource);

}  // namespace firstwork::model
