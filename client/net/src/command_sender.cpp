#include "posecast/client/command_sender.h"

namespace posecast::client {

uint32_t CommandSender::submit(protocol::ClientCommand command, int64_t now_us) {
  if (pending_.size() >= settings_.max_pending) return 0;
  command.sequence = next_sequence_++;
  if (next_sequence_ == 0) next_sequence_ = 1;  // 0 means "refused"
  pending_.push_back(Pending{command, settings_.copies < 1 ? 1 : settings_.copies, now_us});
  return command.sequence;
}

}  // namespace posecast::client
