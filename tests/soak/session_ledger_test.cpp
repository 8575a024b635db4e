// SessionLedger (tools/soak/session_ledger.h): the soak's per-session check that the server
// times out every client that vanished, and only those checks.

#include <gtest/gtest.h>

#include "session_ledger.h"

namespace posecast::soak {
namespace {

using protocol::DisconnectReason;

constexpr int64_t kTimeout = 5'000'000;
constexpr int64_t kTolerance = 500'000;

net::Endpoint address(uint16_t port) { return net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), port); }

struct Finished {
  LedgerCounts counts;
  std::vector<std::string> violations;
};

Finished finish_at(SessionLedger& ledger, int64_t end_us) {
  Finished f;
  f.counts = ledger.finish(end_us, f.violations);
  return f;
}

TEST(SessionLedger, VanishedSessionTimedOutInTimeIsCountedWithoutViolation) {
  SessionLedger ledger(kTimeout, kTolerance);
  ledger.session_opened(address(40001), 1);
  ledger.client_vanished(address(40001), 1'000'000);
  EXPECT_TRUE(ledger.holds_session(address(40001)));
  ledger.session_closed(address(40001), 1, DisconnectReason::kTimeout, 6'016'000);
  EXPECT_FALSE(ledger.holds_session(address(40001)));
  const Finished f = finish_at(ledger, 20'000'000);
  EXPECT_TRUE(f.violations.empty());
  EXPECT_EQ(f.counts.vanished_with_session, 1u);
  EXPECT_EQ(f.counts.timeout_due, 1u);
  EXPECT_EQ(f.counts.timed_out_in_time, 1u);
}

// What the soak's false alarm was, seen session by session: the vanished client's session
// ended because a new client came from its address, not by a timeout.
TEST(SessionLedger, VanishedSessionReplacedByANewClientOnItsAddressIsAViolation) {
  SessionLedger ledger(kTimeout, kTolerance);
  ledger.session_opened(address(40002), 1);
  ledger.client_vanished(address(40002), 1'000'000);
  ledger.session_closed(address(40002), 1, DisconnectReason::kClientLeft, 2'000'000);
  ledger.session_opened(address(40002), 2);
  const Finished f = finish_at(ledger, 20'000'000);
  ASSERT_EQ(f.violations.size(), 1u);
  EXPECT_NE(f.violations[0].find("ended as client left"), std::string::npos) << f.violations[0];
  EXPECT_EQ(f.counts.timeout_due, 1u);
  EXPECT_EQ(f.counts.timed_out_in_time, 0u);
}

TEST(SessionLedger, TimeoutLaterThanTimeoutPlusToleranceIsAViolation) {
  SessionLedger ledger(kTimeout, kTolerance);
  ledger.session_opened(address(40003), 7);
  ledger.client_vanished(address(40003), 1'000'000);
  ledger.session_closed(address(40003), 7, DisconnectReason::kTimeout, 1'000'000 + kTimeout + kTolerance + 1);
  const Finished f = finish_at(ledger, 20'000'000);
  ASSERT_EQ(f.violations.size(), 1u);
  EXPECT_NE(f.violations[0].find("session #7"), std::string::npos) << f.violations[0];
}

TEST(SessionLedger, VanishedSessionStillOpenPastItsDeadlineIsALeak) {
  SessionLedger ledger(kTimeout, kTolerance);
  ledger.session_opened(address(40004), 3);
  ledger.client_vanished(address(40004), 1'000'000);
  const Finished f = finish_at(ledger, 1'000'000 + kTimeout + kTolerance);
  ASSERT_EQ(f.violations.size(), 1u);
  EXPECT_NE(f.violations[0].find("still holds session #3"), std::string::npos) << f.violations[0];
  EXPECT_EQ(f.counts.timeout_due, 1u);
}

TEST(SessionLedger, VanishedSessionWhoseDeadlineIsAfterTheEndIsNotDue) {
  SessionLedger ledger(kTimeout, kTolerance);
  ledger.session_opened(address(40005), 4);
  ledger.client_vanished(address(40005), 1'000'000);
  const Finished f = finish_at(ledger, 1'000'000 + kTimeout + kTolerance - 1);
  EXPECT_TRUE(f.violations.empty());
  EXPECT_EQ(f.counts.timeout_due, 0u);
  EXPECT_EQ(f.counts.vanished_with_session, 1u);
}

// A Response already on its way when the client vanished opens a session afterwards: it must
// time out counting from the vanish.
TEST(SessionLedger, SessionOpenedAfterTheVanishCountsFromTheVanish) {
  SessionLedger ledger(kTimeout, kTolerance);
  ledger.client_vanished(address(40006), 1'000'000);
  EXPECT_FALSE(ledger.holds_session(address(40006)));
  ledger.session_opened(address(40006), 5);
  const Finished f = finish_at(ledger, 1'000'000 + kTimeout + kTolerance);
  ASSERT_EQ(f.violations.size(), 1u);
  EXPECT_NE(f.violations[0].find("silent since 1.000 s"), std::string::npos) << f.violations[0];
  EXPECT_EQ(f.counts.vanished_with_session, 1u);
  EXPECT_EQ(f.counts.vanished_without_session, 0u);
}

TEST(SessionLedger, VanishWithoutAnySessionIsCountedApartWhenTheAddressIsReleased) {
  SessionLedger ledger(kTimeout, kTolerance);
  ledger.client_vanished(address(40007), 1'000'000);
  ledger.address_released(address(40007));
  ledger.session_opened(address(40007), 6);  // a later client on the same port: not vanished
  const Finished f = finish_at(ledger, 20'000'000);
  EXPECT_TRUE(f.violations.empty());
  EXPECT_EQ(f.counts.vanished_without_session, 1u);
  EXPECT_EQ(f.counts.vanished_with_session, 0u);
  EXPECT_EQ(f.counts.timeout_due, 0u);
}

TEST(SessionLedger, SessionsOfClientsThatDidNotVanishAreNotJudged) {
  SessionLedger ledger(kTimeout, kTolerance);
  ledger.session_opened(address(40008), 8);
  ledger.session_opened(address(40009), 9);
  ledger.session_closed(address(40008), 8, DisconnectReason::kClientLeft, 2'000'000);
  ledger.session_closed(address(40009), 9, DisconnectReason::kTimeout, 9'000'000);  // goodbyes lost
  const Finished f = finish_at(ledger, 20'000'000);
  EXPECT_TRUE(f.violations.empty());
  EXPECT_EQ(f.counts.timeout_due, 0u);
}

TEST(SessionLedger, ClosingASessionTheLedgerDoesNotHoldIsAViolation) {
  SessionLedger ledger(kTimeout, kTolerance);
  ledger.session_opened(address(40010), 10);
  ledger.session_closed(address(40010), 11, DisconnectReason::kTimeout, 9'000'000);
  EXPECT_EQ(ledger.violations().size(), 1u);
}

}  // namespace
}  // namespace posecast::soak
