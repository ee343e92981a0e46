#pragma once
#include <string>
#include <vector>

#include "firstwork/model/meta.hpp"

namespace firstwork::model {

struct NodeTaint {
  Interned key;
  std::string value;
  Interned effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

/// core/v1 Node. Labels kept are the `nvidia.com/` ones (GPU product, sharing strategy, MIG).
struct Node {
  ObjectMeta meta;
  bool unschedulable = false;
  BriefConditions conditions;  // Ready is the one that matters
  std::vector<NodeTaint> taints;
  ResourceList allocatable;  // extended resources only (names containing '/')
  ResourceList capacity;     // extended resources only
};

}  // namespace firstwork::model
