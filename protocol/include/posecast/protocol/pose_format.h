#pragma once
// PoseFormat: how the poses of one skeleton travel on the wire, derived identically by server
// and client from the shared asset (skeleton + clips), so none of it is ever sent:
//  - the channel layout: which TRS channels of which nodes animate (others stay at rest);
//  - the precision of every channel, derived from the error budget (docs/codec.md):
//    virtual vertices on a 3 cm shell around each joint must move by at most 0.01 cm, both
//    scaled by the skeleton's bind-pose height over 1.8 m;
//  - per-channel magnitude priors (from sampling the clips) that select the entropy coder's
//    contexts.
// Immutable once built; share one per skeleton (std::shared_ptr<const PoseFormat>).

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "posecast/clip.h"
#include "posecast/model.h"
#include "posecast/result.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast::protocol {

// Channel bits of PoseFormat::channels.
enum ChannelBit : uint8_t {
  kChannelTranslation = 1u << 0,
  kChannelRotation = 1u << 1,
  kChannelScale = 1u << 2,
};

// The error measure of the animation compression field (ACL's), scaled to the skeleton:
// a character `bind_height` model units tall is treated as 1.8 m tall.
struct ErrorScale {
  float bind_height = 1.8f;   // largest extent of the joints' bind-pose positions (model units)
  float units_per_cm = 0.01f; // model units per scaled centimetre (bind_height / 180)
  float shell_radius = 0.03f; // virtual-vertex distance from each joint (model units)
  float bound = 0.0001f;      // allowed virtual-vertex displacement (model units)
};

// Builds the error scale of a skeleton: bind-pose joint positions from the inverse bind
// matrices (placed by the rest-pose world matrix of the mesh node), falling back to the rest
// pose, then to the 1.8 m reference when the skeleton has no extent (a single joint).
ErrorScale compute_error_scale(const Skeleton& skeleton, float shell_cm = 3.0f,
                               float bound_cm = 0.01f);

struct PoseFormatOptions {
  float shell_cm = 3.0f;    // at the 1.8 m reference height
  float bound_cm = 0.01f;   // at the 1.8 m reference height
  // Fraction of the bound given to quantisation; the rest covers float rounding in
  // dequantisation and the hierarchy walk.
  float budget_fraction = 0.97f;
  // Rotation error compensation (docs/codec.md): each rotation is quantised relative to its
  // parent's *quantised* world rotation, so rotation errors do not accumulate down chains.
  // Used only when every scale is uniform, positive and unanimated; otherwise the derivation
  // falls back to the uncompensated bound.
  bool compensate_rotations = true;
  // A track whose keys move the skeleton by at most this fraction of the bound (float noise
  // around a constant) does not make its channel animated; the deviations it leaves are
  // charged to the budget (docs/codec.md).
  float static_tolerance = 0.02f;
  // Clip sampling rate for the magnitude priors.
  uint32_t prior_sample_hz = 60;
};

// Quantisation steps of one node (all nodes have them, animated or not: records that must
// send a static channel use them too).
struct NodePrecision {
  float rotation_step = 1e-4f;     // step of the Gibbs coordinates (see quantization.h)
  int32_t rotation_limit = 20001;  // largest |code| of a rotation coordinate
  float translation_step = 1e-4f;  // model units (parent space)
  float scale_step = 1e-4f;
};

// Per node and component (T xyz, R gx gy gz, S xyz: 9 per node) magnitude priors, in
// quantisation steps: the mean absolute change per second while clips play, and the mean
// absolute code (distance from rest). Integers so both sides select identical contexts.
inline constexpr int kPriorComponentsPerNode = 9;

struct PoseFormat {
  // Copied from the skeleton (the format does not keep a pointer to it).
  std::vector<int16_t> parents;
  std::vector<Transform> rest;
  std::vector<std::string> names;
  std::vector<uint16_t> joint_nodes;

  std::vector<uint8_t> channels;         // per node: ChannelBit mask of animated channels
  std::vector<NodePrecision> precision;  // per node
  std::vector<uint32_t> speed_prior;     // node_count * 9, steps per second
  std::vector<uint32_t> value_prior;     // node_count * 9, steps

  // The clips the format was built from (recipes name them; clip_dictionary.h).
  std::vector<int64_t> clip_durations_us;

  ErrorScale error_scale;
  bool compensated = false;          // rotation error compensation in use
  uint32_t animated_node_count = 0;  // nodes with at least one animated channel
  uint32_t animated_channel_count = 0;
  // Hash of everything above that the wire depends on: server and client can compare it.
  uint64_t fingerprint = 0;

  std::size_t node_count() const { return parents.size(); }
  bool animated(std::size_t node, ChannelBit bit) const { return (channels[node] & bit) != 0; }
};

// Derives the format of `skeleton` from the clips bound to it. A channel is animated when some
// clip has a track on it whose values move the skeleton by more than the static tolerance. Deterministic: the
// same skeleton and clips give the same format (and fingerprint) on every machine.
// Fails only for an invalid skeleton or clip (the message says which).
Result<PoseFormat> build_pose_format(const Skeleton& skeleton, std::span<const Clip> clips,
                                     const PoseFormatOptions& options = {});

// The pose formats of every rig of `model` (index = rig index), with default options: the one
// derivation the server and the client both use, so their formats (and fingerprints) agree.
// Errors name the rig: "model '<source>' rigs[<r>]: pose format: ...".
Result<std::vector<std::shared_ptr<const PoseFormat>>> build_model_pose_formats(const Model& model);

}  // namespace posecast::protocol
