// Foot sliding: the world-space horizontal speed of a planted foot, as a fraction of the
// character's ground speed, over a walk, run, walk run (4 s each, 60 ticks a second), with
// speed matching (clip rate = commanded speed / the clip's ground speed; a travelling clip moves
// the character by its root-motion deltas) beside the same run with a constant velocity and
// the clips at rate 1 as authored (no foot locking: what a character gets without posecast's
// help). Prints the figures (docs/movement.md, docs/performance.md):
//   build/tests/motion/motion_tests --gtest_filter='FootSliding.*'
// This drives the clips directly (no World, no crossfade between segments: the clip changes
// at the same normalised time); the locomotion in sim/ drives the same functions.

#include <cmath>
#include <cstdio>

#include "motion_test_support.h"
#include "posecast/root_motion_extraction.h"

namespace posecast {
namespace {

using motion_test::asset_path;
using motion_test::load;
using motion_test::Mover;

struct Segment {
  int clip;
  float speed;  // commanded ground speed, model units per second
};

struct Sliding {
  double planted_distance = 0.0;  // world-space horizontal distance of planted feet
  double expected_distance = 0.0;  // commanded speed times the same planted time
  double ratio() const { return expected_distance > 0.0 ? planted_distance / expected_distance : 0.0; }
};

// Per clip and foot, the height under which the foot counts as planted (kFootContactBand).
std::vector<std::vector<float>> contact_heights(const Rig& rig, const std::vector<Segment>& segments) {
  std::vector<std::vector<float>> out(rig.clips.size());
  for (const Segment& s : segments) {
    std::vector<float>& heights = out[static_cast<std::size_t>(s.clip)];
    if (!heights.empty()) continue;
    for (uint16_t foot : rig.motion_config.foot_nodes) {
      float low = 1e30f, high = -1e30f;
      for (int i = 0; i <= kFootSamplesPerLoop; ++i) {
        const int64_t t = rig.clips[static_cast<std::size_t>(s.clip)].duration_us * i / kFootSamplesPerLoop;
        const float y = motion_test::model_matrix(rig, s.clip, t, foot)[3].y;
        low = std::min(low, y), high = std::max(high, y);
      }
      heights.push_back(low + kFootContactBand * (high - low));
    }
  }
  return out;
}

// Runs the segments (4 s each) and measures the planted feet.
Sliding measure(const Rig& rig, const std::vector<Segment>& segments, bool speed_matched) {
  const std::vector<std::vector<float>> contact = contact_heights(rig, segments);
  const std::vector<uint16_t>& feet = rig.motion_config.foot_nodes;
  constexpr int64_t kTick = 16667;
  constexpr int kTicksPerSegment = 240;
  Sliding result;
  Mover mover;
  double phase = 0.0;  // normalised clip time, kept across segments
  std::vector<glm::vec3> previous(feet.size());
  std::vector<bool> previous_planted(feet.size(), false);
  for (const Segment& s : segments) {
    const Clip& clip = rig.clips[static_cast<std::size_t>(s.clip)];
    const RootMotionTrack& track = rig.root_motion[static_cast<std::size_t>(s.clip)];
    const double rate = speed_matched ? static_cast<double>(s.speed / track.ground_speed) : 1.0;
    std::fill(previous_planted.begin(), previous_planted.end(), false);  // no step across a switch
    for (int tick = 0; tick < kTicksPerSegment; ++tick) {
      const double duration = static_cast<double>(clip.duration_us);
      const int64_t from = static_cast<int64_t>(phase * duration);
      phase += rate * static_cast<double>(kTick) / duration;
      phase -= std::floor(phase);
      const int64_t to = static_cast<int64_t>(phase * duration);
      if (speed_matched && track.travels) {
        mover.apply(root_motion_between(track, from, to, true));
      } else {
        mover.z += s.speed * static_cast<float>(kTick) * 1e-6f;  // facing +Z
      }
      for (std::size_t f = 0; f < feet.size(); ++f) {
        const glm::vec3 local(motion_test::model_matrix(rig, s.clip, to, feet[f])[3]);
        const glm::vec3 world = mover.place(local);
        const bool planted = local.y <= contact[static_cast<std::size_t>(s.clip)][f];
        if (planted && previous_planted[f]) {
          const double dx = static_cast<double>(world.x - previous[f].x);
          const double dz = static_cast<double>(world.z - previous[f].z);
          result.planted_distance += std::sqrt(dx * dx + dz * dz);
          result.expected_distance += static_cast<double>(s.speed) * static_cast<double>(kTick) * 1e-6;
        }
        previous[f] = world;
        previous_planted[f] = planted;
      }
    }
  }
  return result;
}

// `as_authored`: the same model with its clips as authored (no foot locking), for the baseline.
// `bound`: the largest speed-matched ratio accepted (the measured figure with a little room; the
// target is 2 %).
void report(const char* model, const Rig& rig, const Rig& as_authored, const std::vector<Segment>& segments,
            double bound) {
  const Sliding matched = measure(rig, segments, true);
  const Sliding constant = measure(as_authored, segments, false);
  std::printf("foot sliding %s (walk %.3f, run %.3f, walk %.3f units/s): %.2f %% speed-matched, %.2f %% constant "
              "velocity at rate 1 as authored\n",
              model, static_cast<double>(segments[0].speed), static_cast<double>(segments[1].speed),
              static_cast<double>(segments[2].speed), 100.0 * matched.ratio(), 100.0 * constant.ratio());
  EXPECT_GT(matched.expected_distance, 0.0) << "some foot plants";
  EXPECT_LT(matched.ratio(), constant.ratio()) << model;
  EXPECT_LT(matched.ratio(), bound) << model;
}

// Commanded speeds between the clips' own: walk at 0.85 of the walk's ground speed, run at 1.15
// of the run's, so playing at rate 1 cannot match them.
std::vector<Segment> walk_run_walk(const Model& model, const char* walk_name, const char* run_name) {
  const Rig& rig = model.rigs.front();
  const int walk = model.find_clip(walk_name), run = model.find_clip(run_name);
  const float walk_speed = 0.85f * rig.root_motion[static_cast<std::size_t>(walk)].ground_speed;
  const float run_speed = 1.15f * rig.root_motion[static_cast<std::size_t>(run)].ground_speed;
  return {{walk, walk_speed}, {run, run_speed}, {walk, walk_speed}};
}

TEST(FootSliding, GeneratedRig) {
  const Model model = load("gen-rig:24:travel");
  const std::vector<Segment> segments = walk_run_walk(model, "walk", "run");
  report("gen-rig:24:travel", model.rigs.front(), model.rigs.front(), segments, 0.015);
}

TEST(FootSliding, Fox) {
  SKIP_WITHOUT_MOTION_ASSET("Fox.glb");
  const Model model = motion_test::load_foot_locked_fox();
  const Model authored = load(asset_path("Fox.glb"));
  report("Fox (foot_lock)", model.rigs.front(), authored.rigs.front(),
         walk_run_walk(model, "Walk", "Run"), 0.005);
}

}  // namespace
}  // namespace posecast
