#pragma once
// TimeHistory: the last kFrames samples of a per-frame value (a time in ms, a rate, a depth)
// for the overlay's plots.

#include <array>
#include <cstddef>

namespace posecast::viewer {

class TimeHistory {
 public:
  static constexpr std::size_t kFrames = 240;
  void push(float value);
  // Samples in time order into `out` (kFrames entries); returns how many are valid.
  std::size_t ordered(std::array<float, kFrames>& out) const;

 private:
  std::array<float, kFrames> samples_{};
  std::size_t next_ = 0;
  std::size_t count_ = 0;
};

}  // namespace posecast::viewer
