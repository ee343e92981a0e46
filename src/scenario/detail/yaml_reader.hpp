#pragma once
#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "detail/placeholders.hpp"

namespace firstwork::scenario::detail {

/// Every problem found while loading one file, each located by line and key path.
class Problems {
 public:
  explicit Problems(std::string file) : file_(std::move(file)) {}
  void add(const YAML::Node& where, const std::string& path, const std::string& message);
  void add(const std::string& path, const std::string& message);  // no line known
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::string& file() const { return file_; }
  /// "<n> problem(s) in <file>:\n<line>\n<line>..."
  std::string summary() const;

 private:
  std::string file_;
  std::vector<std::string> items_;
};

/// Reads one YAML mapping with a fixed set of allowed keys: unknown keys and wrongly typed values
/// are reported to `Problems` (reading goes on, so one pass finds every problem). YAML merge keys
/// (`<<: *anchor`, or a list of anchors) are honoured, which yaml-cpp 0.7 does not do itself:
/// a key missing here is looked up in the merged mappings, in order.
class MapReader {
 public:
  MapReader(const YAML::Node& node, std::string path, Problems& problems,
            std::initializer_list<const char*> allowed);
  bool ok() const { return ok_; }  // the node was a mapping
  bool has(const char* key) const;
  const YAML::Node& node() const { return node_; }
  YAML::Node child(const char* key) const;
  std::string pathOf(const char* key) const { return path_ + "." + key; }
  const std::string& path() const { return path_; }
  Problems& problems() const { return problems_; }

  std::optional<std::string> str(const char* key, bool required = false) const;
  std::optional<int64_t> integer(const char* key, bool required = false, int64_t min = INT64_MIN) const;
  std::optional<double> number(const char* key, bool required = false) const;
  std::optional<bool> boolean(const char* key) const;
  std::optional<Offset> offset(const char* key, bool required = false) const;
  std::vector<std::string> strings(const char* key) const;
  std::vector<Offset> offsets(const char* key) const;
  /// Reports `message` against `key`.
  void fail(const char* key, const std::string& message) const;

 private:
  YAML::Node node_;
  std::string path_;
  Problems& problems_;
  bool ok_ = false;
};

/// A YAML scalar as an offset, reporting problems.
std::optional<Offset> offsetOf(const YAML::Node& n, const std::string& path, Problems& problems);

/// YAML → JSON for object bodies (merge keys `<<` resolved): quoted scalars stay strings; plain scalars become null
/// (~, null, empty), booleans (true/false), integers, floats, else strings (YAML 1.2 core schema,
/// so `yes`/`on` stay strings as Kubernetes expects).
Json yamlToJson(const YAML::Node& node);

}  // namespace firstwork::scenario::detail
