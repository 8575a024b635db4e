#pragma once
// Model: everything loaded from one glTF file, immutable once built, shared by every entity
// that uses it (hold it as std::shared_ptr<const Model>).

#include <cstdint>
#include <string>
#include <vector>

#include "posecast/clip.h"
#include "posecast/rig_config.h"
#include "posecast/root_motion.h"
#include "posecast/skeleton.h"
#include "posecast/skinned_mesh.h"

namespace posecast {

// A skeleton with the clips bound to it and the meshes it skins.
struct Rig {
  Skeleton skeleton;
  // One Clip per glTF animation, in file order, for every rig alike (so clip indices and names
  // agree across rigs); tracks on nodes outside this skeleton are dropped.
  std::vector<Clip> clips;
  std::vector<SkinnedMesh> meshes;  // meshes of nodes that use this skin
  // The model's rig config bound to this rig (rig_config.h): root-motion joint, feet, the
  // locomotion's clips.
  ResolvedRigConfig motion_config;
  // One per clip, same index as `clips` (root_motion.h); the importer extracts them
  // (root_motion_extraction.h). Empty only for a rig built by hand without extraction.
  std::vector<RootMotionTrack> root_motion;
};

// An encoded texture image (PNG/JPEG bytes as in the file); decoding is the renderer's job.
struct EncodedImage {
  std::string mime_type;
  std::vector<uint8_t> bytes;
};

struct Model {
  std::string source;  // file path (or "gen-rig:N"), used in messages
  // One rig per glTF skin, in skin order. A file with no skin gets a single rig over every
  // node in node order, with identity inverse binds and no mesh node, so its palette is the
  // world matrix of each node.
  std::vector<Rig> rigs;
  std::vector<EncodedImage> images;
  bool has_skins = false;
  // 64-bit FNV-1a of the file's bytes (and of external buffers, in order, then of the rig
  // config's bytes when there is one): the asset identity that server and client compare.
  uint64_t content_hash = 0;
  // Problems that did not stop the import, each "<file>: <json path>: <reason>" (e.g. an
  // external image that could not be read: its EncodedImage is left empty).
  std::vector<std::string> warnings;

  // Index of the clip named `name` in rigs[*].clips, or -1.
  int find_clip(const std::string& name) const;
};

}  // namespace posecast
