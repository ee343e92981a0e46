// libFuzzer target: the kubeconfig loader (kube::loadKubeconfigFromString), the YAML an operator or
// a secret mount hands the daemon. Relative file references resolve against a directory that does
// not exist, so the loader's file reads fail cleanly instead of depending on this machine.
//
// Properties of a resolved config (kubeconfig.hpp): an http(s) server without a trailing slash, a
// namespace, client certificate and key together, never a CA together with insecure-skip-tls-verify,
// and an exec plugin only with a command, a supported apiVersion and a non-interactive mode.
#include <cstddef>
#include <cstdint>
#include <string>

#include "firstwork/kube/kubeconfig.hpp"
#include "fuzz_check.hpp"

using namespace firstwork;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string yaml(reinterpret_cast<const char*>(data), size);
  auto rc = kube::loadKubeconfigFromString(yaml, "", "/nonexistent/firstwork-fuzz", "fuzz.yaml");
  if (!rc.ok()) {
    FW_FUZZ_CHECK(!rc.error().empty());
    return 0;
  }
  FW_FUZZ_CHECK(rc->server.rfind("https://", 0) == 0 || rc->server.rfind("http://", 0) == 0);
  FW_FUZZ_CHECK(rc->server.back() != '/');
  FW_FUZZ_CHECK(!rc->namespace_.empty());
  FW_FUZZ_CHECK(!rc->contextName.empty());
  FW_FUZZ_CHECK(!rc->clusterName.empty());
  FW_FUZZ_CHECK(rc->clientCertPem.empty() == rc->clientKeyPem.empty());
  FW_FUZZ_CHECK(!(rc->insecureSkipTlsVerify && !rc->caPem.empty()));
  if (rc->exec) {
    FW_FUZZ_CHECK(!rc->exec->command.empty());
    FW_FUZZ_CHECK(rc->exec->apiVersion == "client.authentication.k8s.io/v1" ||
                  rc->exec->apiVersion == "client.authentication.k8s.io/v1beta1");
    FW_FUZZ_CHECK(rc->exec->interactiveMode == "Never" ||
                  rc->exec->interactiveMode == "IfAvailable");
  }
  return 0;
}
