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
  std::uniform_int_distribution<int32_t> code(-100000, 100000), yaw(-32768, 32767), miss(-60, 60);
  const QuantizedRoot velocity{0, 0, 0, 0, 11, 0, -12, 13};
  for (int i = 0; i < 10000; ++i) {
    const QuantizedRoot base{code(rng), 0, code(rng), yaw(rng), 5 * 256, 0, 6, 7, 100, 0, 17, 255};
    const RootReference ref{&base, 3};
    const QuantizedRoot p = predict_root(ref);
    const QuantizedRoot e{p.x + miss(rng), 0, p.z - miss(rng) / 8, yaw(rng)};
    const QuantizedRoot h = hold_root(e, ref, velocity);
    EXPECT_LE(std::abs(h.x - e.x), kRootTolerance);
    EXPECT_LE(std::abs(h.z - e.z), kRootTolerance);
    int32_t dy = (h.yaw - e.yaw) & 0xFFFF;
    if (dy > 32767) dy -= 65536;
    EXPECT_LE(std::abs(dy), kRootTolerance);
    EXPECT_TRUE(root_in_range(h));
    const int32_t missed = std::abs(e.x - p.x);
    if (missed <= kRootTolerance) {
      EXPECT_EQ(h.x, p.x);
      EXPECT_EQ(h.vx, p.vx);  // kept as predicted
      EXPECT_EQ(h.fx, p.fx);
    } else if (missed <= kRootFar) {
      EXPECT_EQ(h.vx, velocity.vx);  // a drift: the World's velocity
      EXPECT_EQ(h.fx, p.fx);
    } else {
      // The motion changed: the velocity that takes the baseline to the held position.
      EXPECT_EQ(h.vx, implied_root_velocity(ref, h.x, 0));
      EXPECT_EQ(h.vx, static_cast<int32_t>(std::lround(((h.x - base.x) * 256.0 - base.fx) / 3.0)));
      EXPECT_EQ(h.fx, 0);
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
    const QuantizedRoot h = hold_root(e, ref, velocity);
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

// Bytes from a string of '0'/'1' (spaces ignored), padded with zeros.
std::vector<uint8_t> bits(const std::string& text) {
  std::vector<uint8_t> out;
  int used = 0;
  for (const char c : text) {
    if (c == ' ') continue;
    if (used == 0) out.push_back(0);
    if (c == '1') out.back() = static_cast<uint8_t>(out.back() | (0x80u >> used));
    used = (used + 1) % 8;
  }
  return out;
}

TEST(RootCoding, MalformedBytesAreRejectedWithAReason) {
  QuantizedRoot out;
  const QuantizedRoot base{1000, 0, 5, 7, 256, 0, 0, 0};
  const auto reason = [&](std::vector<uint8_t> bytes, bool with_baseline = false) {
    const RootReference ref = with_baseline ? RootReference{&base, 3} : RootReference{};
    const Status st = decode_root(bytes, ref, out);
    return st.ok() ? std::string("ok") : st.error().message;
  };
  EXPECT_NE(reason({0x00}).find("empty residual"), std::string::npos);
  EXPECT_NE(reason(std::vector<uint8_t>(32, 0xFF)).find("at most 31"), std::string::npos);
  // Fields: mask, plain, [aligned, fractions derived], order k, then per component
  // [implied] [remainder] quotient (Exp-Golomb k, sign) [velocity] [fraction].
  // x, plain, k = 0, then nothing.
  EXPECT_NE(reason(bits("1000 1 0000"), true).find("run past"), std::string::npos);
  // x, not plain, aligned, derived, k = 0, explicit, a = +1 (010, sign 0), dv = 0 (0 00000).
  const std::string good = "1000 0 1 1 0000 0 010 0 0 00000";
  EXPECT_EQ(reason(bits(good)), "ok");
  EXPECT_EQ(out.x, kRootCoarse);
  std::vector<uint8_t> longer = bits(good);
  longer.push_back(0);
  EXPECT_NE(reason(longer).find("left over"), std::string::npos);
  EXPECT_NE(reason(bits(good + "01")).find("nonzero padding"), std::string::npos);
  EXPECT_NE(reason(bits("1000 0 1 1 0000 0 1 0 00000")).find("flagged as differing, but equal"), std::string::npos);
  EXPECT_NE(reason(bits("1000 0 1 1 0000 0 1 1 00000")).find("negative zero"), std::string::npos);
  // Unaligned, remainder 15 - 6 = 9: beyond [-6, 6].
  EXPECT_NE(reason(bits("1000 0 0 1 0000 0 1111 1 0 00001")).find("remainder out of range"), std::string::npos);
  // Fractions coded, a = 0, dv = 0, df = -1 from 0.
  EXPECT_NE(reason(bits("1000 0 1 0 0000 0 1 0 00000 1 00001")).find("fraction out of range"), std::string::npos);
  EXPECT_NE(reason(bits("1000 1 0000 010 0")).find("implied without a reference"), std::string::npos);
  // Against the baseline, a = +1 with the velocity coded as exactly what the positions imply.
  // Predicted x is base.x + 3 (velocity 1 code per tick for 3 ticks); a = +1 adds 13: 16 codes
  // in 3 ticks imply 1365.33 -> 1365 = 256 + 1109 (dv: sign 0, length 11, 10 bits 0001010101).
  const int32_t implied = implied_root_velocity({&base, 3}, base.x + 3 + kRootCoarse, 0);
  ASSERT_EQ(implied, 1365);
  EXPECT_NE(reason(bits("1000 0 1 1 0000 0 010 0 0 01011 0001010101"), true).find("positions imply"), std::string::npos);
  EXPECT_NE(reason(bits("1000 0 1 1 0000 1 010 0"), true).find("not marked plain"), std::string::npos);
  EXPECT_EQ(reason(bits("1000 1 0000 010 0"), true), "ok");
  EXPECT_EQ(out.vx, implied);
  // Random bytes: an error or an in-range root, never a crash.
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes(1 + rng() % 12);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    const QuantizedRoot random_base{static_cast<int32_t>(rng() % 1000), 0, 5, 7};
    if (decode_root(bytes, RootReference{&random_base, 2}, out).ok()) {
      EXPECT_TRUE(root_in_range(out));
    }
  }
}

}  // namespace
}  // namespace posecast::protocol
