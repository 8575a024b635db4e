#pragma once
// CommandSender: ClientCommands for entities the client owns, with sequence numbers and
// redundancy. The protocol has no per-command acknowledgement (docs/session.md: the server
// ignores duplicate or old sequences, and refuses commands for entities the client does not
// own), so each command is sent `copies` times, `resend_interval_us` apart: with independent
// loss p all copies are lost with probability p^copies (0.1 % at 10 % loss and 3 copies).
// Fixed capacity; never blocks.

#include <cstdint>
#include <vector>

#include "posecast/protocol/messages.h"

namespace posecast::client {

struct CommandSettings {
  int copies = 3;                       // >= 1
  // About a frame at 60 Hz: a predicted command must reach the server before the tick it is
  // stamped with, and the stamp's margin (PredictionSettings::margin_us) covers one resend
  // this short, not a send interval (docs/client.md, "Prediction").
  int64_t resend_interval_us = 16'000;
  std::size_t max_pending = 256;
};

class CommandSender {
 public:
  explicit CommandSender(const CommandSettings& settings = {}) : settings_(settings) {}

  // Queues `command` (its sequence is overwritten) for sending at or after `now_us`. Returns
  // the sequence number, or 0 when max_pending commands are still being sent.
  uint32_t submit(protocol::ClientCommand command, int64_t now_us);

  // Calls send(const ClientCommand&) for every copy due at `now_us`, oldest first.
  template <class Send>
  void pump(int64_t now_us, Send&& send) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      Pending& p = pending_[i];
      if (p.next_send_us <= now_us) {
        send(p.command);
        ++sent_;
        --p.copies_left;
        p.next_send_us = now_us + settings_.resend_interval_us;
      }
      if (p.copies_left > 0) pending_[kept++] = p;
    }
    pending_.resize(kept);
  }

  void clear() { pending_.clear(); }
  std::size_t pending() const { return pending_.size(); }
  uint64_t datagrams_sent() const { return sent_; }
  uint32_t last_sequence() const { return next_sequence_ - 1; }

 private:
  struct Pending {
    protocol::ClientCommand command;
    int copies_left = 0;
    int64_t next_send_us = 0;
  };
  CommandSettings settings_;
  std::vector<Pending> pending_;
  uint32_t next_sequence_ = 1;
  uint64_t sent_ = 0;
};

}  // namespace posecast::client
