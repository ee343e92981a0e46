#include "selectors.hpp"

#include <algorithm>
#include <cctype>

namespace firstwork::sim::detail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Label keys: optional DNS-subdomain prefix + "/" + name; names and values use [A-Za-z0-9-_.].
bool validKey(std::string_view k) {
  if (k.empty() || k.size() > 253 + 1 + 63) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == '/';
  });
}

bool validValue(std::string_view v) {
  if (v.size() > 63) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// Splits on commas that are not inside parentheses (`a in (x,y),b`).
std::vector<std::string_view> splitTerms(std::string_view text) {
  std::vector<std::string_view> terms;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')') --depth;
    if (text[i] == ',' && depth == 0) {
      terms.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.push_back(text.substr(start));
  return terms;
}

// Finds ` in ` / ` notin ` as whole words after the key.
bool splitSetOp(std::string_view term, std::string_view word, std::string_view& key,
                std::string_view& rest) {
  for (size_t pos = term.find(word); pos != std::string_view::npos;
       pos = term.find(word, pos + 1)) {
    const bool before = pos > 0 && std::isspace(static_cast<unsigned char>(term[pos - 1]));
    const size_t after = pos + word.size();
    const bool afterOk =
        after < term.size() &&
        (std::isspace(static_cast<unsigned char>(term[after])) || term[after] == '(');
    if (before && afterOk) {
      key = trim(term.substr(0, pos));
      rest = trim(term.substr(after));
      return true;
    }
  }
  return false;
}

const nlohmann::ordered_json* lookup(const nlohmann::ordered_json& object, std::string_view path) {
  const nlohmann::ordered_json* cur = &object;
  while (!path.empty()) {
    const size_t dot = path.find('.');
    const std::string part(path.substr(0, dot));
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(part);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    path = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
  }
  return cur;
}

}  // namespace

std::string parseLabelSelector(std::string_view text, std::vector<LabelRequirement>& out) {
  if (trim(text).empty()) return {};
  for (std::string_view raw : splitTerms(text)) {
    const std::string_view term = trim(raw);
    const std::string quoted = "\"" + std::string(term) + "\"";
    if (term.empty()) return "unable to parse requirement: found '', expected: identifier";
    LabelRequirement req;
    std::string_view key;
    std::string_view rest;
    const bool notIn = splitSetOp(term, "notin", key, rest);
    const bool in = !notIn && splitSetOp(term, "in", key, rest);
    if (notIn || in) {
      req.op = notIn ? LabelRequirement::Op::kNotIn : LabelRequirement::Op::kIn;
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') {
        return "unable to parse requirement: " + quoted + ": expected a parenthesised value list";
      }
      for (std::string_view v : splitTerms(rest.substr(1, rest.size() - 2))) {
        v = trim(v);
        if (!validValue(v)) return "unable to parse requirement: invalid label value in " + quoted;
        req.values.emplace_back(v);
      }
    } else if (term.front() == '!') {
      req.op = LabelRequirement::Op::kNotExists;
      key = trim(term.substr(1));
    } else if (size_t p = term.find("!="); p != std::string_view::npos) {
      req.op = LabelRequirement::Op::kNotEquals;
      key = trim(term.substr(0, p));
      req.values.emplace_back(trim(term.substr(p + 2)));
    } else if (size_t q = term.find("=="); q != std::string_view::npos) {
      req.op = LabelRequirement::Op::kEquals;
      key = trim(term.substr(0, q));
      req.values.emplace_back(trim(term.substr(q + 2)));
    } else if (size_t e = term.find('='); e != std::string_view::npos) {
      req.op = LabelRequirement::Op::kEquals;
      key = trim(term.substr(0, e));
      req.values.emplace_back(trim(term.substr(e + 1)));
    } else {
      req.op = LabelRequirement::Op::kExists;
      key = term;
    }
    if (!validKey(key)) return "unable to parse requirement: invalid label key in " + quoted;
    for (const auto& v : req.values) {
      if (!validValue(v)) return "unable to parse requirement: invalid label value in " + quoted;
    }
    req.key = std::string(key);
    out.push_back(std::move(req));
  }
  return {};
}

std::string parseFieldSelector(std::string_view text, const std::vector<std::string>& supported,
                               std::vector<FieldRequirement>& out) {
  if (trim(text).empty()) return {};
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view term = trim(text.substr(start, comma - start));
    start = comma + 1;
    FieldRequirement req;
    std::string_view field;
    if (size_t p = term.find("!="); p != std::string_view::npos) {
      req.negate = true;
      field = term.substr(0, p);
      req.value = std::string(term.substr(p + 2));
    } else if (size_t q = term.find("=="); q != std::string_view::npos) {
      field = term.substr(0, q);
      req.value = std::string(term.substr(q + 2));
    } else if (size_t e = term.find('='); e != std::string_view::npos) {
      field = term.substr(0, e);
      req.value = std::string(term.substr(e + 1));
    } else {
      return "invalid selector: '" + std::string(text) + "'; can't understand '" +
             std::string(term) + "'";
    }
    req.field = std::string(trim(field));
    if (std::find(supported.begin(), supported.end(), req.field) == supported.end()) {
      return "field label not supported: " + req.field;
    }
    out.push_back(std::move(req));
    if (comma == text.size()) break;
  }
  return {};
}

std::string fieldValue(const nlohmann::ordered_json& object, std::string_view path) {
  const nlohmann::ordered_json* v = lookup(object, path);
  if (v == nullptr || v->is_null()) {
    // Boolean fields are rendered by the typed field-set functions even when unset.
    if (path == "spec.hostNetwork" || path == "spec.unschedulable") return "false";
    return {};
  }
  if (v->is_string()) return v->get<std::string>();
  if (v->is_boolean()) return v->get<bool>() ? "true" : "false";
  if (v->is_number()) return v->dump();
  return v->dump();
}

bool Selector::matches(const nlohmann::ordered_json& object) const {
  for (const auto& f : fields) {
    if ((fieldValue(object, f.field) == f.value) == f.negate) return false;
  }
  if (labels.empty()) return true;
  const nlohmann::ordered_json* labelMap = lookup(object, "metadata.labels");
  auto labelOf = [&](const std::string& key) -> const std::string* {
    if (labelMap == nullptr || !labelMap->is_object()) return nullptr;
    auto it = labelMap->find(key);
    if (it == labelMap->end() || !it->is_string()) return nullptr;
    return it->get_ptr<const std::string*>();
  };
  for (const auto& r : labels) {
    const std::string* v = labelOf(r.key);
    const bool in =
        v != nullptr && std::find(r.values.begin(), r.values.end(), *v) != r.values.end();
    switch (r.op) {
      case LabelRequirement::Op::kExists:
        if (v == nullptr) return false;
        break;
      case LabelRequirement::Op::kNotExists:
        if (v != nullptr) return false;
        break;
      case LabelRequirement::Op::kEquals:
      case LabelRequirement::Op::kIn:
        if (!in) return false;
        break;
      case LabelRequirement::Op::kNotEquals:
      case LabelRequirement::Op::kNotIn:
        if (in) return false;
        break;
    }
  }
  return true;
}

}  // namespace firstwork::sim::detail
