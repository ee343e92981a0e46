#pragma once
#include <string>
#include <vector>

#include "firstwork/model/meta.hpp"

namespace firstwork::model {

/// kueue.x-k8s.io MultiKueueCluster: only its `Active` condition matters.
struct MultiKueueCluster {
  ObjectMeta meta;
  Conditions conditions;
};

/// kueue.x-k8s.io MultiKueueConfig: spec.clusters[] (MultiKueueCluster names).
struct MultiKueueConfig {
  ObjectMeta meta;
  std::vector<std::string> clusters;
};

/// kueue.x-k8s.io AdmissionCheck. The controller name and the parameters' kind are interned
/// (a few values, each 8 bytes), so that the kind fits 232 bytes (change 80).
struct AdmissionCheck {
  ObjectMeta meta;
  Interned controllerName;  // "kueue.x-k8s.io/multikueue" for MultiKueue
  Interned parametersKind;  // "MultiKueueConfig"
  std::string parametersName;
  Conditions conditions;
};

/// kueue.x-k8s.io ClusterQueue: which admission checks gate it and its cohort.
struct ClusterQueue {
  ObjectMeta meta;
  std::string cohort;  // v1beta2 spec.cohortName, v1beta1 spec.cohort
  /// spec.admissionChecks[] plus spec.admissionChecksStrategy.admissionChecks[].name.
  std::vector<std::string> admissionChecks;
  /// nominalQuota per resource summed over resourceGroups[].flavors[] (milli-units), e.g.
  /// {"nvidia.com/gpu", 8000}; device resources only (not cpu/memory/ephemeral-storage/pods/hugepages).
  ResourceList nominalQuota;
};

}  // namespace firstwork::model
