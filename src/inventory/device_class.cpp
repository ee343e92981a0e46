// Device classification: configured DeviceClass mappings, the NVIDIA DRA defaults, and the small
// CEL subset a DeviceClass selector may be written in.
#include <algorithm>
#include <cctype>
#include <string>

#include "firstwork/inventory/inventory.hpp"

namespace firstwork::inventory {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

// Splits on `sep` outside quoted strings.
std::vector<std::string_view> splitOutsideQuotes(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> parts;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (s.compare(i, sep.size(), sep) == 0) {
      parts.push_back(s.substr(start, i - start));
      i += sep.size() - 1;
      start = i + 1;
    }
  }
  parts.push_back(s.substr(start));
  return parts;
}

// A whole quoted literal without escapes: "x" or 'x'.
std::optional<std::string> stringLiteral(std::string_view s) {
  s = trim(s);
  if (s.size() < 2) return std::nullopt;
  const char q = s.front();
  if ((q != '"' && q != '\'') || s.back() != q) return std::nullopt;
  std::string_view body = s.substr(1, s.size() - 2);
  if (body.find(q) != std::string_view::npos || body.find('\\') != std::string_view::npos) {
    return std::nullopt;
  }
  return std::string(body);
}

bool isIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front())) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

// Whether attribute names `a` and `b` of a device of `driver` are the same attribute: "type"
// published by driver "d" is "d/type"; qualified names compare as they are. No allocation: this
// runs for every device attribute on every recount.
bool sameAttribute(std::string_view driver, std::string_view a, std::string_view b) {
  const bool a_qualified = a.find('/') != std::string_view::npos;
  const bool b_qualified = b.find('/') != std::string_view::npos;
  if (a_qualified == b_qualified) return a == b;
  const std::string_view bare = a_qualified ? b : a;
  const std::string_view full = a_qualified ? a : b;
  return full.size() == driver.size() + 1 + bare.size() &&
         full.substr(0, driver.size()) == driver && full[driver.size()] == '/' &&
         full.substr(driver.size() + 1) == bare;
}

const model::DeviceAttribute* findAttribute(std::string_view driver, const model::Device& device,
                                            std::string_view name) {
  for (const auto& attribute : device.attributes) {
    if (sameAttribute(driver, attribute.name, name)) return &attribute;
  }
  return nullptr;
}

bool matches(const DeviceClassMapping& mapping, std::string_view driver,
             const model::Device& device) {
  if (mapping.driver != driver) return false;
  return std::all_of(mapping.attributes.begin(), mapping.attributes.end(),
                     [&](const AttributeEquals& want) {
                       const auto* attribute = findAttribute(driver, device, want.name);
                       return attribute != nullptr && attribute->value == want.value;
                     });
}

// The `&&`-joined equality terms of a selector; `have_driver` tells whether one pinned the driver.
Result<DeviceClassMapping> parseSelectorTerms(std::string_view celExpression, bool& have_driver) {
  DeviceClassMapping mapping;
  have_driver = false;
  for (std::string_view term : splitOutsideQuotes(celExpression, "&&")) {
    term = trim(term);
    while (term.size() >= 2 && term.front() == '(' && term.back() == ')') {
      term = trim(term.substr(1, term.size() - 2));
    }
    const auto sides = splitOutsideQuotes(term, "==");
    if (sides.size() != 2) {
      return makeError("unsupported selector term (expected <field> == \"<value>\"): " +
                       std::string(term));
    }
    const std::string_view lhs = trim(sides[0]);
    const auto value = stringLiteral(sides[1]);
    if (!value) {
      return makeError("unsupported selector term (right side is not a string literal): " +
                       std::string(term));
    }
    if (lhs == "device.driver") {
      if (have_driver && mapping.driver != *value) {
        return makeError("selector compares device.driver with two different drivers");
      }
      have_driver = true;
      mapping.driver = *value;
      continue;
    }
    constexpr std::string_view kAttributes = "device.attributes[";
    if (lhs.substr(0, kAttributes.size()) == kAttributes) {
      const std::string_view rest = lhs.substr(kAttributes.size());
      const size_t close = rest.find("].");
      std::optional<std::string> domain;
      if (close != std::string_view::npos) domain = stringLiteral(rest.substr(0, close));
      const std::string_view attribute =
          close == std::string_view::npos ? std::string_view{} : rest.substr(close + 2);
      if (!domain || domain->empty() || !isIdentifier(attribute)) {
        return makeError("unsupported attribute reference: " + std::string(lhs));
      }
      mapping.attributes.push_back(AttributeEquals{*domain + "/" + std::string(attribute), *value});
      continue;
    }
    return makeError("unsupported selector term: " + std::string(term));
  }
  return mapping;
}

}  // namespace

Result<DeviceClassMapping> parseDeviceClassSelector(std::string_view deviceClassName,
                                                    std::string_view celExpression) {
  if (deviceClassName.empty()) return makeError("DeviceClass name is empty");
  bool have_driver = false;
  auto mapping = parseSelectorTerms(celExpression, have_driver);
  if (!mapping.ok()) return mapping;
  if (!have_driver) {
    return makeError("selector does not pin the driver (device.driver == \"...\")");
  }
  mapping->name = std::string(deviceClassName);
  return mapping;
}

std::vector<std::string> deviceAttributesRead(const InventoryConfig& config) {
  std::vector<std::string> names;
  auto add = [&](const std::string& name) {
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  };
  for (const auto& mapping : config.deviceClasses) {
    for (const auto& attribute : mapping.attributes) add(attribute.name);
  }
  if (config.nvidiaDraDefaults) {
    add(config.typeAttribute);
    add(config.profileAttribute);
  }
  return names;
}

std::optional<std::string> Inventory::classifyDevice(std::string_view driver,
                                                     const model::Device& device) const {
  for (const auto& mapping : config_.deviceClasses) {
    if (matches(mapping, driver, device)) return mapping.name;
  }
  if (config_.nvidiaDraDefaults && driver == config_.nvidiaDriver) {
    const auto* type = findAttribute(driver, device, config_.typeAttribute);
    if (type == nullptr) return std::nullopt;
    if (type->value == "gpu") return config_.nvidiaDriver;
    if (type->value == "mig") {
      const auto* profile = findAttribute(driver, device, config_.profileAttribute);
      if (profile == nullptr || profile->value.empty()) return std::nullopt;
      return config_.nvidiaDriver + std::string(kMigClassInfix) + profile->value;
    }
  }
  return std::nullopt;
}

std::optional<std::string> Inventory::classForDeviceClassName(
    std::string_view deviceClassName) const {
  for (const auto& mapping : config_.deviceClasses) {
    if (mapping.name == deviceClassName) return mapping.name;
  }
  if (config_.nvidiaDraDefaults && !deviceClassName.empty() &&
      deviceClassName == config_.nvidiaGpuDeviceClass) {
    return config_.nvidiaDriver;
  }
  return std::nullopt;
}

// NVIDIA's MIG DeviceClass selects MIG devices of the driver; which profile a request wants sits in
// the request's own CEL selectors, in the form NVIDIA's examples use:
//   device.attributes['gpu.nvidia.com'].profile == '1g.12gb'
// optionally with `device.attributes['gpu.nvidia.com'].type == 'mig'` and the driver
// (NVIDIA/k8s-dra-driver-gpu demo/specs/extended-resources/mig-1g-12gb.yaml @ 5b4e8b1b). Selectors
// of any other form (capacity comparisons, `||`, functions) do not pin a profile: the request stays
// unresolved rather than guessed.
std::optional<std::string> Inventory::classForRequest(const model::DeviceRequest& request) const {
  if (auto c = classForDeviceClassName(request.deviceClassName)) return c;
  if (!config_.nvidiaDraDefaults || request.deviceClassName.empty() ||
      request.deviceClassName != config_.nvidiaMigDeviceClass) {
    return std::nullopt;
  }
  const std::string& driver = config_.nvidiaDriver;
  std::optional<std::string> profile;
  for (const auto& expression : request.selectors) {
    bool have_driver = false;
    auto terms = parseSelectorTerms(expression, have_driver);
    if (!terms.ok() || (have_driver && terms->driver != driver)) return std::nullopt;
    for (const auto& term : terms->attributes) {
      if (sameAttribute(driver, term.name, config_.profileAttribute)) {
        if (profile && *profile != term.value) return std::nullopt;  // contradictory: no device
        profile = term.value;
      } else if (sameAttribute(driver, term.name, config_.typeAttribute)) {
        if (term.value != "mig") return std::nullopt;
      } else {
        // Another attribute narrows the devices further (e.g. a product): the class of the
        // profile still counts them, as the selector only ever picks MIG devices of it.
        continue;
      }
    }
  }
  if (!profile || profile->empty()) return std::nullopt;
  return driver + std::string(kMigClassInfix) + *profile;
}

bool Inventory::tracked(std::string_view resource) const {
  return std::any_of(config_.extendedResources.begin(), config_.extendedResources.end(),
                     [&](const std::string& pattern) {
                       if (!pattern.empty() && pattern.back() == '*') {
                         const std::string_view prefix(pattern.data(), pattern.size() - 1);
                         return resource.size() > prefix.size() &&
                                resource.substr(0, prefix.size()) == prefix;
                       }
                       return resource == pattern;
                     });
}

std::optional<std::string> Inventory::classForExtendedResource(std::string_view resource) const {
  if (!tracked(resource)) return std::nullopt;
  return std::string(resource);
}

}  // namespace firstwork::inventory
