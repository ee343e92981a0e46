#pragma once
#include "detail/placeholders.hpp"

namespace firstwork::scenario::detail {

/// Merges a partial object into `target` the way the scenario `patch:` step documents it
/// (a subset of Kubernetes strategic merge patch):
///  - objects merge key by key, recursively; a `null` value removes the key;
///  - lists of named entries merge by their key, each entry replaced whole:
///    conditions (by `type`), admissionChecks, containerStatuses, initContainerStatuses,
///    resourceClaimStatuses, podSetAssignments (by `name`); an entry with `$patch: delete`
///    removes the entry with that key;
///  - any other list, and every scalar, replaces the old value.
void mergePatch(Json& target, const Json& patch);

}  // namespace firstwork::scenario::detail
