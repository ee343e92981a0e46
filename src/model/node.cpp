#include "firstwork/model/node.hpp"

#include "detail/decoders.hpp"

namespace firstwork::model::detail {
namespace {

// Nodes rarely carry more than a handful of taints; 128 only stops hostile objects.
constexpr size_t kMaxNodeTaints = 128;

bool readNodeTaints(Ctx& c, od::value& v, std::vector<NodeTaint>& dst) {
  return readTaintList(c, v, dst, kMaxNodeTaints);
}

}  // namespace

bool readNode(Ctx& c, od::value& v, Node& n) {
  return readTopLevel(c, v, Kind::Node, n.meta, nullptr, [&](std::string_view k, od::value& x) {
    if (is(k, "spec")) {
      return forFields(c, x, [&](std::string_view sk, od::value& sx) {
        if (is(sk, "unschedulable")) return readBool(c, sx, n.unschedulable);
        if (is(sk, "taints")) return readNodeTaints(c, sx, n.taints);
        return true;
      });
    }
    if (is(k, "status")) {
      return forFields(c, x, [&](std::string_view sk, od::value& sx) {
        if (is(sk, "conditions")) return readConditions(c, sx, n.conditions);
        if (is(sk, "allocatable")) {
          return readResourceList(c, sx, n.allocatable, isExtendedResource);
        }
        if (is(sk, "capacity")) return readResourceList(c, sx, n.capacity, isExtendedResource);
        return true;
      });
    }
    return true;
  });
}

}  // namespace firstwork::model::detail
