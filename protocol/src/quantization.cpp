#include "posecast/protocol/quantization.h"

#include <bit>
#include <cmath>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "posecast/det_math.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"

namespace posecast::protocol {
namespace {

glm::quat conjugate(const glm::quat& q) { return glm::quat(q.w, -q.x, -q.y, -q.z); }

// Quaternion component i (0..3 = x, y, z, w).
float component(const glm::quat& q, int i) {
  switch (i) {
    case 0: return q.x;
    case 1: return q.y;
    case 2: return q.z;
    default: return q.w;
  }
}

// The three component indices other than `axis`, in increasing order.
constexpr int kOthers[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};

// Three codes at once, in GCC/Clang generic vectors (SSE on x86-64, NEON on aarch64): each
// lane does exactly the float operations of the scalar path, and IEEE division, addition and
// truncation round per lane as the scalar instructions do, so the codes are the same integers
// (the quantiser's divisions were most of its time, one at a time). Lane 3 is padding.
using Lanes4f = float __attribute__((vector_size(16)));
using Lanes4i = int32_t __attribute__((vector_size(16)));

// Lanes 0..2 of `v` rounded half away from zero into out[0..2] (lane 3 is ignored); false
// when any |v| exceeds `limit` or is NaN. The same integers as the former scalar
// (int32_t)(v < 0 ? -floor(-v + 0.5f) : floor(v + 0.5f)): for v < 0, -v + 0.5f is |v| + 0.5f;
// |v| <= limit <= 2^30, so |v| + 0.5f is in [0, 2^31), where truncation (the conversion) is
// exact and equals floor (rotation limits, ceil(2 / step) + 1, are far smaller). No libm call
// (baseline x86-64 has no rounding instruction, so std::floor is one).
[[gnu::always_inline]] inline bool round_codes3(Lanes4f v, int32_t limit, int32_t* out) {
  const Lanes4i sign_mask = {0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF};
  const Lanes4f magnitude = std::bit_cast<Lanes4f>(std::bit_cast<Lanes4i>(v) & sign_mask);
  const float bound = static_cast<float>(limit);
  const Lanes4i within = magnitude <= Lanes4f{bound, bound, bound, bound};  // false for NaN
  if (!(within[0] & within[1] & within[2])) return false;
  const Lanes4i rounded = __builtin_convertvector(magnitude + 0.5f, Lanes4i);
  // -1 in the lanes where v < 0: (x ^ -1) - (-1) == -x, (x ^ 0) - 0 == x.
  const Lanes4i negative = v < Lanes4f{0.0f, 0.0f, 0.0f, 0.0f};
  const Lanes4i code = (rounded ^ negative) - negative;
  out[0] = code[0];
  out[1] = code[1];
  out[2] = code[2];
  return true;
}

// Correctly rounded square root, the same bits as std::sqrt. On x86-64 the sqrtss
// instruction directly: GCC compiled std::sqrt here as a call into libm (errno handling), a
// measurable part of quantising. The argument below is >= 1, so errno never mattered.
[[gnu::always_inline]] inline float sqrt_exact(float x) {
#if defined(__SSE__)
  return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x)));
#else
  return std::sqrt(x);
#endif
}

bool finite3(const glm::vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

bool finite4(const glm::quat& q) {
  return std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z) && std::isfinite(q.w);
}

// Codes of value - rest in steps (translation or scale).
bool quantize_linear(const glm::vec3& value, const glm::vec3& rest, float step, int32_t* out) {
  const Lanes4f delta = Lanes4f{value.x, value.y, value.z, 0.0f} - Lanes4f{rest.x, rest.y, rest.z, 0.0f};
  return round_codes3(delta / Lanes4f{step, step, step, step}, kMaxLinearCode, out);
}

glm::vec3 dequantize_linear(const glm::vec3& rest, const int32_t* codes, float step) {
  return glm::vec3(rest.x + static_cast<float>(codes[0]) * step,
                   rest.y + static_cast<float>(codes[1]) * step,
                   rest.z + static_cast<float>(codes[2]) * step);
}

// Gibbs codes of the rotation `target` relative to `rest`: d = conj(rest) * target, axis a
// (kept from `reference_axis` while |d[a]| is at least half the largest component, so |g| <= 2),
// g = the other components over d[a]. out[0] = axis, out[1..3] = codes.
bool quantize_rotation(const glm::quat& rest, const glm::quat& target, int reference_axis,
                       float step, int32_t limit, int32_t* out) {
  const glm::quat d = det_mul(conjugate(rest), target);
  // Largest component, preferring w, then x, y, z on ties (fixed order: deterministic).
  int axis = 3;
  float largest = std::fabs(d.w);
  for (int i = 0; i < 3; ++i) {
    const float m = std::fabs(component(d, i));
    if (m > largest) {
      largest = m;
      axis = i;
    }
  }
  if (!(largest > 0.0f)) return false;  // zero or NaN quaternion
  if (reference_axis >= 0 && reference_axis <= 3 && reference_axis != axis &&
      std::fabs(component(d, reference_axis)) >= 0.5f * largest) {
    axis = reference_axis;
  }
  const float pivot = component(d, axis);
  out[0] = axis;
  // (component / pivot) / step per lane, as the scalar expression groups it.
  const Lanes4f others = {component(d, kOthers[axis][0]), component(d, kOthers[axis][1]),
                          component(d, kOthers[axis][2]), 0.0f};
  const Lanes4f gibbs = others / Lanes4f{pivot, pivot, pivot, pivot};
  return round_codes3(gibbs / Lanes4f{step, step, step, step}, limit, out + 1);
}

bool is_rest_rotation(const int32_t* codes) {
  return codes[0] == 3 && codes[1] == 0 && codes[2] == 0 && codes[3] == 0;
}

bool is_zero3(const int32_t* codes) { return codes[0] == 0 && codes[1] == 0 && codes[2] == 0; }

// dequantize_rotation's body, inlined into the per-node loops of quantize and
// dequantize_pose (the call and its stack round trip were a measurable part of decoding);
// the same operations in the same order, so the same bits.
[[gnu::always_inline]] inline glm::quat dequantize_rotation_inline(const Transform& rest,
                                                                   const int32_t* codes,
                                                                   float step) {
  const int axis = codes[0] & 3;
  const float g0 = static_cast<float>(codes[1]) * step;
  const float g1 = static_cast<float>(codes[2]) * step;
  const float g2 = static_cast<float>(codes[3]) * step;
  const float n = 1.0f / sqrt_exact(((1.0f + g0 * g0) + g1 * g1) + g2 * g2);
  float c[4];
  c[axis] = n;
  c[kOthers[axis][0]] = g0 * n;
  c[kOthers[axis][1]] = g1 * n;
  c[kOthers[axis][2]] = g2 * n;
  return det_mul(rest.rotation, glm::quat(c[3], c[0], c[1], c[2]));
}

}  // namespace

glm::quat dequantize_rotation(const Transform& rest, const int32_t* codes, float step) {
  return dequantize_rotation_inline(rest, codes, step);
}

void QuantizedPose::reset(const PoseFormat& format) {
  values.assign(format.node_count() * kValuesPerNode, 0);
  for (std::size_t n = 0; n < format.node_count(); ++n) values[n * kValuesPerNode + kRotationAxis] = 3;
  off_layout = false;
  recipe = PoseRecipe{};
}

PoseQuantizer::PoseQuantizer(const PoseFormat& format)
    : format_(format),
      coded_local_(format.node_count()),
      true_world_(format.node_count()),
      coded_world_(format.node_count()) {}

bool PoseQuantizer::quantize(std::span<const Transform> pose, const QuantizedPose* reference,
                             QuantizedPose& out) {
  const std::size_t count = format_.node_count();
  if (pose.size() != count) return false;
  if (reference != nullptr && reference->values.size() != count * kValuesPerNode) {
    reference = nullptr;
  }
  if (out.values.size() != count * kValuesPerNode) out.values.resize(count * kValuesPerNode);
  bool off_layout = false;
  for (std::size_t n = 0; n < count; ++n) {
    const Transform& src = pose[n];
    const Transform& rest = format_.rest[n];
    const NodePrecision& precision = format_.precision[n];
    const uint8_t channels = format_.channels[n];
    int32_t* codes = &out.values[n * kValuesPerNode];
    if (!finite3(src.translation) || !finite4(src.rotation) || !finite3(src.scale)) return false;

    // Nodes without a track hold the rest value exactly: no arithmetic needed.
    if (src.translation == rest.translation) {
      codes[kTranslationCode] = codes[kTranslationCode + 1] = codes[kTranslationCode + 2] = 0;
    } else if (!quantize_linear(src.translation, rest.translation, precision.translation_step,
                                codes + kTranslationCode)) {
      return false;
    }
    if (src.scale == rest.scale) {
      codes[kScaleCode] = codes[kScaleCode + 1] = codes[kScaleCode + 2] = 0;
    } else if (!quantize_linear(src.scale, rest.scale, precision.scale_step, codes + kScaleCode)) {
      return false;
    }
    if (!(channels & kChannelTranslation) && !is_zero3(codes + kTranslationCode)) off_layout = true;
    if (!(channels & kChannelScale) && !is_zero3(codes + kScaleCode)) off_layout = true;

    const int parent = format_.parents[n];
    true_world_[n] = parent < 0 ? src.rotation : det_mul(true_world_[parent], src.rotation);
    const int reference_axis =
        reference != nullptr ? reference->values[n * kValuesPerNode + kRotationAxis] : -1;
    glm::quat target = src.rotation;
    if ((channels & kChannelRotation) && format_.compensated && parent >= 0) {
      // What this node's local rotation must be, given the parent's quantised world
      // rotation, for its world rotation to be the true one.
      target = det_mul(conjugate(coded_world_[parent]), true_world_[n]);
    }
    if (!(channels & kChannelRotation) && src.rotation == rest.rotation) {
      codes[kRotationAxis] = 3;
      codes[kRotationCode] = codes[kRotationCode + 1] = codes[kRotationCode + 2] = 0;
    } else if (!quantize_rotation(rest.rotation, target, reference_axis, precision.rotation_step,
                                  precision.rotation_limit, codes + kRotationAxis)) {
      return false;
    }
    if (!(channels & kChannelRotation) && !is_rest_rotation(codes + kRotationAxis)) {
      off_layout = true;
    }
    const glm::quat coded = is_rest_rotation(codes + kRotationAxis)
                                ? rest.rotation
                                : dequantize_rotation_inline(rest, codes + kRotationAxis,
                                                      precision.rotation_step);
    coded_local_[n] = coded;
    coded_world_[n] = parent < 0 ? coded : det_mul(coded_world_[parent], coded);
  }
  out.off_layout = off_layout;
  return true;
}

namespace {

// Node n's transform from its codes; the rotation is `known_rotation` when given (the caller
// knows the same codes' dequantised rotation), else dequantised.
[[gnu::always_inline]] inline void dequantize_node(const PoseFormat& format, const int32_t* codes,
                                                   std::size_t n, const glm::quat* known_rotation,
                                                   Transform& t) {
  const Transform& rest = format.rest[n];
  const NodePrecision& precision = format.precision[n];
  t.translation = dequantize_linear(rest.translation, codes + kTranslationCode,
                                    precision.translation_step);
  if (known_rotation != nullptr) {
    t.rotation = *known_rotation;
  } else {
    t.rotation = is_rest_rotation(codes + kRotationAxis)
                     ? rest.rotation
                     : dequantize_rotation_inline(rest, codes + kRotationAxis, precision.rotation_step);
  }
  t.scale = dequantize_linear(rest.scale, codes + kScaleCode, precision.scale_step);
}

}  // namespace

void dequantize_pose(const PoseFormat& format, const QuantizedPose& pose,
                     std::span<Transform> out) {
  const std::size_t count = format.node_count();
  for (std::size_t n = 0; n < count && n < out.size(); ++n) {
    dequantize_node(format, &pose.values[n * kValuesPerNode], n, nullptr, out[n]);
  }
}

void dequantize_pose_reusing(const PoseFormat& format, const QuantizedPose& pose,
                             const QuantizedPose& known,
                             std::span<const glm::quat> known_rotations,
                             std::span<Transform> out) {
  const std::size_t count = format.node_count();
  if (known.values.size() != count * kValuesPerNode || known_rotations.size() != count) {
    dequantize_pose(format, pose, out);
    return;
  }
  for (std::size_t n = 0; n < count && n < out.size(); ++n) {
    const int32_t* codes = &pose.values[n * kValuesPerNode];
    const int32_t* known_codes = &known.values[n * kValuesPerNode];
    const bool same_rotation = codes[kRotationAxis] == known_codes[kRotationAxis] &&
                               codes[kRotationCode] == known_codes[kRotationCode] &&
                               codes[kRotationCode + 1] == known_codes[kRotationCode + 1] &&
                               codes[kRotationCode + 2] == known_codes[kRotationCode + 2];
    dequantize_node(format, codes, n, same_rotation ? &known_rotations[n] : nullptr, out[n]);
  }
}

bool quantized_palette(const Skeleton& skeleton, const PoseFormat& format,
                       const QuantizedPose& pose, PaletteScratch& scratch,
                       std::span<glm::mat4> palette) {
  if (skeleton.node_count() != format.node_count() ||
      pose.values.size() != format.node_count() * kValuesPerNode) {
    return false;
  }
  scratch.locals.resize(format.node_count());
  scratch.models.resize(format.node_count());
  dequantize_pose(format, pose, scratch.locals);
  LocalToModelJob to_model{&skeleton, scratch.locals, scratch.models};
  if (!to_model.Run()) return false;
  PaletteJob palette_job{&skeleton, scratch.models, palette};
  return palette_job.Run();
}

}  // namespace posecast::protocol
