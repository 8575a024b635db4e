#include "posecast/protocol/quantization.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#if defined(__SSE__)
#include <xmmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "posecast/det_math.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"

namespace posecast::protocol {
namespace {

using detail::RotationGroup;
using detail::RotationGroupKind;

glm::quat conjugate(const glm::quat& q) { return glm::quat(q.w, -q.x, -q.y, -q.z); }

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

namespace {

// ---------------------------------------------------------------- rotations in lanes
//
// PoseQuantizer::quantize quantises rotations four nodes at a time. Lane i of every
// operation below is the scalar operation the former per-node code performed, in the same
// order (det_mul's products and sums, the divisions, the rounding, dequantize_rotation), and
// the former branches are computed on every lane and selected per lane, so each node's codes
// and rotations are the same bits (tests/protocol/quantizer_reference_test.cpp compares with
// the former per-node implementation over the sample assets and random poses).

using Mask4 = Lanes4i;  // lane masks: all ones or all zeros

struct QuatLanes {
  Lanes4f x, y, z, w;
};

[[gnu::always_inline]] inline Lanes4f splat(float v) { return Lanes4f{v, v, v, v}; }
[[gnu::always_inline]] inline Lanes4i splat_int(int32_t v) { return Lanes4i{v, v, v, v}; }

[[gnu::always_inline]] inline Lanes4f load_lanes(const float* p) {
  Lanes4f r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

[[gnu::always_inline]] inline Lanes4i load_lanes(const int32_t* p) {
  Lanes4i r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

[[gnu::always_inline]] inline Lanes4f select(Mask4 mask, Lanes4f a, Lanes4f b) {
  return std::bit_cast<Lanes4f>((std::bit_cast<Lanes4i>(a) & mask) |
                                (std::bit_cast<Lanes4i>(b) & ~mask));
}

[[gnu::always_inline]] inline Lanes4i select(Mask4 mask, Lanes4i a, Lanes4i b) {
  return (a & mask) | (b & ~mask);
}

[[gnu::always_inline]] inline Lanes4f abs_lanes(Lanes4f v) {
  return std::bit_cast<Lanes4f>(std::bit_cast<Lanes4i>(v) & splat_int(0x7FFFFFFF));
}

// Lanewise correctly rounded square root (the same bits as std::sqrt per lane).
[[gnu::always_inline]] inline Lanes4f sqrt_lanes(Lanes4f v) {
#if defined(__SSE__)
  return std::bit_cast<Lanes4f>(_mm_sqrt_ps(std::bit_cast<__m128>(v)));
#elif defined(__ARM_NEON) && defined(__aarch64__)
  return std::bit_cast<Lanes4f>(vsqrtq_f32(std::bit_cast<float32x4_t>(v)));
#else
  for (int i = 0; i < 4; ++i) v[i] = std::sqrt(v[i]);
  return v;
#endif
}

// det_mul on four lanes (the same expression, so the same order of operations).
[[gnu::always_inline]] inline QuatLanes mul_lanes(const QuatLanes& a, const QuatLanes& b) {
  return {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
          a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}

// conjugate(): the signs of x, y, z flipped (exact).
[[gnu::always_inline]] inline QuatLanes conjugate_lanes(const QuatLanes& q) {
  return {-q.x, -q.y, -q.z, q.w};
}

// Four rows (x, y, z, w) to lanes, and back (the same transpose).
[[gnu::always_inline]] inline QuatLanes transpose(Lanes4f r0, Lanes4f r1, Lanes4f r2, Lanes4f r3) {
  const Lanes4f t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);
  const Lanes4f t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
  const Lanes4f t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
  const Lanes4f t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
  return {__builtin_shufflevector(t0, t2, 0, 1, 4, 5), __builtin_shufflevector(t0, t2, 2, 3, 6, 7),
          __builtin_shufflevector(t1, t3, 0, 1, 4, 5), __builtin_shufflevector(t1, t3, 2, 3, 6, 7)};
}

static_assert(sizeof(glm::quat) == 16, "glm::quat must be four packed floats");
#if defined(GLM_FORCE_QUAT_DATA_WXYZ)
#error "quantization.cpp loads glm::quat as (x, y, z, w)"
#endif

// Quaternion `node[i]` of `rows` in lane i (rows: glm::quat laid out x, y, z, w).
[[gnu::always_inline]] inline QuatLanes gather(const glm::quat* rows, const int32_t* node) {
  return transpose(load_lanes(&rows[node[0]].x), load_lanes(&rows[node[1]].x),
                   load_lanes(&rows[node[2]].x), load_lanes(&rows[node[3]].x));
}

// The rotation of pose[node[i]] in lane i.
[[gnu::always_inline]] inline QuatLanes gather_rotations(const Transform* pose, const int32_t* node) {
  return transpose(load_lanes(&pose[node[0]].rotation.x), load_lanes(&pose[node[1]].rotation.x),
                   load_lanes(&pose[node[2]].rotation.x), load_lanes(&pose[node[3]].rotation.x));
}

// Lane i of q into rows[node[i]] (lanes that repeat a node write the same value twice).
[[gnu::always_inline]] inline void scatter(const QuatLanes& q, const int32_t* node, glm::quat* rows) {
  const QuatLanes r = transpose(q.x, q.y, q.z, q.w);
  std::memcpy(&rows[node[0]].x, &r.x, sizeof r.x);
  std::memcpy(&rows[node[1]].x, &r.y, sizeof r.y);
  std::memcpy(&rows[node[2]].x, &r.z, sizeof r.z);
  std::memcpy(&rows[node[3]].x, &r.w, sizeof r.w);
}

[[gnu::always_inline]] inline QuatLanes load_quat_lanes(const float (&q)[4][4]) {
  return {load_lanes(q[0]), load_lanes(q[1]), load_lanes(q[2]), load_lanes(q[3])};
}

}  // namespace

PoseQuantizer::PoseQuantizer(const PoseFormat& format)
    : format_(format),
      coded_local_(format.node_count(), glm::quat(1.0f, 0.0f, 0.0f, 0.0f)),
      true_world_(format.compensated ? format.node_count() : 0, glm::quat(1.0f, 0.0f, 0.0f, 0.0f)),
      coded_world_(format.compensated ? format.node_count() : 0, glm::quat(1.0f, 0.0f, 0.0f, 0.0f)) {
  const std::size_t count = format.node_count();
  valid_format_ = format.rest.size() == count && format.precision.size() == count &&
                  format.channels.size() == count;
  for (std::size_t n = 0; n < count && valid_format_; ++n) {
    valid_format_ = format.parents[n] < static_cast<int>(n);
  }
  if (!valid_format_) return;

  // Depths (parents come first), then the nodes of each depth by kind, four to a group.
  std::vector<int> depth(count, 0);
  int max_depth = 0;
  for (std::size_t n = 0; n < count; ++n) {
    const int parent = format.parents[n];
    depth[n] = parent < 0 ? 0 : depth[static_cast<std::size_t>(parent)] + 1;
    max_depth = std::max(max_depth, depth[n]);
  }
  auto kind_of = [&](std::size_t n) {
    if (format.parents[n] < 0) return RotationGroupKind::kRoot;
    const bool compensated = format.compensated && (format.channels[n] & kChannelRotation) != 0;
    return compensated ? RotationGroupKind::kCompensated : RotationGroupKind::kChild;
  };
  const RotationGroupKind kinds[3] = {RotationGroupKind::kRoot, RotationGroupKind::kChild,
                                      RotationGroupKind::kCompensated};
  std::vector<int32_t> members;
  for (int d = 0; d <= max_depth; ++d) {
    for (const RotationGroupKind kind : kinds) {
      members.clear();
      for (std::size_t n = 0; n < count; ++n) {
        if (depth[n] == d && kind_of(n) == kind) members.push_back(static_cast<int32_t>(n));
      }
      for (std::size_t first = 0; first < members.size(); first += 4) {
        detail::RotationGroup g;
        g.kind = kind;
        for (std::size_t lane = 0; lane < 4; ++lane) {
          const int32_t node = members[std::min(first + lane, members.size() - 1)];
          const std::size_t n = static_cast<std::size_t>(node);
          const glm::quat& rest = format.rest[n].rotation;
          const glm::quat conj_rest = conjugate(rest);
          const float rest_lanes[4] = {rest.x, rest.y, rest.z, rest.w};
          const float conj_lanes[4] = {conj_rest.x, conj_rest.y, conj_rest.z, conj_rest.w};
          for (int c = 0; c < 4; ++c) {
            g.rest[c][lane] = rest_lanes[c];
            g.conj_rest[c][lane] = conj_lanes[c];
          }
          g.step[lane] = format.precision[n].rotation_step;
          g.bound[lane] = static_cast<float>(format.precision[n].rotation_limit);
          g.unanimated[lane] = (format.channels[n] & kChannelRotation) != 0 ? 0 : -1;
          g.node[lane] = node;
          g.parent[lane] = format.parents[n] < 0 ? node : format.parents[n];
        }
        groups_.push_back(g);
      }
    }
  }
}

namespace {

// The per-node work other than rotations: finiteness, translation and scale codes. False
// when the former per-node code returned false for this node's translation or scale.
[[gnu::always_inline]] inline bool quantize_node_linear(const Transform& src, const Transform& rest,
                                                        const NodePrecision& precision,
                                                        uint8_t channels, int32_t* codes,
                                                        bool& off_layout) {
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
  return true;
}

}  // namespace

namespace {

// One group of rotations (the former per-node code, lane by lane):
//   world     = parent's world * rotation                       (compensated formats)
//   target    = conj(parent's coded world) * world              (kCompensated), else rotation
//   d         = conj(rest) * target
//   axis      = the largest |d| component (w, then x, y, z on ties), or the reference's axis
//               while |d[axis]| >= half the largest; fails for a zero/NaN d
//   codes     = round(d[others] / d[axis] / step), |code| <= limit
//   unanimated rotations equal to rest take the rest codes without arithmetic
//   coded     = rest, or rest * dequantised Gibbs rotation; coded world = parent's * coded
template <RotationGroupKind kKind, bool kWorlds>
[[gnu::always_inline]] inline Mask4 quantize_rotation_group(
    const RotationGroup& g, const Transform* pose, const int32_t* reference,
    int32_t* values, glm::quat* coded_local, glm::quat* true_world, glm::quat* coded_world,
    Mask4& off_layout) {
  const QuatLanes rotation = gather_rotations(pose, g.node);
  QuatLanes target = rotation;
  QuatLanes parent_coded_world{};
  if constexpr (kWorlds) {
    QuatLanes world = rotation;
    if constexpr (kKind != RotationGroupKind::kRoot) {
      world = mul_lanes(gather(true_world, g.parent), rotation);
      parent_coded_world = gather(coded_world, g.parent);
    }
    scatter(world, g.node, true_world);
    if constexpr (kKind == RotationGroupKind::kCompensated) {
      target = mul_lanes(conjugate_lanes(parent_coded_world), world);
    }
  }
  const QuatLanes rest = load_quat_lanes(g.rest);
  const QuatLanes d = mul_lanes(load_quat_lanes(g.conj_rest), target);

  // Largest component, preferring w, then x, y, z on ties.
  const Lanes4f ax = abs_lanes(d.x), ay = abs_lanes(d.y), az = abs_lanes(d.z), aw = abs_lanes(d.w);
  Lanes4f largest = aw;
  Lanes4i axis = splat_int(3);
  Mask4 bigger = ax > largest;
  largest = select(bigger, ax, largest);
  axis = select(bigger, splat_int(0), axis);
  bigger = ay > largest;
  largest = select(bigger, ay, largest);
  axis = select(bigger, splat_int(1), axis);
  bigger = az > largest;
  largest = select(bigger, az, largest);
  axis = select(bigger, splat_int(2), axis);
  Mask4 ok = largest > splat(0.0f);  // false for a zero or NaN quaternion

  // The reference's axis while still well conditioned.
  Lanes4i reference_axis = splat_int(-1);
  if (reference != nullptr) {
    for (int lane = 0; lane < 4; ++lane) {
      reference_axis[lane] = reference[g.node[lane] * kValuesPerNode + kRotationAxis];
    }
  }
  const Lanes4f reference_magnitude =
      select(reference_axis == 0, ax,
             select(reference_axis == 1, ay, select(reference_axis == 2, az, aw)));
  const Mask4 keep_reference = (reference_axis >= 0) & (reference_axis <= 3) &
                               (reference_axis != axis) &
                               (reference_magnitude >= splat(0.5f) * largest);
  axis = select(keep_reference, reference_axis, axis);

  // Gibbs coordinates: the other components (in increasing order) over the pivot, in steps.
  const Mask4 axis0 = axis == 0, axis1 = axis == 1, axis2 = axis == 2, axis3 = axis == 3;
  const Lanes4f pivot = select(axis0, d.x, select(axis1, d.y, select(axis2, d.z, d.w)));
  const Lanes4f other0 = select(axis0, d.y, d.x);
  const Lanes4f other1 = select(axis0 | axis1, d.z, d.y);
  const Lanes4f other2 = select(axis3, d.z, d.w);
  const Lanes4f step = load_lanes(g.step);
  const Lanes4f bound = load_lanes(g.bound);
  Lanes4i codes[3];
  const Lanes4f others[3] = {other0, other1, other2};
  for (int k = 0; k < 3; ++k) {
    const Lanes4f v = (others[k] / pivot) / step;
    // round_codes3 lane by lane: half away from zero, false beyond the limit or for NaN.
    const Lanes4f magnitude = abs_lanes(v);
    const Mask4 within = magnitude <= bound;
    ok &= within;
    const Lanes4i rounded =
        __builtin_convertvector(select(within, magnitude, splat(0.0f)) + 0.5f, Lanes4i);
    const Mask4 negative = v < splat(0.0f);
    codes[k] = (rounded ^ negative) - negative;
  }

  // An unanimated rotation that holds its rest value exactly: the rest codes.
  const Mask4 unanimated = load_lanes(g.unanimated);
  if constexpr (kKind != RotationGroupKind::kCompensated) {
    const Mask4 at_rest = unanimated & (rotation.x == rest.x) & (rotation.y == rest.y) &
                          (rotation.z == rest.z) & (rotation.w == rest.w);
    axis = select(at_rest, splat_int(3), axis);
    for (Lanes4i& c : codes) c = c & ~at_rest;
    ok |= at_rest;
  }
  const Mask4 rest_codes = (axis == 3) & (codes[0] == 0) & (codes[1] == 0) & (codes[2] == 0);
  off_layout |= unanimated & ~rest_codes;

  // The codes into `values`: (axis, g0, g1, g2) of lane i at node[i]'s kRotationAxis.
  {
    const QuatLanes rows = transpose(std::bit_cast<Lanes4f>(axis), std::bit_cast<Lanes4f>(codes[0]),
                                     std::bit_cast<Lanes4f>(codes[1]), std::bit_cast<Lanes4f>(codes[2]));
    const Lanes4f row[4] = {rows.x, rows.y, rows.z, rows.w};
    for (int lane = 0; lane < 4; ++lane) {
      std::memcpy(&values[g.node[lane] * kValuesPerNode + kRotationAxis], &row[lane], sizeof row[lane]);
    }
  }

  // dequantize_rotation_inline lane by lane.
  const Lanes4f g0 = __builtin_convertvector(codes[0], Lanes4f) * step;
  const Lanes4f g1 = __builtin_convertvector(codes[1], Lanes4f) * step;
  const Lanes4f g2 = __builtin_convertvector(codes[2], Lanes4f) * step;
  const Lanes4f n = splat(1.0f) / sqrt_lanes(((splat(1.0f) + g0 * g0) + g1 * g1) + g2 * g2);
  const Lanes4f g0n = g0 * n, g1n = g1 * n, g2n = g2 * n;
  const Mask4 new_axis0 = axis == 0, new_axis1 = axis == 1, new_axis2 = axis == 2,
              new_axis3 = axis == 3;
  const QuatLanes gibbs{select(new_axis0, n, g0n),
                        select(new_axis1, n, select(new_axis0, g0n, g1n)),
                        select(new_axis2, n, select(new_axis0 | new_axis1, g1n, g2n)),
                        select(new_axis3, n, g2n)};
  const QuatLanes dequantised = mul_lanes(rest, gibbs);
  const QuatLanes coded{select(rest_codes, rest.x, dequantised.x),
                        select(rest_codes, rest.y, dequantised.y),
                        select(rest_codes, rest.z, dequantised.z),
                        select(rest_codes, rest.w, dequantised.w)};
  scatter(coded, g.node, coded_local);
  if constexpr (kWorlds) {
    if constexpr (kKind == RotationGroupKind::kRoot) {
      scatter(coded, g.node, coded_world);
    } else {
      scatter(mul_lanes(parent_coded_world, coded), g.node, coded_world);
    }
  }
  return ok;
}

}  // namespace

bool PoseQuantizer::quantize(std::span<const Transform> pose, const QuantizedPose* reference,
                             QuantizedPose& out) {
  const std::size_t count = format_.node_count();
  if (pose.size() != count || !valid_format_) return false;
  if (reference != nullptr && reference->values.size() != count * kValuesPerNode) {
    reference = nullptr;
  }
  if (out.values.size() != count * kValuesPerNode) out.values.resize(count * kValuesPerNode);
  bool off_layout = false;
  for (std::size_t n = 0; n < count; ++n) {
    if (!quantize_node_linear(pose[n], format_.rest[n], format_.precision[n], format_.channels[n],
                              &out.values[n * kValuesPerNode], off_layout)) {
      return false;
    }
  }
  // Reading the reference's axis of a group before writing its codes keeps `reference` ==
  // &out working as before (each node's axis is read before its own codes are written).
  const int32_t* reference_values = reference != nullptr ? reference->values.data() : nullptr;
  int32_t* values = out.values.data();
  Mask4 ok = splat_int(-1);
  Mask4 rotation_off_layout = splat_int(0);
  for (const detail::RotationGroup& g : groups_) {
    if (format_.compensated) {
      switch (g.kind) {
        case RotationGroupKind::kRoot:
          ok &= quantize_rotation_group<RotationGroupKind::kRoot, true>(
              g, pose.data(), reference_values, values, coded_local_.data(), true_world_.data(),
              coded_world_.data(), rotation_off_layout);
          break;
        case RotationGroupKind::kChild:
          ok &= quantize_rotation_group<RotationGroupKind::kChild, true>(
              g, pose.data(), reference_values, values, coded_local_.data(), true_world_.data(),
              coded_world_.data(), rotation_off_layout);
          break;
        case RotationGroupKind::kCompensated:
          ok &= quantize_rotation_group<RotationGroupKind::kCompensated, true>(
              g, pose.data(), reference_values, values, coded_local_.data(), true_world_.data(),
              coded_world_.data(), rotation_off_layout);
          break;
      }
    } else {
      ok &= quantize_rotation_group<RotationGroupKind::kChild, false>(
          g, pose.data(), reference_values, values, coded_local_.data(), nullptr, nullptr,
          rotation_off_layout);
    }
  }
  if (!(ok[0] & ok[1] & ok[2] & ok[3])) return false;
  out.off_layout = off_layout || (rotation_off_layout[0] | rotation_off_layout[1] |
                                  rotation_off_layout[2] | rotation_off_layout[3]) != 0;
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
