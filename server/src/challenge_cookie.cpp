#include "posecast/server/challenge_cookie.h"

#include <random>

namespace posecast::server {
namespace {

uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void store_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

struct SipState {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
  }
  void absorb(uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

}  // namespace

uint64_t siphash24(const std::array<uint8_t, 16>& key, std::span<const uint8_t> data) {
  const uint64_t k0 = load_le64(key.data());
  const uint64_t k1 = load_le64(key.data() + 8);
  SipState s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
             k1 ^ 0x7465646279746573ull};
  const std::size_t whole = data.size() / 8 * 8;
  for (std::size_t i = 0; i < whole; i += 8) s.absorb(load_le64(data.data() + i));
  uint64_t last = static_cast<uint64_t>(data.size() & 0xFF) << 56;
  for (std::size_t i = whole; i < data.size(); ++i) last |= uint64_t{data[i]} << (8 * (i - whole));
  s.absorb(last);
  s.v2 ^= 0xFF;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

ChallengeCookie::ChallengeCookie(const std::array<uint8_t, 16>& key, int64_t window_us)
    : key_(key), window_us_(window_us > 0 ? window_us : 1) {}

uint64_t ChallengeCookie::token_in_window(const net::Endpoint& source, uint64_t client_nonce,
                                          int64_t window) const {
  // address (16 bytes: IPv4 as v4-mapped IPv6) | port (2) | nonce (8) | window (8)
  std::array<uint8_t, 34> message{};
  const asio::ip::address address = source.address();
  const asio::ip::address_v6::bytes_type bytes =
      address.is_v4() ? asio::ip::make_address_v6(asio::ip::v4_mapped, address.to_v4()).to_bytes()
                      : address.to_v6().to_bytes();
  for (std::size_t i = 0; i < 16; ++i) message[i] = bytes[i];
  message[16] = static_cast<uint8_t>(source.port() & 0xFF);
  message[17] = static_cast<uint8_t>(source.port() >> 8);
  store_le64(message.data() + 18, client_nonce);
  store_le64(message.data() + 26, static_cast<uint64_t>(window));
  return siphash24(key_, message);
}

uint64_t ChallengeCookie::token(const net::Endpoint& source, uint64_t client_nonce,
                                int64_t now_us) const {
  return token_in_window(source, client_nonce, now_us / window_us_);
}

bool ChallengeCookie::verify(const net::Endpoint& source, uint64_t client_nonce, uint64_t token,
                             int64_t now_us) const {
  const int64_t window = now_us / window_us_;
  // Compare both windows before deciding, so the timing does not say which one matched.
  const bool current = token_in_window(source, client_nonce, window) == token;
  const bool previous = token_in_window(source, client_nonce, window - 1) == token;
  return current | previous;
}

std::array<uint8_t, 16> random_cookie_key() {
  std::random_device device;
  std::array<uint8_t, 16> key{};
  for (std::size_t i = 0; i < key.size(); i += 4) {
    const uint32_t r = device();
    for (std::size_t j = 0; j < 4; ++j) key[i + j] = static_cast<uint8_t>(r >> (8 * j));
  }
  return key;
}

}  // namespace posecast::server
