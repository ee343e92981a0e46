#include "firstwork/log/redact.hpp"

#include <openssl/evp.h>

#include <array>
#include <cctype>

namespace firstwork::log {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Characters of an RFC 6750 b64token plus '%' (URL-encoded tokens end up in logs too).
bool isTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/' || c == '=' || c == '%';
}

bool startsWithNoCase(std::string_view text, size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != word[i]) return false;
  }
  return true;
}

constexpr std::string_view kRedacted = "<redacted>";
// Shorter words after "bearer" are prose ("bearer token file unreadable"), not credentials: real
// tokens are far longer, and registered secrets are scrubbed whatever their context.
constexpr size_t kMinCredentialLength = 8;

// Replaces the credential after `Bearer`/`Basic` (word boundary before the scheme, at least one
// space after it) with <redacted>.
std::string scrubAuthSchemes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    bool boundary = i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]));
    size_t scheme_len = 0;
    if (boundary) {
      if (startsWithNoCase(text, i, "bearer")) scheme_len = 6;
      else if (startsWithNoCase(text, i, "basic")) scheme_len = 5;
    }
    if (scheme_len > 0) {
      size_t j = i + scheme_len;
      size_t spaces = j;
      while (spaces < text.size() && (text[spaces] == ' ' || text[spaces] == '\t')) ++spaces;
      size_t end = spaces;
      while (end < text.size() && isTokenChar(text[end])) ++end;
      if (spaces > j && end - spaces >= kMinCredentialLength) {
        out.append(text.substr(i, spaces - i));
        out.append(kRedacted);
        i = end;
        continue;
      }
    }
    out.push_back(text[i]);
    ++i;
  }
  return out;
}

}  // namespace

Redactor::Redactor(bool enabled, std::string salt) : enabled_(enabled), salt_(std::move(salt)) {}

std::string Redactor::hash(std::string_view value) const {
  std::string input;
  input.reserve(salt_.size() + 1 + value.size());
  input.append(salt_);
  input.push_back('\0');  // separator: ("ab","c") and ("a","bc") must not collide
  input.append(value);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int len = 0;
  if (EVP_Digest(input.data(), input.size(), digest.data(), &len, EVP_sha256(), nullptr) != 1 ||
      len < 6) {
    // OpenSSL without SHA-256 is a broken install; never fall back to the clear text.
    return "000000000000";
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(12);
  for (size_t i = 0; i < 6; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0x0f]);
  }
  return out;
}

std::string Redactor::apply(std::string_view value) const {
  if (!enabled_ || value.empty()) return std::string(value);
  return hash(value);
}

std::string Redactor::applyPath(std::string_view path) const {
  if (!enabled_) return std::string(path);
  std::string out;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    out += apply(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    out.push_back('/');
    start = slash + 1;
  }
  return out;
}

bool SecretScrubber::addSecret(std::string_view value) {
  std::string_view v = trim(value);
  if (v.size() < kMinSecretLength) return false;
  std::lock_guard lock(mu_);
  for (const auto& s : secrets_) {
    if (s == v) return true;
  }
  secrets_.emplace_back(v);
  while (secrets_.size() > kMaxSecrets) secrets_.pop_front();
  return true;
}

void SecretScrubber::clear() {
  std::lock_guard lock(mu_);
  secrets_.clear();
}

size_t SecretScrubber::secretCount() const {
  std::lock_guard lock(mu_);
  return secrets_.size();
}

std::string SecretScrubber::scrub(std::string_view text) const {
  std::string out = scrubAuthSchemes(text);
  std::lock_guard lock(mu_);
  for (const auto& secret : secrets_) {
    size_t pos = 0;
    while ((pos = out.find(secret, pos)) != std::string::npos) {
      out.replace(pos, secret.size(), kRedacted);
      pos += kRedacted.size();
    }
  }
  return out;
}

SecretScrubber& SecretScrubber::global() {
  static SecretScrubber instance;
  return instance;
}

}  // namespace firstwork::log
