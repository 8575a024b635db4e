#include "session_ledger.h"

#include <cstdio>

namespace posecast::soak {
namespace {

std::string seconds(int64_t us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", static_cast<double>(us) / 1e6);
  return text;
}

}  // namespace

SessionLedger::SessionLedger(int64_t timeout_us, int64_t tolerance_us)
    : timeout_us_(timeout_us), tolerance_us_(tolerance_us) {}

bool SessionLedger::due(int64_t vanished_at, int64_t end_us) const {
  return vanished_at + timeout_us_ + tolerance_us_ <= end_us;
}

void SessionLedger::session_opened(const net::Endpoint& address, uint32_t session_id) {
  Session& session = open_[address];
  session = Session{session_id, std::nullopt};
  auto pending = vanished_no_session_.find(address);
  if (pending != vanished_no_session_.end()) {
    session.vanished_at = pending->second;
    ++counts_.vanished_with_session;
    vanished_no_session_.erase(pending);
  }
}

void SessionLedger::session_closed(const net::Endpoint& address, uint32_t session_id,
                                   protocol::DisconnectReason reason, int64_t now_us) {
  auto it = open_.find(address);
  if (it == open_.end() || it->second.id != session_id) {
    violations_.push_back("server closed session #" + std::to_string(session_id) + " of " +
                          net::to_string(address) + ", which the ledger did not hold open");
    return;
  }
  const std::optional<int64_t> vanished_at = it->second.vanished_at;
  open_.erase(it);
  if (!vanished_at) return;  // a live or departing client: the client side judges those
  const bool timed_out = reason == protocol::DisconnectReason::kTimeout;
  const bool in_time = now_us - *vanished_at <= timeout_us_ + tolerance_us_;
  closed_vanished_.push_back(ClosedVanish{*vanished_at, timed_out && in_time});
  if (!timed_out || !in_time) {
    violations_.push_back("session #" + std::to_string(session_id) + " of " + net::to_string(address) +
                          ", silent since " + seconds(*vanished_at) + ", ended as " +
                          protocol::to_string(reason) + " at " + seconds(now_us) +
                          " (expected a timeout within " + seconds(timeout_us_ + tolerance_us_) + ")");
  }
}

void SessionLedger::client_vanished(const net::Endpoint& address, int64_t now_us) {
  auto it = open_.find(address);
  if (it != open_.end()) {
    if (!it->second.vanished_at) {
      it->second.vanished_at = now_us;
      ++counts_.vanished_with_session;
    }
    return;
  }
  vanished_no_session_[address] = now_us;
}

void SessionLedger::address_released(const net::Endpoint& address) {
  if (vanished_no_session_.erase(address) != 0) ++counts_.vanished_without_session;
}

bool SessionLedger::holds_session(const net::Endpoint& address) const {
  return open_.contains(address);
}

LedgerCounts SessionLedger::finish(int64_t end_us, std::vector<std::string>& violations) {
  violations.insert(violations.end(), violations_.begin(), violations_.end());
  LedgerCounts counts = counts_;
  counts.vanished_without_session += vanished_no_session_.size();
  for (const ClosedVanish& closed : closed_vanished_) {
    if (!due(closed.vanished_at, end_us)) continue;
    ++counts.timeout_due;
    if (closed.timed_out_in_time) ++counts.timed_out_in_time;
  }
  for (const auto& [address, session] : open_) {
    if (!session.vanished_at || !due(*session.vanished_at, end_us)) continue;
    ++counts.timeout_due;
    violations.push_back("server still holds session #" + std::to_string(session.id) + " of " +
                         net::to_string(address) + ", silent since " + seconds(*session.vanished_at) +
                         ", at the end (" + seconds(end_us) + ")");
  }
  return counts;
}

}  // namespace posecast::soak
