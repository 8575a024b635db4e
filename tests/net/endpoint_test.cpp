#include <gtest/gtest.h>

#include "posecast/net/endpoint.h"

namespace posecast::net {
namespace {

TEST(ParseEndpoint, AcceptsIpv4AndBracketedIpv6) {
  auto v4 = parse_endpoint("127.0.0.1:7777");
  ASSERT_TRUE(v4.ok()) << v4.error().message;
  EXPECT_EQ(v4->port(), 7777);
  EXPECT_EQ(to_string(v4.value()), "127.0.0.1:7777");
  auto v6 = parse_endpoint("[::1]:0");
  ASSERT_TRUE(v6.ok()) << v6.error().message;
  EXPECT_TRUE(v6->address().is_v6());
  EXPECT_EQ(to_string(v6.value()), "[::1]:0");
}

TEST(ParseEndpoint, RejectsMissingPortBadPortAndBadAddressWithTheText) {
  for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:70000", "127.0.0.1:7x", "nohost:1"}) {
    auto result = parse_endpoint(bad);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_NE(result.error().message.find(bad), std::string::npos) << result.error().message;
  }
}

}  // namespace
}  // namespace posecast::net
