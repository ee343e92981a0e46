#include "firstwork/model/node.hpp"

#include "detail/decoders.hpp"

namespace firstwork::model::detail {
namespace {

// Nodes rarely carry more than a handful of taints; 128 only stops hostile objects.
constexpr size_t kMaxNodeTaints = 128;

bool readNodeTaints(Ctx& c, od::value& v, std::vector<NodeTaint>& dst) {
  dst.clear();
  bool ok = forElements(c, v, [&](size_t, od::value& e) {
    NodeTaint t;
    bool ok2 = forFields(c, e, [&](std::string_view k, od::value& x) {
      if (k == "key") return readIdent(c, x, t.key);
      if (k == "value") return readIdent(c, x, t.value);
      if (k == "effect") return readIdent(c, x, t.effect);
      return true;
    });
    if (!ok2) return false;
    if (dst.size() >= kMaxNodeTaints) return tooMany(c, kMaxNodeTaints);
    dst.push_back(std::move(t));
    return true;
  });
  shrink(dst);
  return ok;
}

}  // namespace

bool readNode(Ctx& c, od::value& v, Node& n) {
  return readTopLevel(c, v, Kind::Node, n.meta, nullptr, [&](std::string_view k, od::value& x) {
    if (k == "spec") {
      return forFields(c, x, [&](std::string_view sk, od::value& sx) {
        if (sk == "unschedulable") return readBool(c, sx, n.unschedulable);
        if (sk == "taints") return readNodeTaints(c, sx, n.taints);
        return true;
      });
    }
    if (k == "status") {
      return forFields(c, x, [&](std::string_view sk, od::value& sx) {
        if (sk == "conditions") return readConditions(c, sx, n.conditions);
        if (sk == "allocatable") {
          return readResourceList(c, sx, n.allocatable, isExtendedResource);
        }
        if (sk == "capacity") return readResourceList(c, sx, n.capacity, isExtendedResource);
        return true;
      });
    }
    return true;
  });
}

}  // namespace firstwork::model::detail
