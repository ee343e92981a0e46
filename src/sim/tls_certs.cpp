#include "tls_certs.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <stdexcept>

namespace firstwork::sim::detail {
namespace {

[[noreturn]] void fail(const char* step) {
  char buf[256] = {0};
  ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
  throw std::runtime_error(std::string("TLS material: ") + step + ": " + buf);
}

PkeyPtr newKey() {
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) fail("EC P-256 key generation");
  return key;
}

void addExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) fail(value);
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (ok != 1) fail("X509_add_ext");
}

X509Ptr newCert(EVP_PKEY* key, const std::string& commonName) {
  X509Ptr cert(X509_new());
  if (!cert) fail("X509_new");
  X509_set_version(cert.get(), 2);  // v3
  // A random 63-bit positive serial: clients reject duplicate serials from one issuer.
  BIGNUM* serial = BN_new();
  if (serial == nullptr || BN_rand(serial, 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert.get())) == nullptr) {
    BN_free(serial);
    fail("serial number");
  }
  BN_free(serial);
  // Back-dated an hour so a client whose clock is slightly behind still accepts it.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  if (X509_set_pubkey(cert.get(), key) != 1) fail("X509_set_pubkey");
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>("firstwork-sim"), -1, -1,
                                 0) != 1 ||
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(commonName.c_str()), -1, -1,
                                 0) != 1) {
    fail("subject name");
  }
  return cert;
}

std::string toPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr || PEM_write_bio_X509(bio, cert) != 1) {
    BIO_free(bio);
    fail("PEM_write_bio_X509");
  }
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  return pem;
}

}  // namespace

TlsMaterial generateTlsMaterial(const std::string& label) {
  TlsMaterial m;
  m.caKey = newKey();
  m.caCert = newCert(m.caKey.get(), "firstwork-sim-ca " + label);
  if (X509_set_issuer_name(m.caCert.get(), X509_get_subject_name(m.caCert.get())) != 1) {
    fail("CA issuer");
  }
  addExtension(m.caCert.get(), m.caCert.get(), NID_basic_constraints, "critical,CA:TRUE");
  addExtension(m.caCert.get(), m.caCert.get(), NID_key_usage,
               "critical,keyCertSign,cRLSign,digitalSignature");
  addExtension(m.caCert.get(), m.caCert.get(), NID_subject_key_identifier, "hash");
  if (X509_sign(m.caCert.get(), m.caKey.get(), EVP_sha256()) <= 0) fail("CA signature");

  m.serverKey = newKey();
  m.serverCert = newCert(m.serverKey.get(), "kube-apiserver " + label);
  if (X509_set_issuer_name(m.serverCert.get(), X509_get_subject_name(m.caCert.get())) != 1) {
    fail("server issuer");
  }
  addExtension(m.serverCert.get(), m.caCert.get(), NID_basic_constraints, "critical,CA:FALSE");
  addExtension(m.serverCert.get(), m.caCert.get(), NID_key_usage,
               "critical,digitalSignature,keyEncipherment");
  addExtension(m.serverCert.get(), m.caCert.get(), NID_ext_key_usage, "serverAuth");
  addExtension(m.serverCert.get(), m.caCert.get(), NID_subject_key_identifier, "hash");
  addExtension(m.serverCert.get(), m.caCert.get(), NID_authority_key_identifier, "keyid:always");
  addExtension(m.serverCert.get(), m.caCert.get(), NID_subject_alt_name,
               "IP:127.0.0.1,DNS:localhost");
  if (X509_sign(m.serverCert.get(), m.caKey.get(), EVP_sha256()) <= 0) {
    fail("server signature");
  }
  m.caPem = toPem(m.caCert.get());
  return m;
}

}  // namespace firstwork::sim::detail
