#pragma once
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace firstwork::sim::detail {

struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

/// An in-memory CA and a server certificate it signed, valid for IP 127.0.0.1 and DNS
/// localhost (EC P-256, SHA-256). Nothing touches the disk.
struct TlsMaterial {
  X509Ptr caCert;
  PkeyPtr caKey;
  X509Ptr serverCert;
  PkeyPtr serverKey;
  std::string caPem;
};

/// Generates fresh material. `label` goes into the subject CNs (e.g. the cluster name).
/// Throws std::runtime_error with OpenSSL's reason when a step fails.
TlsMaterial generateTlsMaterial(const std::string& label);

}  // namespace firstwork::sim::detail
