// Root transforms on the wire (root_coding.h): quantisation bounds, the shared predictor, the
// held-value rule, byte costs and hostile bytes.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "posecast/protocol/root_coding.h"

namespace posecast::protocol {
namespace {

constexpr float kPi = 3.14159265f;


// The held value a receiver ends with equals the sender's, and costs the bytes appended.
std::size_t round_trip(const QuantizedRoot& held, const RootReference& ref) {
  std::vector<uint8_t> bytes;
  const std::size_t n = encode_root(held, ref, bytes);
  EXPECT_EQ(n, bytes.size());
  EXPECT_LE(n, kMaxRootBytes);
  QuantizedRoot decoded;
  const Status st = decode_root(bytes, ref, decoded);
  EXPECT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(decoded, held);
  return n;
}

TEST(RootCoding, QuantisesWithinAMillimetreAndATwentiethOfADegree) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> pos(-16384.0f, 16384.0f), yaw(-kPi, kPi);
  for (int i = 0; i < 10000; ++i) {
    const RootValue v{pos(rng), 0.0f, pos(rng), yaw(rng)};
    QuantizedRoot q;
    ASSERT_TRUE(quantize_root(v, q));
    const RootValue back = dequantize_root(q);
    // Float positions near 16384 are themselves only 0.002 apart: the bound is a step or one
    // float ulp of the value, whichever is larger.
    const float ulp = std::nextafter(std::fabs(v.x) + 1.0f, 1e9f) - (std::fabs(v.x) + 1.0f);
    EXPECT_LE(std::fabs(back.x - v.x), std::max(0.5f * kRootStep, ulp) * 1.01f);
    float dyaw = std::fabs(back.yaw - v.yaw);
    if (dyaw > kPi) dyaw = 2 * kPi - dyaw;
    EXPECT_LE(dyaw, 0.5f * 2 * kPi / kRootYawCodesPerTurn * 1.01f);
  }
}

TEST(RootCoding, RefusesNonFiniteAndOutOfRangeValues) {
  QuantizedRoot q;
  EXPECT_FALSE(quantize_root(RootValue{NAN, 0, 0, 0}, q));
  EXPECT_FALSE(quantize_root(RootValue{0, 0, INFINITY, 0}, q));
  EXPECT_FALSE(quantize_root(RootValue{0, 0, 0, NAN}, q));
  EXPECT_FALSE(quantize_root(RootValue{1e9f, 0, 0, 0}, q));
  EXPECT_TRUE(quantize_root(RootValue{16384.0f, 0, -16384.0f, 3.0f}, q));
}

TEST(RootCoding, HeldValueStaysWithinToleranceAndUsesThePrediction) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> code(-100000, 100000), yaw(-32768, 32767);
  const QuantizedRoot velocity{0, 0, 0, 0, 11, 0, -12, 13};
  for (int i = 0; i < 10000; ++i) {
    const QuantizedRoot e{code(rng), 0, code(rng), yaw(rng)};
    const QuantizedRoot p{e.x + code(rng) % 10, 0, e.z - code(rng) % 4, yaw(rng), 5, 0, 6, 7};
    const QuantizedRoot h = hold_root(e, p, velocity);
    EXPECT_LE(std::abs(h.x - e.x), kRootTolerance);
    EXPECT_LE(std::abs(h.z - e.z), kRootTolerance);
    int32_t dy = (h.yaw - e.yaw) & 0xFFFF;
    if (dy > 32767) dy -= 65536;
    EXPECT_LE(std::abs(dy), kRootTolerance);
    EXPECT_TRUE(root_in_range(h));
    if (std::abs(e.x - p.x) <= kRootTolerance) {
      EXPECT_EQ(h.x, p.x);
      EXPECT_EQ(h.vx, p.vx);  // kept as predicted
    } else {
      EXPECT_EQ(h.vx, velocity.vx);  // corrected: the World's velocity
    }
  }
}

// One entity's held roots over `ticks` snapshots every `interval` ticks, as the server makes
// them (canonical reference: the previous snapshot) and a client decodes them; mean bytes per
// record after the first (absolute) one.
template <class Path>
double mean_root_bytes(int snapshots, uint32_t interval, Path path) {
  QuantizedRoot held;
  std::vector<RootValue> exact_history;
  std::size_t bytes = 0;
  for (int s = 0; s < snapshots; ++s) {
    const RootValue now = path(s * static_cast<int>(interval));
    QuantizedRoot e;
    EXPECT_TRUE(quantize_root(now, e));
    const RootReference ref = s == 0 ? RootReference{} : RootReference{&held, interval};
    const uint32_t back = std::min<uint32_t>(static_cast<uint32_t>(s), kRootVelocitySpan / interval);
    const QuantizedRoot velocity =
        back == 0 ? QuantizedRoot{} : measure_root_velocity(now, exact_history[s - back], back * interval);
    const QuantizedRoot h = hold_root(e, predict_root(ref), velocity);
    const std::size_t n = round_trip(h, ref);
    if (s > 0) bytes += n;
    held = h;
    exact_history.push_back(now);
  }
  return static_cast<double>(bytes) / (snapshots - 1);
}

// A character walking straight lines at constant speed for 10 s: the held state follows the
// prediction with no bytes nearly every snapshot. (Far from the origin a float position is
// itself only a few codes exact: 2^-13 units at 64, 2^-6 at 131072.)
TEST(RootCoding, SteadyWalkCostsAlmostNothing) {
  for (const float speed : {1.37f, 30.0f, 80.0f}) {
    const double mean = mean_root_bytes(200, 3, [speed](int tick) {
      const float s = speed * static_cast<float>(tick) / 60.0f;
      return RootValue{3.0f + 0.6f * s, 0.0f, -2.0f + 0.8f * s, 0.6435f};
    });
    EXPECT_LT(mean, 0.25) << "speed " << speed;
    std::printf("straight walk at %.2f units/s: %.3f root bytes per record\n", static_cast<double>(speed), mean);
  }
}

TEST(RootCoding, MalformedBytesAreRejectedWithAReason) {
  QuantizedRoot out;
  const auto reason = [&](std::vector<uint8_t> bytes) {
    const Status st = decode_root(bytes, RootReference{}, out);
    return st.ok() ? std::string("ok") : st.error().message;
  };
  EXPECT_NE(reason({0x00}).find("empty residual"), std::string::npos);
  EXPECT_NE(reason(std::vector<uint8_t>(32, 0xFF)).find("at most 31"), std::string::npos);
  EXPECT_NE(reason({0x8C}).find("run past"), std::string::npos);  // x, aligned, kept, then nothing
  // x, aligned, fractions kept, a = +1 (0 00001), dv = 0 (0 00000):
  // 1000 1 1 000001 000000 -> 10001100 00010000 00xxxxxx.
  EXPECT_EQ(reason({0x8C, 0x10, 0x00}), "ok");
  EXPECT_NE(reason({0x8C, 0x10, 0x00, 0x00}).find("left over"), std::string::npos);
  EXPECT_NE(reason({0x8C, 0x10, 0x01}).find("nonzero padding"), std::string::npos);
  // x, aligned, kept, a = 0, dv = 0: flagged but equal.
  EXPECT_NE(reason({0x8C, 0x00, 0x00}).find("flagged as differing, but equal"), std::string::npos);
  // x, aligned, kept, negative zero: 1000 1 1 1 00000.
  EXPECT_NE(reason({0x8E, 0x00}).find("negative zero"), std::string::npos);
  // x, unaligned, kept, remainder 3 (out of [-1, 1]): 1000 0 1 11 ...
  EXPECT_NE(reason({0x87, 0x00}).find("remainder out of range"), std::string::npos);
  // x, aligned, fractions coded, a = 0, dv = 0, df = -1 (from 0): 1000 1 0 000000 000000 1 00001.
  EXPECT_NE(reason({0x88, 0x00, 0x21}).find("fraction out of range"), std::string::npos);
  // Random bytes: an error or an in-range root, never a crash.
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes(1 + rng() % 12);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    const QuantizedRoot base{static_cast<int32_t>(rng() % 1000), 0, 5, 7};
    if (decode_root(bytes, RootReference{&base, 2}, out).ok()) {
      EXPECT_TRUE(root_in_range(out));
    }
  }
}

}  // namespace
}  // namespace posecast::protocol
