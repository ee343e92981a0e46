# Unity builds (-DCMAKE_UNITY_BUILD=ON, as scripts/test.sh builds): CMake compiles the sources of a
# target in batches, one generated .cxx #including several .cpp files, which roughly halves the
# compile time of the test suite (shared heavy headers -- Catch2, nlohmann, Asio, yaml-cpp -- and
# their template instantiations are compiled once per batch instead of once per file).
#
# Sources that define a file-local helper with the same name as another source of their target
# (the usual `namespace { std::string get(...) }` of test files) cannot share a batch; they are
# listed here and compiled on their own. A new clash shows as a redefinition error in
# build*/…/Unity/unity_<n>_cxx.cxx: add one of the two files below (or rename the helper).
set(firstwork_unity_alone
  src/report/csv.cpp src/report/json.cpp                                  # time(), num(), workload()
  tests/ops/dashboards_test.cpp tests/ops/manifests_test.cpp tests/ops/promql_test.cpp  # kSource
  tests/unit/engine/capacity_test.cpp tests/unit/engine/reclaims_test.cpp # ms()
  tests/unit/http/metrics_snapshot_test.cpp                               # Fixture
  tests/unit/inventory/inventory_test.cpp tests/unit/inventory/pool_tracker_test.cpp  # kAdd, ...
  tests/unit/inventory/node_sharing_test.cpp tests/unit/inventory/incremental_test.cpp  # kAdd
  tests/unit/kube/kubeconfig_test.cpp tests/unit/kube/curl_transport_test.cpp  # TempDir, podJson
  tests/unit/scenario/scenario_player_test.cpp                            # Json, load()
  tests/integration/probe_e2e_test.cpp tests/integration/security_test.cpp
  tests/integration/store_fault_test.cpp)                                 # get()

function(firstwork_keep_out_of_unity_batches)
  foreach(file ${firstwork_unity_alone})
    # A directory the build does not add (tests/ without FIRSTWORK_BUILD_TESTS, as the
    # Dockerfile builds) has no source properties to set: CMake rejects the attempt.
    if(file MATCHES "^tests/" AND NOT FIRSTWORK_BUILD_TESTS)
      continue()
    endif()
    get_filename_component(dir ${PROJECT_SOURCE_DIR}/${file} DIRECTORY)
    if(EXISTS ${PROJECT_SOURCE_DIR}/${file})
      set_source_files_properties(${PROJECT_SOURCE_DIR}/${file} DIRECTORY ${dir}
                                  PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()
