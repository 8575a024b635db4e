#include "posecast/client/hit_shots.h"

namespace posecast::client {

void HitShots::clear() {
  last_fired_ = 0;
  answered_.reset();
  waiting_.clear();
}

uint32_t HitShots::next_sequence() {
  ++last_fired_;
  if (last_fired_ == 0) last_fired_ = 1;  // 0 is never a sequence (wraps after 2^32 shots)
  answered_.reset(last_fired_ % kWindow);
  ++stats_.hit_queries_fired;
  return last_fired_;
}

bool HitShots::receive(const protocol::HitResult& result) {
  const uint32_t seq = result.sequence;
  if (seq == 0 || seq > last_fired_ || last_fired_ - seq >= kWindow || answered_.test(seq % kWindow)) {
    ++stats_.hit_answers_unexpected;
    return false;
  }
  answered_.set(seq % kWindow);
  switch (result.outcome) {
    case protocol::HitOutcome::kHit: ++stats_.hit_answers_hit; break;
    case protocol::HitOutcome::kMiss: ++stats_.hit_answers_miss; break;
    case protocol::HitOutcome::kRefused: ++stats_.hit_answers_refused; break;
  }
  if (waiting_.size() >= kMaxWaiting) {
    waiting_.pop_front();
    ++stats_.hit_answers_dropped;
  }
  waiting_.push_back(result);
  return true;
}

void HitShots::take(std::vector<protocol::HitResult>& out) {
  out.insert(out.end(), waiting_.begin(), waiting_.end());
  waiting_.clear();
}

}  // namespace posecast::client
