#include <gtest/gtest.h>

#include <numeric>

#include "posecast/server/challenge_cookie.h"

namespace posecast::server {
namespace {

std::array<uint8_t, 16> reference_key() {
  std::array<uint8_t, 16> key{};
  std::iota(key.begin(), key.end(), uint8_t{0});
  return key;
}

// Test vectors of the SipHash reference implementation (key 00..0f, message 00..len-1).
TEST(SipHash24, MatchesTheReferenceVectors) {
  std::vector<uint8_t> message(64);
  std::iota(message.begin(), message.end(), uint8_t{0});
  EXPECT_EQ(siphash24(reference_key(), std::span<const uint8_t>(message.data(), 0)), 0x726fdb47dd0e0e31ull);
  EXPECT_EQ(siphash24(reference_key(), std::span<const uint8_t>(message.data(), 1)), 0x74f839c593dc67fdull);
  EXPECT_EQ(siphash24(reference_key(), std::span<const uint8_t>(message.data(), 15)), 0xa129ca6149be45e5ull);
  EXPECT_EQ(siphash24(reference_key(), std::span<const uint8_t>(message.data(), 63)), 0x958a324ceb064572ull);
}

TEST(ChallengeCookie, TokenDependsOnAddressPortNonceAndWindow) {
  const ChallengeCookie cookie(reference_key(), 1'000'000);
  const net::Endpoint a(asio::ip::make_address("127.0.0.1"), 5000);
  const net::Endpoint other_port(asio::ip::make_address("127.0.0.1"), 5001);
  const net::Endpoint other_host(asio::ip::make_address("127.0.0.2"), 5000);
  const uint64_t token = cookie.token(a, 9, 10'500'000);
  EXPECT_NE(token, cookie.token(other_port, 9, 10'500'000));
  EXPECT_NE(token, cookie.token(other_host, 9, 10'500'000));
  EXPECT_NE(token, cookie.token(a, 10, 10'500'000));
  EXPECT_NE(token, cookie.token(a, 9, 11'500'000));
  EXPECT_EQ(token, cookie.token(a, 9, 10'999'999));
}

TEST(ChallengeCookie, VerifiesInItsWindowAndTheNextOnly) {
  const ChallengeCookie cookie(reference_key(), 1'000'000);
  const net::Endpoint a(asio::ip::make_address("::1"), 7);
  const uint64_t token = cookie.token(a, 1, 10'000'000);
  EXPECT_TRUE(cookie.verify(a, 1, token, 10'000'000));
  EXPECT_TRUE(cookie.verify(a, 1, token, 11'999'999));
  EXPECT_FALSE(cookie.verify(a, 1, token, 12'000'000));
  EXPECT_FALSE(cookie.verify(a, 1, token ^ 1, 10'000'000));
  EXPECT_FALSE(cookie.verify(a, 2, token, 10'000'000));
}

TEST(ChallengeCookie, DifferentKeysGiveDifferentTokens) {
  auto other = reference_key();
  other[0] ^= 1;
  const net::Endpoint a(asio::ip::make_address("127.0.0.1"), 1);
  EXPECT_NE(ChallengeCookie(reference_key(), 1000).token(a, 1, 0), ChallengeCookie(other, 1000).token(a, 1, 0));
}

}  // namespace
}  // namespace posecast::server
