#include <string_view>

#include "detail/merge.hpp"

namespace firstwork::scenario::detail {
namespace {

const char* mergeKeyOf(std::string_view field) {
  if (field == "conditions") return "type";
  if (field == "admissionChecks" || field == "containerStatuses" ||
      field == "initContainerStatuses" || field == "resourceClaimStatuses" ||
      field == "podSetAssignments")
    return "name";
  return nullptr;
}

void mergeList(Json& target, const Json& patch, const char* key) {
  if (!target.is_array()) target = Json::array();
  for (const auto& entry : patch) {
    if (!entry.is_object() || !entry.contains(key)) {
      target.push_back(entry);
      continue;
    }
    const Json& id = entry[key];
    bool remove = entry.contains("$patch") && entry["$patch"] == "delete";
    bool found = false;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i].is_object() && target[i].contains(key) && target[i][key] == id) {
        found = true;
        if (remove) {
          target.erase(i);
        } else {
          target[i] = entry;
        }
        break;
      }
    }
    if (!found && !remove) target.push_back(entry);
  }
}

}  // namespace

void mergePatch(Json& target, const Json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = Json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& k = it.key();
    const Json& v = it.value();
    if (v.is_null()) {
      target.erase(k);
    } else if (const char* key = mergeKeyOf(k); key && v.is_array()) {
      mergeList(target[k], v, key);
    } else if (v.is_object()) {
      mergePatch(target[k], v);
    } else {
      target[k] = v;
    }
  }
}

}  // namespace firstwork::scenario::detail
