#pragma once
// Private to posecast_core: four and eight float lanes for the per-tick jobs, as GCC/Clang
// generic vectors (SSE or AVX on x86-64, NEON on aarch64, plain scalar code at -O0).
//
// Determinism: lane i of every operation here is the single IEEE float operation a scalar
// expression would perform (+, -, *, / and sqrt, all exactly rounded), and selects, shuffles
// and bit masks move bits without arithmetic, so vector code gives the same bits as the same
// scalar expression, evaluated in the same order, on any compiler or CPU. -ffp-contract=off
// (set project-wide) keeps multiply-adds unfused; nothing here may use an estimate
// instruction (rcp, rsqrt).

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__SSE__)
#include <xmmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif

// Passing 32-byte vectors by value has a different ABI with and without AVX, and the hot
// kernels are compiled for both (POSECAST_HOT_CLONES below), so every helper taking or
// returning vectors is POSECAST_INLINE (always inlined, even at -O0): no vector ever crosses a
// call boundary, and the compilers' -Wpsabi notes about it do not apply. (They stay off for
// the rest of the including .cpp file, which exports no vector-typed functions either.)
#define POSECAST_INLINE [[gnu::always_inline]] inline
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace posecast::detail {

using Float4 = float __attribute__((vector_size(16)));
using Int4 = int32_t __attribute__((vector_size(16)));  // lane masks: all ones or all zeros

// Eight lanes: two matrix columns side by side (see affine_kernels.h).
using Float8 = float __attribute__((vector_size(32)));
using Int8 = int32_t __attribute__((vector_size(32)));

// Lane permutation of one vector by constant indices.
#define POSECAST_SHUFFLE(v, ...) __builtin_shufflevector((v), (v), __VA_ARGS__)

POSECAST_INLINE Float4 splat(float v) { return Float4{v, v, v, v}; }
POSECAST_INLINE Float8 splat8(float v) { return Float8{v, v, v, v, v, v, v, v}; }
// splat_as<V>(v): v in every lane of a Float4 or Float8.
template <class V>
POSECAST_INLINE V splat_as(float v) {
  if constexpr (sizeof(V) == sizeof(Float8)) {
    return splat8(v);
  } else {
    return splat(v);
  }
}

POSECAST_INLINE Float8 load8(const float* p) {
  Float8 r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

POSECAST_INLINE void store8(float* p, Float8 v) { std::memcpy(p, &v, sizeof v); }

POSECAST_INLINE Float4 load4(const float* p) {
  Float4 r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

POSECAST_INLINE void store4(float* p, Float4 v) { std::memcpy(p, &v, sizeof v); }

// Lanewise mask ? a : b (mask lanes from a comparison: all ones or all zeros).
POSECAST_INLINE Float4 select(Int4 mask, Float4 a, Float4 b) {
  return reinterpret_cast<Float4>((reinterpret_cast<Int4>(a) & mask) |
                                  (reinterpret_cast<Int4>(b) & ~mask));
}

// Bitwise helpers for exact lane constants (and: keep bits; or: set bits).
POSECAST_INLINE Float8 and_bits(Float8 v, Int8 mask) {
  return reinterpret_cast<Float8>(reinterpret_cast<Int8>(v) & mask);
}
POSECAST_INLINE Float8 or_bits(Float8 v, Int8 bits) {
  return reinterpret_cast<Float8>(reinterpret_cast<Int8>(v) | bits);
}

POSECAST_INLINE Float8 select(Int8 mask, Float8 a, Float8 b) {
  return reinterpret_cast<Float8>((reinterpret_cast<Int8>(a) & mask) |
                                  (reinterpret_cast<Int8>(b) & ~mask));
}

// Lanewise correctly rounded square root: the same bits as std::sqrt per lane.
POSECAST_INLINE Float4 sqrt4(Float4 v) {
#if defined(__SSE__)
  return reinterpret_cast<Float4>(_mm_sqrt_ps(reinterpret_cast<__m128>(v)));
#elif defined(__ARM_NEON) && defined(__aarch64__)
  return reinterpret_cast<Float4>(vsqrtq_f32(reinterpret_cast<float32x4_t>(v)));
#else
  for (int i = 0; i < 4; ++i) v[i] = std::sqrt(v[i]);
  return v;
#endif
}

// Eight lanes as two halves (the baseline x86-64 clone has no 256-bit square root).
POSECAST_INLINE Float8 sqrt4(Float8 v) {
  const Float4 lo = sqrt4(Float4{v[0], v[1], v[2], v[3]});
  const Float4 hi = sqrt4(Float4{v[4], v[5], v[6], v[7]});
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
}

}  // namespace posecast::detail

// POSECAST_HOT_CLONES: on x86-64, compiles a hot kernel three times, for x86-64-v4 (AVX-512),
// for AVX2 and for the baseline, and picks one at load time (GCC/Clang target_clones, glibc
// ifunc). The AVX2 clone gets the VEX encodings (three-operand forms, broadcast loads); the v4
// clone also has 32 vector registers (nothing spilled and reloaded on a dependency chain, such
// as local_to_model's register-carried parent matrix), AVX-512's instructions on the same
// 256-bit vectors (ternary logic, rotates, masks), and single 512-bit instructions for a
// kernel written with 64-byte vectors (the palette hash, hash.cpp), which the other clones
// split. Neither AVX2 nor v4 changes a result: -ffp-contract=off forbids contraction into FMA,
// and every lane operation is the baseline's, so all clones give the same bits (the golden
// hashes are checked on each machine CI runs on).
// Measured on an AMD EPYC with AVX-512 (side by side, medians of pairs): the v4 clone
// against AVX2 alone, bench_animator Fox/100 0.92-0.94x the time, Fox/10000 0.95x,
// bench_sampling Fox/10000 0.93x.
// Define POSECAST_NO_TARGET_CLONES to build the baseline only (used to test that path).
#if defined(__x86_64__) && !defined(POSECAST_NO_TARGET_CLONES)
#define POSECAST_HOT_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define POSECAST_HOT_CLONES
#endif
