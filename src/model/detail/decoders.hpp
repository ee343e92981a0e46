#pragma once
// Private to src/model: one reader per kind (each in its own .cpp) and the pieces they share.
#include <string>
#include <vector>

#include "detail/json.hpp"
#include "firstwork/model/object.hpp"

namespace firstwork::model::detail {

/// Reads the top level of an object of `kind`: `metadata` into `meta`, `apiVersion` into
/// `apiVersion` (when given), checks `kind` when present, and hands every other field to `fn`.
/// Fails when metadata.name or metadata.uid is missing.
template <typename Fn>
bool readTopLevel(Ctx& c, od::value& v, Kind kind, ObjectMeta& meta, Interned* apiVersion,
                  Fn&& fn);

/// The PodSpec parts both a Pod and a Workload's pod template need.
struct PodSpecParts {
  /// Effective per-pod requests of extended resources, computed as the scheduler does:
  /// max(sum(containers) + sum(sidecars), max over init containers of (request + sidecars before)).
  ResourceList requests;
  CompactVector<PodClaim> claims;  // spec.resourceClaims[] (generatedClaimName empty)
  std::string nodeName;
};
bool readPodSpec(Ctx& c, od::value& v, PodSpecParts& parts);

bool readWorkload(Ctx& c, od::value& v, Workload& w);
bool readMultiKueueCluster(Ctx& c, od::value& v, MultiKueueCluster& o);
bool readMultiKueueConfig(Ctx& c, od::value& v, MultiKueueConfig& o);
bool readAdmissionCheck(Ctx& c, od::value& v, AdmissionCheck& o);
bool readClusterQueue(Ctx& c, od::value& v, ClusterQueue& o);
bool readPod(Ctx& c, od::value& v, Pod& p);
bool readResourceClaim(Ctx& c, od::value& v, ResourceClaim& rc);
bool readResourceSlice(Ctx& c, od::value& v, ResourceSlice& rs);
bool readNode(Ctx& c, od::value& v, Node& n);

/// Decodes an object of `kind` into `out` (which is reset to that alternative first, so a partly
/// decoded object, e.g. its metadata, is still readable after a failure).
bool readObject(Ctx& c, od::value& v, Kind kind, Object& out);

// ---- template definition ----

bool checkKind(Ctx& c, od::value& v, Kind kind);
bool requireIdentity(Ctx& c, const ObjectMeta& meta);

template <typename Fn>
bool readTopLevel(Ctx& c, od::value& v, Kind kind, ObjectMeta& meta, Interned* apiVersion,
                  Fn&& fn) {
  bool ok = forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "metadata")) return readMeta(c, x, meta);
    if (is(k, "kind")) return checkKind(c, x, kind);
    if (is(k, "apiVersion")) return apiVersion == nullptr || readIdent(c, x, *apiVersion);
    return fn(k, x);
  });
  return ok && requireIdentity(c, meta);
}

}  // namespace firstwork::model::detail
