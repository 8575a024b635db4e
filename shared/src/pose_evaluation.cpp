#include "posecast/pose_evaluation.h"

#include "posecast/local_to_model.h"
#include "posecast/palette.h"

namespace posecast {

bool evaluate_pose(const Rig& rig, int clip_index, int64_t time_us, SamplingCursor& cursor,
                   PoseBuffers& out) {
  const Skeleton& skeleton = rig.skeleton;
  out.locals.resize(skeleton.node_count());
  out.models.resize(skeleton.node_count());
  out.palette.resize(skeleton.joint_count());
  if (clip_index == kRestPose) {
    out.locals = skeleton.rest;
  } else {
    if (clip_index < 0 || static_cast<std::size_t>(clip_index) >= rig.clips.size()) return false;
    const Clip& clip = rig.clips[static_cast<std::size_t>(clip_index)];
    if (cursor.keys.size() != clip.tracks.size()) cursor.reset(clip);
    SampleJob sample{&skeleton, &clip, time_us, cursor.keys, out.locals};
    if (!sample.Run()) return false;
  }
  LocalToModelJob to_model{&skeleton, out.locals, out.models};
  if (!to_model.Run()) return false;
  PaletteJob palette{&skeleton, out.models, out.palette};
  return palette.Run();
}

}  // namespace posecast
