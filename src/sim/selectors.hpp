#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace firstwork::sim::detail {

/// One term of a label selector (k8s.io/apimachinery/pkg/labels grammar).
struct LabelRequirement {
  enum class Op { kExists, kNotExists, kEquals, kNotEquals, kIn, kNotIn };
  std::string key;
  Op op = Op::kExists;
  std::vector<std::string> values;
};

/// One term of a field selector: `field=value`, `field==value` or `field!=value`.
struct FieldRequirement {
  std::string field;
  bool negate = false;
  std::string value;
};

/// labelSelector + fieldSelector of a LIST or WATCH. Matching reads the object's JSON.
struct Selector {
  std::vector<LabelRequirement> labels;
  std::vector<FieldRequirement> fields;
  bool empty() const { return labels.empty() && fields.empty(); }
  bool matches(const nlohmann::ordered_json& object) const;
};

/// Parses a label selector into `out`. Returns "" or the reason it is invalid.
std::string parseLabelSelector(std::string_view text, std::vector<LabelRequirement>& out);

/// Parses a field selector into `out`; only `supported` field paths are accepted (the server
/// answers "field label not supported" for the rest, like kube-apiserver). Returns "" or why.
std::string parseFieldSelector(std::string_view text, const std::vector<std::string>& supported,
                               std::vector<FieldRequirement>& out);

/// The string value of a dotted field path (`spec.nodeName`), as a field selector compares it:
/// strings as-is, booleans "true"/"false", numbers in decimal, absent "".
std::string fieldValue(const nlohmann::ordered_json& object, std::string_view path);

}  // namespace firstwork::sim::detail
