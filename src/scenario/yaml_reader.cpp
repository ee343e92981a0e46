#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "detail/yaml_reader.hpp"

namespace firstwork::scenario::detail {

void Problems::add(const YAML::Node& where, const std::string& path, const std::string& message) {
  int line = -1;
  if (where.IsDefined()) line = where.Mark().line;
  if (line >= 0)
    items_.push_back(fmt::format("{}:{}: {}: {}", file_, line + 1, path, message));
  else
    items_.push_back(fmt::format("{}: {}: {}", file_, path, message));
}

void Problems::add(const std::string& path, const std::string& message) {
  items_.push_back(fmt::format("{}: {}: {}", file_, path, message));
}

std::string Problems::summary() const {
  std::string out = fmt::format("{} problem{} in {}:", items_.size(), items_.size() == 1 ? "" : "s", file_);
  for (const auto& i : items_) out += "\n" + i;
  return out;
}

MapReader::MapReader(const YAML::Node& node, std::string path, Problems& problems,
                     std::initializer_list<const char*> allowed)
    : node_(node), path_(std::move(path)), problems_(problems) {
  if (!node.IsDefined() || !node.IsMap()) {
    problems_.add(node, path_, "expected a mapping");
    return;
  }
  ok_ = true;
  YAML::Node merge = node["<<"];
  if (!merge.IsDefined()) {
    // no merge key
  } else if (!merge.IsMap() && !merge.IsSequence()) {
    problems_.add(merge, path_ + ".<<", "a merge key takes a mapping (*anchor) or a list of them");
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string key = it->first.Scalar();
    if (key == "<<") continue;
    bool known = std::any_of(allowed.begin(), allowed.end(),
                             [&](const char* a) { return key == a; });
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      problems_.add(it->first, path_ + "." + key, fmt::format("unknown key (allowed: {})", list));
    }
  }
}

bool MapReader::has(const char* key) const { return ok_ && child(key).IsDefined(); }

namespace {

// A key of a mapping, following merge keys depth-first (an anchor may itself merge another).
YAML::Node lookupMerged(const YAML::Node& map, const char* key, int depth) {
  YAML::Node own = map[key];
  if (own.IsDefined() || depth > 8) return own;
  YAML::Node merge = map["<<"];
  if (!merge.IsDefined()) return own;
  if (merge.IsMap()) return lookupMerged(merge, key, depth + 1);
  if (merge.IsSequence()) {
    for (const auto& m : merge) {
      if (!m.IsMap()) continue;
      YAML::Node inherited = lookupMerged(m, key, depth + 1);
      if (inherited.IsDefined()) return inherited;
    }
  }
  return own;
}

}  // namespace

YAML::Node MapReader::child(const char* key) const {
  if (!ok_) return YAML::Node(YAML::NodeType::Undefined);
  return lookupMerged(node_, key, 0);
}

void MapReader::fail(const char* key, const std::string& message) const {
  YAML::Node n = child(key);
  problems_.add(n.IsDefined() ? n : node_, pathOf(key), message);
}

std::optional<std::string> MapReader::str(const char* key, bool required) const {
  YAML::Node n = child(key);
  if (!n.IsDefined() || n.IsNull()) {
    if (required) problems_.add(node_, pathOf(key), "required");
    return std::nullopt;
  }
  if (!n.IsScalar()) {
    fail(key, "expected a string");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<int64_t> MapReader::integer(const char* key, bool required, int64_t min) const {
  auto s = str(key, required);
  if (!s) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s->c_str(), &end, 10);
  if (s->empty() || *end != '\0' || errno != 0) {
    fail(key, fmt::format("expected an integer, got \"{}\"", *s));
    return std::nullopt;
  }
  if (v < min) {
    fail(key, fmt::format("must be at least {}", min));
    return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

std::optional<double> MapReader::number(const char* key, bool required) const {
  auto s = str(key, required);
  if (!s) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s->c_str(), &end);
  if (s->empty() || *end != '\0') {
    fail(key, fmt::format("expected a number, got \"{}\"", *s));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> MapReader::boolean(const char* key) const {
  auto s = str(key);
  if (!s) return std::nullopt;
  if (*s == "true" || *s == "True") return true;
  if (*s == "false" || *s == "False") return false;
  fail(key, fmt::format("expected true or false, got \"{}\"", *s));
  return std::nullopt;
}

std::optional<Offset> offsetOf(const YAML::Node& n, const std::string& path, Problems& problems) {
  if (!n.IsDefined() || !n.IsScalar()) {
    problems.add(n, path, "expected a duration such as 8m or 90s");
    return std::nullopt;
  }
  auto off = parseOffset(n.Scalar());
  if (!off) {
    problems.add(n, path, off.error());
    return std::nullopt;
  }
  return *off;
}

std::optional<Offset> MapReader::offset(const char* key, bool required) const {
  YAML::Node n = child(key);
  if (!n.IsDefined() || n.IsNull()) {
    if (required) problems_.add(node_, pathOf(key), "required");
    return std::nullopt;
  }
  return offsetOf(n, pathOf(key), problems_);
}

std::vector<std::string> MapReader::strings(const char* key) const {
  std::vector<std::string> out;
  YAML::Node n = child(key);
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence()) {
    fail(key, "expected a list");
    return out;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      problems_.add(n[i], fmt::format("{}[{}]", pathOf(key), i), "expected a string");
      continue;
    }
    out.push_back(n[i].Scalar());
  }
  return out;
}

std::vector<Offset> MapReader::offsets(const char* key) const {
  std::vector<Offset> out;
  YAML::Node n = child(key);
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence()) {
    fail(key, "expected a list of durations");
    return out;
  }
  for (size_t i = 0; i < n.size(); ++i)
    if (auto o = offsetOf(n[i], fmt::format("{}[{}]", pathOf(key), i), problems_)) out.push_back(*o);
  return out;
}

Json yamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      Json arr = Json::array();
      for (const auto& item : node) arr.push_back(yamlToJson(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      Json obj = Json::object();
      for (auto it = node.begin(); it != node.end(); ++it)
        if (it->first.Scalar() != "<<") obj[it->first.Scalar()] = yamlToJson(it->second);
      YAML::Node merge = node["<<"];
      std::vector<YAML::Node> sources;
      if (merge.IsDefined() && merge.IsMap()) sources.push_back(merge);
      if (merge.IsDefined() && merge.IsSequence())
        for (const auto& m : merge) sources.push_back(m);
      for (const auto& m : sources) {
        Json inherited = yamlToJson(m);
        if (!inherited.is_object()) continue;
        for (auto it = inherited.begin(); it != inherited.end(); ++it)
          if (!obj.contains(it.key())) obj[it.key()] = it.value();
      }
      return obj;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  if (s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (!s.empty()) {
    char* end = nullptr;
    errno = 0;
    long long i = std::strtoll(s.c_str(), &end, 10);
    bool digitsOnly = std::all_of(s.begin() + ((s[0] == '-' || s[0] == '+') ? 1 : 0), s.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
    if (*end == '\0' && errno == 0 && digitsOnly && s.size() > ((s[0] == '-' || s[0] == '+') ? 1u : 0u))
      return static_cast<int64_t>(i);
    // Floats only in plain decimal/exponent notation; "1e3" style quantities stay strings when
    // quoted, which is how Kubernetes objects write them.
    bool floatChars = std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E';
    });
    if (floatChars && s.find('.') != std::string::npos) {
      double d = std::strtod(s.c_str(), &end);
      if (*end == '\0') return d;
    }
  }
  return s;
}

}  // namespace firstwork::scenario::detail
