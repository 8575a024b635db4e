#pragma once
// The stateless handshake cookie (docs/session.md, "Connecting"): a keyed hash of the source
// address, port, client nonce and a time window. The server keeps nothing for an unverified
// source; a ChallengeResponse proves the sender received our challenge at that address within
// the last one or two windows.

#include <array>
#include <cstdint>
#include <span>

#include "posecast/net/endpoint.h"

namespace posecast::server {

// SipHash-2-4 (Aumasson and Bernstein, 2012) of `data` under a 128-bit key, as in the reference
// implementation (key bytes little-endian k0 || k1). Pure, allocation-free.
uint64_t siphash24(const std::array<uint8_t, 16>& key, std::span<const uint8_t> data);

class ChallengeCookie {
 public:
  // window_us: how long one token stays current (> 0); a token is accepted in its window and
  // the next, so it lives between window_us and 2 * window_us.
  ChallengeCookie(const std::array<uint8_t, 16>& key, int64_t window_us);

  uint64_t token(const net::Endpoint& source, uint64_t client_nonce, int64_t now_us) const;
  // True when `token` is the token of (source, nonce) in the current or the previous window.
  bool verify(const net::Endpoint& source, uint64_t client_nonce, uint64_t token,
              int64_t now_us) const;

 private:
  uint64_t token_in_window(const net::Endpoint& source, uint64_t client_nonce, int64_t window) const;

  std::array<uint8_t, 16> key_;
  int64_t window_us_;
};

// A 128-bit key from std::random_device (the OS entropy source).
std::array<uint8_t, 16> random_cookie_key();

}  // namespace posecast::server
