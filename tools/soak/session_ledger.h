#pragma once
// SessionLedger: the soak's account of the server's client sessions, keyed by the client's
// address, and of the clients that vanished (closed their socket without a goodbye). From it
// the soak checks, session by session, that the server times out every silent client in time.
//
// Why per session and by address: the server knows a client only by its address. A new
// client whose socket the kernel binds to the port of a vanished client still holding a
// session is taken for that client restarting, and the old session ends as replaced
// (kClientLeft), not by a timeout (server/src/inbound.cpp, handle_response). Counting
// timeouts against vanishes therefore raises a false alarm whenever the kernel's random
// ephemeral port choice repeats a port within the timeout. The soak keeps every retired
// client's socket bound while the ledger says the server holds a session at its address
// (holds_session), so the address cannot be reused, and this ledger flags any vanished
// session that ends otherwise than by timeout within timeout + tolerance.
//
// Not thread-safe; the soak drives it from its one thread (the server's callbacks included).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "posecast/net/endpoint.h"
#include "posecast/protocol/messages.h"

namespace posecast::soak {

struct LedgerCounts {
  uint64_t vanished_with_session = 0;    // vanished while (or before) the server held a session
  uint64_t vanished_without_session = 0; // the server never opened one for them (handshake cut)
  uint64_t timeout_due = 0;              // vanished sessions whose timeout fell before the end
  uint64_t timed_out_in_time = 0;        // of those, ended by a timeout within the tolerance
};

class SessionLedger {
 public:
  // `timeout_us`: the server's client timeout; `tolerance_us`: how late after vanish +
  // timeout the server may end a silent session (its last read and its tick granularity).
  SessionLedger(int64_t timeout_us, int64_t tolerance_us);

  // From Server::on_client_connected / on_client_disconnected, at simulated time `now_us`.
  void session_opened(const net::Endpoint& address, uint32_t session_id);
  void session_closed(const net::Endpoint& address, uint32_t session_id,
                      protocol::DisconnectReason reason, int64_t now_us);

  // The client at `address` went silent at `now_us` (its socket stays bound). If the server
  // has no session for it yet, one opened later (an answer already on its way) counts as
  // vanished from `now_us`.
  void client_vanished(const net::Endpoint& address, int64_t now_us);
  // The soak closes the socket at `address`: forgets a vanish the server never opened a
  // session for. Call only when !holds_session(address).
  void address_released(const net::Endpoint& address);

  bool holds_session(const net::Endpoint& address) const;

  // Vanished sessions the server still holds at `end_us` though their timeout fell before it,
  // added to `violations` with those found so far; the counts as of `end_us`.
  LedgerCounts finish(int64_t end_us, std::vector<std::string>& violations);

  // Violations found as sessions closed (a vanished session replaced, kicked or timed out late).
  const std::vector<std::string>& violations() const { return violations_; }

 private:
  struct Session {
    uint32_t id = 0;
    std::optional<int64_t> vanished_at;  // set when its client vanished
  };
  bool due(int64_t vanished_at, int64_t end_us) const;

  int64_t timeout_us_;
  int64_t tolerance_us_;
  std::map<net::Endpoint, Session> open_;               // the server's live sessions by address
  std::map<net::Endpoint, int64_t> vanished_no_session_; // vanished before any session opened
  struct ClosedVanish {
    int64_t vanished_at = 0;
    bool timed_out_in_time = false;
  };
  std::vector<ClosedVanish> closed_vanished_;             // ended sessions of vanished clients
  LedgerCounts counts_;
  std::vector<std::string> violations_;
};

}  // namespace posecast::soak
