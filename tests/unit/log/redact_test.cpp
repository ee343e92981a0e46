#include "firstwork/log/redact.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace firstwork::log;

TEST_CASE("the redaction hash is the first 12 hex of salted SHA-256", "[log][redact]") {
  // printf 'pepper\0team-a' | sha256sum → 45a0b76bf8a3…
  CHECK(Redactor(true, "pepper").hash("team-a") == "45a0b76bf8a3");
  // printf '\0x' | sha256sum → 3c7e9bc930dc… (empty salt still separates with NUL)
  CHECK(Redactor(true, "").hash("x") == "3c7e9bc930dc");
  // A different salt gives an unrelated hash.
  CHECK(Redactor(true, "other").hash("team-a") != "45a0b76bf8a3");
}

TEST_CASE("a disabled redactor passes values through", "[log][redact]") {
  Redactor off(false, "pepper");
  CHECK(off.apply("team-a") == "team-a");
  CHECK(off.applyPath("team-a/job-7") == "team-a/job-7");
  // hash() hashes regardless, for callers that always want it.
  CHECK(off.hash("team-a") == "45a0b76bf8a3");
}

TEST_CASE("paths are hashed per segment and empty segments stay empty", "[log][redact]") {
  Redactor on(true, "pepper");
  // printf 'pepper\0job-7' | sha256sum → aa7500793946…
  CHECK(on.applyPath("team-a/job-7") == "45a0b76bf8a3/aa7500793946");
  CHECK(on.applyPath("/job-7") == "/aa7500793946");
  CHECK(on.apply("") == "");
}

TEST_CASE("bearer and basic credentials are scrubbed wherever they appear", "[log][redact]") {
  SecretScrubber s;
  CHECK(s.scrub("Authorization: Bearer eyJhbGciOi.J9x_y-z") == "Authorization: Bearer <redacted>");
  CHECK(s.scrub("BASIC dXNlcjpwYXNz, next") == "BASIC <redacted>, next");
  // Not an auth scheme: no space-separated credential, or part of a longer word.
  CHECK(s.scrub("bearer") == "bearer");
  CHECK(s.scrub("the bearer: x") == "the bearer: x");
  CHECK(s.scrub("forbearer token-value-1") == "forbearer token-value-1");
  // Prose: a short word after the scheme is not a credential.
  CHECK(s.scrub("bearer token file unreadable") == "bearer token file unreadable");
  CHECK(s.scrub("Bearer abcdefgh") == "Bearer <redacted>");
}

TEST_CASE("registered secrets are replaced and short values are refused", "[log][redact]") {
  SecretScrubber s;
  CHECK(s.addSecret("  tok-123456\n"));
  CHECK_FALSE(s.addSecret("abc"));  // shorter than kMinSecretLength (6)
  CHECK(s.secretCount() == 1);
  CHECK(s.scrub("a tok-123456 b tok-123456") == "a <redacted> b <redacted>");
  CHECK(s.scrub("abc") == "abc");
  s.clear();
  CHECK(s.scrub("tok-123456") == "tok-123456");
}

TEST_CASE("the scrubber keeps only the newest secrets", "[log][redact]") {
  SecretScrubber s;
  for (size_t i = 0; i < SecretScrubber::kMaxSecrets + 2; ++i) {
    REQUIRE(s.addSecret("secret-" + std::to_string(1000 + i)));
  }
  CHECK(s.secretCount() == SecretScrubber::kMaxSecrets);
  // The two oldest (1000, 1001) were forgotten; the newest is still scrubbed.
  CHECK(s.scrub("secret-1000") == "secret-1000");
  CHECK(s.scrub("secret-" + std::to_string(1000 + SecretScrubber::kMaxSecrets + 1)) ==
        "<redacted>");
}
