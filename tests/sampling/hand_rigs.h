#pragma once
// Hand-built skeletons and clips for the sampling tests, so the jobs can be checked against
// hand-worked values without any importer.

#include <cmath>
#include <cstdint>
#include <glm/gtc/quaternion.hpp>
#include <initializer_list>
#include <string>
#include <vector>

#include "posecast/clip.h"
#include "posecast/sampling.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast::test {

// A chain of `count` nodes (node i's parent is i - 1) with distinct rest TRS per node, so a
// test can tell "rest" from "sampled" for every component. No joints, no mesh node.
inline Skeleton chain_skeleton(int count) {
  Skeleton s;
  for (int i = 0; i < count; ++i) {
    s.parents.push_back(static_cast<int16_t>(i - 1));
    Transform t;
    const float f = static_cast<float>(i + 1);
    t.translation = glm::vec3(100.0f * f, 200.0f * f, 300.0f * f);
    t.rotation = glm::quat(0.5f, 0.5f, 0.5f, 0.5f);  // 120 degrees about (1,1,1)
    t.scale = glm::vec3(7.0f * f, 8.0f * f, 9.0f * f);
    s.rest.push_back(t);
    s.names.push_back("node" + std::to_string(i));
    s.source_nodes.push_back(i);
  }
  return s;
}

// Appends tracks to a Clip the way the importer lays them out (flat times and values).
class ClipBuilder {
 public:
  // `values` holds comps floats per key (x, y, z[, w]), or 3 * comps per key for CUBICSPLINE
  // in glTF order (in-tangent, value, out-tangent).
  ClipBuilder& track(uint16_t node, TrackTarget target, Interpolation interpolation,
                     std::vector<float> times, std::vector<float> values) {
    Track t;
    t.node = node;
    t.target = target;
    t.interpolation = interpolation;
    t.key_count = static_cast<uint32_t>(times.size());
    t.times_offset = static_cast<uint32_t>(clip_.times.size());
    t.values_offset = static_cast<uint32_t>(clip_.values.size());
    clip_.tracks.push_back(t);
    clip_.times.insert(clip_.times.end(), times.begin(), times.end());
    clip_.values.insert(clip_.values.end(), values.begin(), values.end());
    for (float time : times)
      if (time > clip_.duration_seconds) clip_.duration_seconds = time;
    return *this;
  }
  Clip build() {
    clip_.duration_us =
        static_cast<int64_t>(std::llround(static_cast<double>(clip_.duration_seconds) * 1e6));
    return clip_;
  }

 private:
  Clip clip_;
};

// Runs a SampleJob into `out` (node count entries) with the given cursor; `holds_base` as
// SampleJob::output_holds_base. Returns Run()'s result.
inline bool sample_into(const Skeleton& skeleton, const Clip& clip, int64_t time_us,
                        std::vector<uint32_t>& cursor, std::vector<Transform>& out,
                        bool holds_base = false) {
  SampleJob job;
  job.skeleton = &skeleton;
  job.clip = &clip;
  job.time_us = time_us;
  job.cursor = cursor;
  job.output = out;
  job.output_holds_base = holds_base;
  return job.Run();
}

// Runs a SampleJob with the given cursor; returns the local pose (empty on failure).
inline std::vector<Transform> sample(const Skeleton& skeleton, const Clip& clip, int64_t time_us,
                                     std::vector<uint32_t>& cursor) {
  std::vector<Transform> out(skeleton.node_count());
  if (!sample_into(skeleton, clip, time_us, cursor, out)) return {};
  return out;
}

// Same with a fresh cursor.
inline std::vector<Transform> sample(const Skeleton& skeleton, const Clip& clip, int64_t time_us) {
  std::vector<uint32_t> cursor(clip.tracks.size(), 0u);
  return sample(skeleton, clip, time_us, cursor);
}

// Quaternion (x, y, z, w as stored in clips) for `degrees` about a unit axis, in double.
inline std::vector<float> axis_angle_xyzw(double ax, double ay, double az, double degrees) {
  const double half = degrees * 3.14159265358979323846 / 360.0;
  const double len = std::sqrt(ax * ax + ay * ay + az * az);
  const double s = std::sin(half) / len;
  return {static_cast<float>(ax * s), static_cast<float>(ay * s), static_cast<float>(az * s),
          static_cast<float>(std::cos(half))};
}

inline std::vector<float> concat(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

}  // namespace posecast::test
