#pragma once
// Private to posecast_protocol, a part of pose_codec.cpp: the writers and readers the pose
// bodies call for every code (residual, rotation axis, raw bits): range-coded (RangeSink,
// RangeSource: the wire format) and bit-packed (BitSink, BitSource: the measured reference
// stage). The residual steps are inlined into the body loops. Recipes: recipe_coding.h.

#include <algorithm>
#include <bit>
#include <cstdint>

#include "posecast/protocol/bit_io.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/range_coder.h"
#include "posecast/protocol/residual_tables.h"
#include "pose_prediction.h"

namespace posecast::protocol::codec {
// Internal linkage on purpose, as when this was pose_codec.cpp itself (its top comment).
namespace {

// Residual binarisation (wire format since protocol version 4): with expected magnitude E
// (bucket m = bit length of E), the residual r is zigzag-mapped (z = 2|r| - [r < 0]: 0, -1, 1,
// -2, ... -> 0, 1, 2, 3, ...); its low s = min(m, kMaxShift) bits go raw to the side stream in
// one write, and q = z >> s is one symbol of the static table of (class, m)
// (residual_tables.h): q < 15 directly, else the escape symbol and q - 15 in Exp-Golomb in the
// side stream (the length through the escape table, residual_tables.h). One coder step per
// residual; in the "expect zero" bucket (m = 0) the whole
// residual is the symbol, and a zero residual there costs a few thousandths of a bit.
constexpr uint32_t kEscapeSymbol = SymbolTable::kSymbols - 1;
constexpr uint32_t kLongEscape = SymbolTable::kSymbols - 1;  // escape length symbol: n >= 15
constexpr uint32_t kMaxEscapeLength = 36;
constexpr uint32_t kMaxShift = 35;
constexpr uint64_t kMaxMagnitude = uint64_t{1} << 34;
constexpr uint64_t kMaxZigzag = kMaxMagnitude << 1;

// The few per-record flags stay adaptive binary decisions (their initial probabilities are
// what a steady stream sends); residuals use the static tables.
struct Models {
  BitModel axis_same{3900};
  BitModel axis_is_w{3900};
  BitModel axes_as_expected{3900};
  BitModel side_stream_omitted{4000};
  BitModel full_references{3900};
  BitModel off_layout{4000};
  BitModel has_recipe{3900};
  BitModel from_dictionary{1000};
  BitModel dictionary_inexact{3900};  // 0: the pose equals the dictionary's prediction
  BitModel recipe_crossfade{3900};    // 1: a crossfade recipe
  BitModel recipe_frozen{3900};       // 1: a crossfade from a frozen pose (after "crossfade")
  BitModel recipe_motion_same{3900};  // 0: speeds and wraps as the baseline recipe's
};

// 0, -1, 1, -2, 2, ... -> 0, 1, 2, 3, 4, ...; |v| <= 2^62.
uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t z) {
  return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
}

// How many low bits of a residual of bucket `bucket` go raw to the side stream (s above).
uint32_t shift_for(uint32_t bucket) { return std::min(bucket, kMaxShift); }

// The binarisation above for residual `r` with table `table` and shift `s`, step by step in
// coding order: `symbol(table, value)` for each symbol (of `table`, then of the escape table
// for an escape's length) and `raw(value, bits)` for each run of side-stream bits.
// RangeSink::residual codes the steps; residual_counts.cpp counts them.
template <class Symbol, class Raw>
[[gnu::always_inline]] inline void binarise_residual(const SymbolTable& table, uint32_t s,
                                                     int64_t r, Symbol&& symbol, Raw&& raw) {
  const uint64_t z = zigzag(r);
  const uint64_t q = z >> s;
  if (q < kEscapeSymbol) {
    symbol(table, static_cast<uint32_t>(q));
  } else {  // escape: v = q - 14 as its length (escape table) and its low bits (raw)
    symbol(table, kEscapeSymbol);
    const uint64_t v = q - kEscapeSymbol + 1;
    const auto n = static_cast<uint32_t>(std::bit_width(v) - 1);
    if (n < kLongEscape) {
      symbol(escape_length_table(), n);
    } else {
      symbol(escape_length_table(), kLongEscape);
      raw(n - kLongEscape, 5);
    }
    raw(v & ((uint64_t{1} << n) - 1), n);
  }
  raw(z & ((uint64_t{1} << s) - 1), s);
}

// The sinks and sources are small values (coder state + a pointer to the models): the body
// loops work on a local copy, which the compiler keeps in registers (a member of an object
// whose address escapes is reloaded after every byte store, which may alias it).
// What the body walks call (pose_body.h): a sink's residual(e, r) and axis(expected, axis), a
// source's residual(e), axis(expected) and `failed`. `models` is the record's: the caller owns
// it, fresh per record, for as long as the sink or source is used.
struct RangeSink {
  RangeEncoder rc;
  RawBitWriter raw_bits;  // residual low bits and escapes (the side stream)
  Models* models;

  // Residual `r` in the context of `e` (the binarisation above).
  [[gnu::always_inline]] void residual(const Expectation& e, int64_t r) {
    binarise_residual(
        residual_table(e.cls, e.bucket), shift_for(e.bucket), r,
        [&](const SymbolTable& table, uint32_t symbol) __attribute__((always_inline)) {
          rc.encode_symbol(table, symbol);
        },
        [&](uint64_t value, uint32_t bits) __attribute__((always_inline)) { raw(value, bits); });
  }
  // Rotation axis code `axis` (0..3), given the reference's `expected` (-1: none; w is likely).
  // Inline: encode_body_fast calls it on its local copy of the sink (see above).
  [[gnu::always_inline]] void axis(int32_t expected, int32_t axis) {
    BitModel& m = expected >= 0 ? models->axis_same : models->axis_is_w;
    const int32_t likely = expected >= 0 ? expected : 3;
    rc.encode(m, axis == likely ? 0u : 1u);
    if (axis != likely) rc.encode_direct(static_cast<uint32_t>(axis), 2);
  }
  // `n` (0..64) low bits of `v` to the side stream.
  [[gnu::always_inline]] void raw(uint64_t v, uint32_t n) {
    if (n > 32) {
      raw_bits.write(static_cast<uint32_t>(v >> 32), n - 32);
      n = 32;
    }
    raw_bits.write(static_cast<uint32_t>(v), n);
  }
  // `value` (0..2^32 - 1) as a residual from `predicted`, or its 32 bits raw when there is no
  // prediction (predicted < 0). RangeSource::predicted_or_raw reads it back.
  void predicted_or_raw(const Expectation& e, int64_t value, int64_t predicted) {
    if (predicted >= 0) {
      residual(e, value - predicted);
    } else {
      raw(static_cast<uint64_t>(value), 32);
    }
  }
  // `r` (recipe_valid), each field coded against its prediction from the baseline's recipe
  // (recipe_prediction.h; the first `references` of `ref` are usable). recipe_coding.h.
  void recipe(const PoseFormat& format, const PoseRecipe& r, const PoseReference& ref,
              int references);
};

// `n` (0..64) bits from the side stream.
[[gnu::always_inline]] inline uint64_t read_raw(RawBitReader& raw_bits, uint32_t n) {
  if (n <= 32) return raw_bits.read(n);
  const uint64_t high = raw_bits.read(n - 32);
  return (high << 32) | raw_bits.read(32);
}

// What RangeSink::residual wrote for expectation `e`; sets `failed` (and returns 0) on a
// corrupt stream. A free function of the decoder's two parts, so that a loop can keep them in
// separate locals: the side-stream reader's address escapes into its out-of-line refill(),
// which would otherwise keep the range decoder's state in memory too, on its serial chain
// (decode_body_fast).
[[gnu::always_inline]] inline int64_t decode_residual(RangeDecoder& rc, RawBitReader& raw_bits,
                                                      bool& failed, const Expectation& e) {
  const uint32_t s = shift_for(e.bucket);
  uint64_t q = rc.decode_symbol(residual_table(e.cls, e.bucket));
  if (q == kEscapeSymbol) {
    uint32_t n = rc.decode_symbol(escape_length_table());
    if (n == kLongEscape) n += static_cast<uint32_t>(read_raw(raw_bits, 5));
    if (n > kMaxEscapeLength) {
      failed = true;
      return 0;
    }
    q = kEscapeSymbol + ((uint64_t{1} << n) | read_raw(raw_bits, n)) - 1;
  }
  if (q > (kMaxZigzag >> s)) {
    failed = true;
    return 0;
  }
  return unzigzag((q << s) | read_raw(raw_bits, s));
}

// What RangeSink::axis wrote for a rotation whose reference has axis `expected` (-1: none). A
// free function of the range decoder, as decode_residual. Any bits decode to an axis (0..3).
[[gnu::always_inline]] inline int32_t decode_axis(RangeDecoder& rc, Models& models,
                                                  int32_t expected) {
  BitModel& m = expected >= 0 ? models.axis_same : models.axis_is_w;
  const int32_t likely = expected >= 0 ? expected : 3;
  if (rc.decode(m) == 0) return likely;
  return static_cast<int32_t>(rc.decode_direct(2));
}

struct RangeSource {
  RangeDecoder rc;
  RawBitReader raw_bits;
  Models* models;
  bool failed = false;

  [[gnu::always_inline]] int64_t residual(const Expectation& e) {
    return decode_residual(rc, raw_bits, failed, e);
  }
  int32_t axis(int32_t expected) { return decode_axis(rc, *models, expected); }
  // `n` (0..64) bits from the side stream.
  [[gnu::always_inline]] uint64_t raw(uint32_t n) { return read_raw(raw_bits, n); }
  // What RangeSink::predicted_or_raw wrote: `predicted` plus a residual, or 32 raw bits when
  // there is no prediction (predicted < 0). Check `failed` after.
  int64_t predicted_or_raw(const Expectation& e, int64_t predicted) {
    return predicted >= 0 ? predicted + residual(e) : static_cast<int64_t>(raw(32));
  }
  // False for a recipe that does not fit the format (shape, clip index, time, weight, fade
  // state): every count, index and range is checked before use. recipe_coding.h.
  bool recipe(const PoseFormat& format, PoseRecipe& r, const PoseReference& ref, int references);
};

// Bit-packed reference stage: zigzag residual, Exp-Golomb of order k from the same context.
uint32_t golomb_order(uint32_t bucket) { return bucket > 1 ? std::min(bucket - 1, 24u) : 0u; }

struct BitSink {
  BitWriter bits;
  void residual(const Expectation& e, int64_t r) {
    const uint64_t z = r >= 0 ? static_cast<uint64_t>(r) << 1 : (magnitude(r) << 1) - 1;
    const uint32_t k = golomb_order(e.bucket);
    bits.write_exp_golomb(z >> k, 0);
    bits.write(static_cast<uint32_t>(z & ((uint64_t{1} << k) - 1)), k);
  }
  void axis(int32_t expected, int32_t axis) {
    const int32_t likely = expected >= 0 ? expected : 3;
    bits.write_bit(axis == likely ? 0u : 1u);
    if (axis != likely) bits.write(static_cast<uint32_t>(axis), 2);
  }
};

struct BitSource {
  BitReader bits;
  bool failed = false;
  int64_t residual(const Expectation& e) {
    const uint32_t k = golomb_order(e.bucket);
    const uint64_t high = bits.read_exp_golomb(0);
    const uint64_t z = (high << k) | bits.read(k);
    if (bits.failed() || z > (kMaxMagnitude << 1)) {
      failed = true;
      return 0;
    }
    return (z & 1) ? -static_cast<int64_t>((z + 1) >> 1) : static_cast<int64_t>(z >> 1);
  }
  int32_t axis(int32_t expected) {
    const int32_t likely = expected >= 0 ? expected : 3;
    if (bits.read_bit() == 0) return likely;
    return static_cast<int32_t>(bits.read(2));
  }
};

}  // namespace
}  // namespace posecast::protocol::codec
