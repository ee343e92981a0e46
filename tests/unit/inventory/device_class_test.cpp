#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "firstwork/inventory/inventory.hpp"
#include "firstwork/model/decode.hpp"
#include "fixtures.hpp"

using firstwork::inventory::DeviceClassMapping;
using firstwork::inventory::Inventory;
using firstwork::inventory::InventoryConfig;
using firstwork::inventory::deviceAttributesRead;
using firstwork::inventory::parseDeviceClassSelector;
using namespace firstwork::testing;

TEST_CASE("the website's DeviceClass selector maps to its driver", "[inventory][classes]") {
  const YAML::Node doc = YAML::LoadFile(sharedFixture("dra-deviceclass-v1beta2-k8s-website.yaml"));
  const std::string expression = doc["spec"]["selectors"][0]["cel"]["expression"].as<std::string>();
  const auto mapping =
      parseDeviceClassSelector(doc["metadata"]["name"].as<std::string>(), expression);
  REQUIRE(mapping.ok());
  CHECK(mapping->name == "example-device-class");
  CHECK(mapping->driver == "driver.example.com");
  CHECK(mapping->attributes.empty());
}

TEST_CASE("conjunctions of driver and attribute equalities are understood", "[inventory][classes]") {
  const auto mapping = parseDeviceClassSelector(
      "gpu.nvidia.com",
      "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'");
  REQUIRE(mapping.ok());
  CHECK(mapping->driver == "gpu.nvidia.com");
  REQUIRE(mapping->attributes.size() == 1);
  CHECK(mapping->attributes[0].name == "gpu.nvidia.com/type");
  CHECK(mapping->attributes[0].value == "gpu");

  const auto parenthesised = parseDeviceClassSelector(
      "mig-1g", "(device.driver == \"gpu.nvidia.com\") && (device.attributes[\"gpu.nvidia.com\"]"
                ".profile == \"1g.10gb\")");
  REQUIRE(parenthesised.ok());
  REQUIRE(parenthesised->attributes.size() == 1);
  CHECK(parenthesised->attributes[0].name == "gpu.nvidia.com/profile");
  CHECK(parenthesised->attributes[0].value == "1g.10gb");
}

TEST_CASE("selectors beyond the simple subset are rejected, not guessed", "[inventory][classes]") {
  CHECK_FALSE(parseDeviceClassSelector("c", "device.driver == 'a' || device.driver == 'b'").ok());
  CHECK_FALSE(parseDeviceClassSelector("c", "device.driver != 'a'").ok());
  CHECK_FALSE(parseDeviceClassSelector("c", "device.attributes['x'].type == 'gpu'").ok());
  CHECK_FALSE(parseDeviceClassSelector("c", "device.driver == 'a' && device.driver == 'b'").ok());
  CHECK_FALSE(parseDeviceClassSelector(
                  "c", "device.driver == 'a' && device.capacity['a'].memory.compareTo("
                       "quantity('10Gi')) >= 0")
                  .ok());
  CHECK_FALSE(parseDeviceClassSelector("c", "device.driver == a").ok());
  CHECK_FALSE(parseDeviceClassSelector("", "device.driver == 'a'").ok());
  const auto error = parseDeviceClassSelector("c", "device.driver == 'a' || true");
  REQUIRE_FALSE(error.ok());
  CHECK_THAT(error.error(), Catch::Contains("right side is not a string literal"));
}

TEST_CASE("NVIDIA DRA defaults: type gpu is a whole GPU, type mig is split by profile",
          "[inventory][classes]") {
  Inventory inventory;
  const auto slices = loadSlices("dra-resourceslice-v1-nvidia-gpu-openshift-conformance.yaml");
  REQUIRE(slices.size() == 1);
  REQUIRE(slices[0].devices.size() == 2);
  // The real slice publishes `type: {string: gpu}` (unqualified: in the driver's domain).
  CHECK(inventory.classifyDevice("gpu.nvidia.com", slices[0].devices[0]) == "gpu.nvidia.com");

  CHECK(inventory.classifyDevice("gpu.nvidia.com", gpuDevice("gpu-0-mig-1", "mig", "1g.10gb")) ==
        "gpu.nvidia.com/mig-1g.10gb");
  // Qualified attribute names are the same attributes.
  firstwork::model::Device qualified;
  qualified.name = "q";
  qualified.attributes = {{"gpu.nvidia.com/type", "mig"}, {"gpu.nvidia.com/profile", "3g.40gb"}};
  CHECK(inventory.classifyDevice("gpu.nvidia.com", qualified) == "gpu.nvidia.com/mig-3g.40gb");
  // A MIG device without a profile, another type, or no type at all: unclassified.
  CHECK_FALSE(inventory.classifyDevice("gpu.nvidia.com", gpuDevice("m", "mig")));
  CHECK_FALSE(inventory.classifyDevice("gpu.nvidia.com", gpuDevice("v", "vfio")));
  // The KEP's partitionable example publishes only a profile, no type: not guessed.
  const auto kep = loadSlices("dra-resourceslice-v1-partitionable-two-slice-pool-kep2941.yaml");
  CHECK_FALSE(inventory.classifyDevice("gpu.nvidia.com", kep[1].devices[0]));
  // Another driver's "gpu" type means nothing to the NVIDIA defaults.
  CHECK_FALSE(inventory.classifyDevice("gpu.example.com", gpuDevice("gpu-0")));
}

TEST_CASE("configured DeviceClasses classify first, by driver and attributes",
          "[inventory][classes]") {
  InventoryConfig config;
  config.deviceClasses.push_back(DeviceClassMapping{"gpu.example.com", "gpu.example.com", {}});
  auto mig = parseDeviceClassSelector(
      "mig-1g-10gb", "device.driver == 'gpu.nvidia.com' && "
                     "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'");
  REQUIRE(mig.ok());
  config.deviceClasses.push_back(*mig);
  Inventory inventory(config);

  const auto example = loadSlices("dra-resourceslice-v1-list-dra-example-driver.yaml");
  CHECK(inventory.classifyDevice("gpu.example.com", example[0].devices[3]) == "gpu.example.com");
  const auto kep = loadSlices("dra-resourceslice-v1-partitionable-two-slice-pool-kep2941.yaml");
  CHECK(inventory.classifyDevice("gpu.nvidia.com", kep[1].devices[0]) == "mig-1g-10gb");
  // 7g.80gb does not match the configured class and has no `type`: still unclassified.
  CHECK_FALSE(inventory.classifyDevice("gpu.nvidia.com", kep[1].devices[1]));

  CHECK(inventory.classForDeviceClassName("gpu.example.com") == "gpu.example.com");
  CHECK(inventory.classForDeviceClassName("mig-1g-10gb") == "mig-1g-10gb");
  CHECK(inventory.classForDeviceClassName("gpu.nvidia.com") == "gpu.nvidia.com");
  // NVIDIA's MIG class carries the profile in per-claim selectors: not resolvable by name.
  CHECK_FALSE(inventory.classForDeviceClassName("mig.nvidia.com"));
  CHECK_FALSE(inventory.classForDeviceClassName("unknown-class"));
}

TEST_CASE("NVIDIA defaults can be turned off", "[inventory][classes]") {
  InventoryConfig config;
  config.nvidiaDraDefaults = false;
  Inventory inventory(config);
  CHECK_FALSE(inventory.classifyDevice("gpu.nvidia.com", gpuDevice("gpu-0")));
  CHECK_FALSE(inventory.classForDeviceClassName("gpu.nvidia.com"));
}

TEST_CASE("the device attributes the inventory reads", "[inventory][classes]") {
  InventoryConfig config;
  CHECK(deviceAttributesRead(config) == std::vector<std::string>{"type", "profile"});
  auto mig = parseDeviceClassSelector(
      "mig-1g-10gb", "device.driver == 'gpu.nvidia.com' && "
                     "device.attributes['gpu.nvidia.com'].profile == '1g.10gb' && "
                     "device.attributes['example.com'].slot == 'a'");
  REQUIRE(mig.ok());
  config.deviceClasses.push_back(*mig);
  config.profileAttribute = "gpu.nvidia.com/mig-profile";
  CHECK(deviceAttributesRead(config) ==
        std::vector<std::string>{"gpu.nvidia.com/profile", "example.com/slot", "type",
                                 "gpu.nvidia.com/mig-profile"});
  config.nvidiaDraDefaults = false;
  CHECK(deviceAttributesRead(config) ==
        std::vector<std::string>{"gpu.nvidia.com/profile", "example.com/slot"});
  config.deviceClasses.clear();
  CHECK(deviceAttributesRead(config).empty());
  InventoryConfig noProfile;
  noProfile.profileAttribute.clear();  // no split by profile
  CHECK(deviceAttributesRead(noProfile) == std::vector<std::string>{"type"});
}

TEST_CASE("devices decoded with only the attributes the inventory reads classify as when whole",
          "[inventory][classes]") {
  using firstwork::model::Kind;
  using firstwork::model::ResourceSlice;
  // Every slice fixture, decoded whole and with what the daemon's decoders keep.
  auto decodeAll = [](const std::string& fixture, const firstwork::model::DecodeOptions& options) {
    std::ifstream in(std::string(FIRSTWORK_TEST_FIXTURES_DIR) + "/k8s/" + fixture);
    REQUIRE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<ResourceSlice> out;
    if (ss.str().find("\"items\"") != std::string::npos) {
      auto page = firstwork::model::decodeList(ss.str(), Kind::ResourceSlice, options);
      REQUIRE(page.ok());
      for (auto& o : page->items) out.push_back(std::get<ResourceSlice>(std::move(o)));
    } else {
      auto object = firstwork::model::decodeObject(ss.str(), Kind::ResourceSlice, options);
      REQUIRE(object.ok());
      out.push_back(std::get<ResourceSlice>(std::move(*object)));
    }
    return out;
  };
  InventoryConfig defaults;
  InventoryConfig configured;
  auto mig = parseDeviceClassSelector(
      "mig-1g-10gb", "device.driver == 'gpu.nvidia.com' && "
                     "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'");
  REQUIRE(mig.ok());
  configured.deviceClasses.push_back(*mig);
  configured.deviceClasses.push_back(DeviceClassMapping{"gpu.example.com", "gpu.example.com", {}});
  InventoryConfig qualified;
  qualified.typeAttribute = "gpu.nvidia.com/type";
  qualified.profileAttribute = "gpu.nvidia.com/profile";
  size_t classified = 0, whole = 0, kept = 0;
  std::set<std::string> classes;
  for (const InventoryConfig& config : {defaults, configured, qualified}) {
    Inventory inventory(config);
    firstwork::model::DecodeOptions options;
    options.deviceAttributes = deviceAttributesRead(config);
    for (const std::string fixture :
         {"dra-resourceslice-v1-list-dra-example-driver.json",
          "dra-resourceslice-v1-nvidia-gpu-openshift-conformance.json",
          "dra-resourceslice-v1-nvidia-mig-vfio-CONSTRUCTED.json",
          "dra-resourceslice-v1-partitionable-two-slice-pool-kep2941-1.json",
          "dra-resourceslice-v1-partitionable-two-slice-pool-kep2941-2.json",
          "dra-resourceslice-v1-pool-generation-rollover-incomplete-CONSTRUCTED.json",
          "dra-resourceslice-v1beta1-basic-wrapper-CONSTRUCTED.json"}) {
      const auto full = decodeAll(fixture, {});
      const auto slim = decodeAll(fixture, options);
      REQUIRE(full.size() == slim.size());
      for (size_t i = 0; i < full.size(); ++i) {
        REQUIRE(full[i].devices.size() == slim[i].devices.size());
        for (size_t d = 0; d < full[i].devices.size(); ++d) {
          INFO(fixture << " slice " << i << " device " << full[i].devices[d].name.str());
          const auto c = inventory.classifyDevice(full[i].driver, full[i].devices[d]);
          CHECK(inventory.classifyDevice(slim[i].driver, slim[i].devices[d]) == c);
          if (c) classes.insert(*c), ++classified;
          whole += full[i].devices[d].attributes.size();
          kept += slim[i].devices[d].attributes.size();
        }
      }
    }
  }
  // Not vacuous: whole GPUs, MIG profiles and a configured class among them, and most attributes
  // dropped.
  CHECK(classes.count("gpu.nvidia.com") == 1);
  CHECK(classes.count("mig-1g-10gb") == 1);
  CHECK(classes.count("gpu.example.com") == 1);
  CHECK(std::any_of(classes.begin(), classes.end(),
                    [](const std::string& c) { return c.rfind("gpu.nvidia.com/mig-", 0) == 0; }));
  CHECK(classified > 20);
  CHECK(kept * 3 < whole);
}

TEST_CASE("tracked extended resources: exact names and prefix patterns", "[inventory][classes]") {
  Inventory inventory;
  CHECK(inventory.classForExtendedResource("nvidia.com/gpu") == "nvidia.com/gpu");
  CHECK(inventory.classForExtendedResource("nvidia.com/gpu.shared") == "nvidia.com/gpu.shared");
  CHECK(inventory.classForExtendedResource("nvidia.com/mig-1g.10gb") == "nvidia.com/mig-1g.10gb");
  CHECK_FALSE(inventory.classForExtendedResource("nvidia.com/mig-"));  // prefix alone is no name
  CHECK_FALSE(inventory.classForExtendedResource("example.com/fpga"));
  CHECK_FALSE(inventory.classForExtendedResource("cpu"));
}
