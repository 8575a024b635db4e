// Range coder and bit packing: exact round trips, compact flush, safe on garbage.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "posecast/protocol/bit_io.h"
#include "posecast/protocol/range_coder.h"
#include "posecast/protocol/residual_tables.h"
#include "protocol_rigs.h"

namespace posecast::protocol {
namespace {

struct Symbol {
  bool direct = false;
  uint32_t model = 0;  // adaptive: model index
  uint32_t value = 0;  // adaptive: bit; direct: value
  uint32_t bits = 0;   // direct: bit count
};

std::vector<Symbol> random_symbols(test::TestRng& rng, std::size_t count) {
  std::vector<Symbol> symbols;
  for (std::size_t i = 0; i < count; ++i) {
    Symbol s;
    s.direct = rng() % 4 == 0;
    if (s.direct) {
      s.bits = rng() % 25;
      s.value = s.bits == 0 ? 0 : static_cast<uint32_t>(rng()) & ((1u << s.bits) - 1u);
    } else {
      s.model = rng() % 8;
      // Skewed bits so the models adapt.
      s.value = (rng() % 10) < s.model ? 1u : 0u;
    }
    symbols.push_back(s);
  }
  return symbols;
}

TEST(RangeCoder, RoundTripsAdaptiveAndDirectBits) {
  test::TestRng rng{7};
  for (int trial = 0; trial < 200; ++trial) {
    const auto symbols = random_symbols(rng, rng() % 300);
    std::vector<uint8_t> bytes = {0xEE};  // something before the stream: must be left alone
    {
      BitModel models[8];
      RangeEncoder enc(bytes);
      for (const Symbol& s : symbols) {
        if (s.direct) enc.encode_direct(s.value, s.bits);
        else enc.encode(models[s.model], s.value);
      }
      enc.finish();
    }
    ASSERT_EQ(bytes[0], 0xEE);
    BitModel models[8];
    RangeDecoder dec(std::span<const uint8_t>(bytes).subspan(1));
    for (const Symbol& s : symbols) {
      const uint32_t got = s.direct ? dec.decode_direct(s.bits) : dec.decode(models[s.model]);
      ASSERT_EQ(got, s.value) << "trial " << trial;
    }
    EXPECT_GE(dec.consumed(), bytes.size() - 1) << "the decoder reads every byte written";
  }
}

TEST(RangeCoder, EmptyStreamIsZeroBytesAndFlushIsCompact) {
  std::vector<uint8_t> bytes;
  {
    RangeEncoder enc(bytes);
    enc.finish();
  }
  EXPECT_TRUE(bytes.empty());
  // One highly probable bit costs well under a byte plus at most one flush byte.
  std::vector<uint8_t> one;
  {
    BitModel m(4000);
    RangeEncoder enc(one);
    enc.encode(m, 0);
    enc.finish();
  }
  EXPECT_LE(one.size(), 1u);
}

TEST(RangeCoder, SkewedBitsCompressBelowOneBitEach) {
  std::vector<uint8_t> bytes;
  BitModel m;
  {
    RangeEncoder enc(bytes);
    for (int i = 0; i < 8000; ++i) enc.encode(m, i % 20 == 0 ? 1u : 0u);
    enc.finish();
  }
  // Entropy of p = 0.05 is 0.286 bits: 8000 bits -> ~286 bytes; allow adaptation overhead.
  EXPECT_LT(bytes.size(), 400u);
}

TEST(RangeCoder, DecodingGarbageTerminatesWithoutFaults) {
  test::TestRng rng{99};
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<uint8_t> garbage(rng() % 40);
    for (auto& b : garbage) b = static_cast<uint8_t>(rng());
    RangeDecoder dec(garbage);
    BitModel m[4];
    for (int i = 0; i < 200; ++i) {
      if (i % 3 == 0) (void)dec.decode_direct(static_cast<uint32_t>(rng() % 25));
      else (void)dec.decode(m[i % 4]);
    }
    EXPECT_LE(dec.consumed(), garbage.size());
  }
}

TEST(RangeCoder, StreamFlushedForFollowingBytesDecodesWhateverFollows) {
  test::TestRng rng{11};
  for (int trial = 0; trial < 300; ++trial) {
    const auto symbols = random_symbols(rng, rng() % 200);
    std::vector<uint8_t> bytes;
    {
      BitModel models[8];
      RangeEncoder enc(bytes);
      for (const Symbol& s : symbols) {
        if (s.direct) enc.encode_direct(s.value, s.bits);
        else enc.encode(models[s.model], s.value);
      }
      enc.finish(/*bytes_follow=*/true);
    }
    const std::size_t stream_size = bytes.size();
    for (int tail = 0; tail < 3; ++tail) {
      std::vector<uint8_t> message = bytes;
      for (int i = 0; i < 6; ++i) message.push_back(static_cast<uint8_t>(tail == 0 ? 0xFF : rng()));
      BitModel models[8];
      RangeDecoder dec(message);
      for (const Symbol& s : symbols) {
        const uint32_t got = s.direct ? dec.decode_direct(s.bits) : dec.decode(models[s.model]);
        ASSERT_EQ(got, s.value) << "trial " << trial << " tail " << tail;
      }
      EXPECT_GE(dec.consumed(), stream_size) << "the decoder reads every byte written";
    }
  }
}

// ---------- static symbol tables (the residual coding) ----------

// Draws a symbol with roughly the probabilities of `table` (slot -> symbol through start[]).
uint32_t draw(test::TestRng& rng, const SymbolTable& table) {
  const uint32_t slot = rng() % SymbolTable::kTotal;
  uint32_t s = 0;
  while (slot >= table.start[s + 1]) ++s;
  return s;
}

TEST(SymbolTable, BuildsCumulativeFrequenciesAndADecoderLookupThatNeverOvershoots) {
  uint16_t freq[SymbolTable::kSymbols];
  for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s) freq[s] = 256;
  freq[0] = 4096 - 15 * 256 + 200;
  freq[1] = 56;  // shorter than one lookup entry: the lookup must correct upwards
  const SymbolTable t = make_symbol_table(freq);
  ASSERT_EQ(t.start[SymbolTable::kSymbols], SymbolTable::kTotal);
  for (uint32_t v = 0; v < SymbolTable::kTotal; ++v) {
    const uint32_t entry = t.lut[v >> SymbolTable::kLutShift];
    const uint32_t guess = entry & 15u;
    EXPECT_LE(t.start[guess], v) << "lookup for slot " << v << " overshoots";
    EXPECT_EQ((entry >> 4) & 0xFFFu, t.start[guess]);
    EXPECT_EQ(entry >> 16, t.freq[guess]);
  }
  uint16_t zero[SymbolTable::kSymbols] = {};
  zero[0] = 4096;
  EXPECT_EQ(make_symbol_table(zero).start[SymbolTable::kSymbols], 0) << "a zero frequency is refused";
  uint16_t short_sum[SymbolTable::kSymbols];
  for (auto& f : short_sum) f = 100;
  EXPECT_EQ(make_symbol_table(short_sum).start[SymbolTable::kSymbols], 0) << "sum != 4096 is refused";
}

TEST(SymbolTable, EveryResidualTableIsComplete) {
  for (uint32_t c = 0; c < kResidualClasses; ++c) {
    for (uint32_t b = 0; b < kResidualBuckets + 3; ++b) {
      const SymbolTable& t = residual_table(c, b);
      EXPECT_EQ(t.start[SymbolTable::kSymbols], SymbolTable::kTotal) << "class " << c << " bucket " << b;
      for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s) EXPECT_GE(t.freq[s], 1u);
    }
  }
  EXPECT_EQ(escape_length_table().start[SymbolTable::kSymbols], SymbolTable::kTotal);
}

TEST(RangeCoder, RoundTripsStaticSymbolsMixedWithAdaptiveAndDirectBits) {
  test::TestRng rng{21};
  for (int trial = 0; trial < 200; ++trial) {
    struct Step {
      int kind;  // 0 symbol, 1 adaptive bit, 2 direct bits
      uint32_t table, value, bits;
    };
    std::vector<Step> steps(rng() % 400);
    for (Step& st : steps) {
      st.kind = static_cast<int>(rng() % 3);
      st.table = rng() % (kResidualClasses * kResidualBuckets);
      st.bits = rng() % 17;
      const SymbolTable& t = residual_table(st.table / kResidualBuckets, st.table % kResidualBuckets);
      st.value = st.kind == 0   ? (rng() % 8 == 0 ? rng() % SymbolTable::kSymbols : draw(rng, t))
                 : st.kind == 1 ? rng() % 3 == 0
                                : rng() & ((1u << st.bits) - 1u);
    }
    for (bool follow : {false, true}) {
      std::vector<uint8_t> bytes = {0xAB};
      {
        BitModel m;
        RangeEncoder enc(bytes);
        for (const Step& st : steps) {
          const SymbolTable& t = residual_table(st.table / kResidualBuckets, st.table % kResidualBuckets);
          if (st.kind == 0) enc.encode_symbol(t, st.value);
          else if (st.kind == 1) enc.encode(m, st.value);
          else enc.encode_direct(st.value, st.bits);
        }
        enc.finish(follow);
      }
      ASSERT_EQ(bytes[0], 0xAB);
      std::vector<uint8_t> message(bytes.begin() + 1, bytes.end());
      if (follow) message.insert(message.end(), {0xFF, 0x13, 0x77});
      BitModel m;
      RangeDecoder dec(message);
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const Step& st = steps[i];
        const SymbolTable& t = residual_table(st.table / kResidualBuckets, st.table % kResidualBuckets);
        const uint32_t got = st.kind == 0   ? dec.decode_symbol(t)
                             : st.kind == 1 ? dec.decode(m)
                                            : dec.decode_direct(st.bits);
        ASSERT_EQ(got, st.value) << "trial " << trial << " step " << i << " follow " << follow;
      }
    }
  }
}

TEST(RangeCoder, LikelySymbolsCostTheirEntropy) {
  // The dictionary tables' "zero" symbol (p ~ 0.996): 5000 of them in a few bytes.
  const SymbolTable& t = residual_table(4, 0);  // T, dictionary, bucket 0
  std::vector<uint8_t> bytes;
  {
    RangeEncoder enc(bytes);
    for (int i = 0; i < 5000; ++i) enc.encode_symbol(t, 0);
    enc.finish();
  }
  const double bits = 5000.0 * std::log2(double(SymbolTable::kTotal) / t.freq[0]);
  EXPECT_LE(bytes.size(), static_cast<std::size_t>(bits / 8.0) + 3);
}

TEST(RangeCoder, DecodingGarbageSymbolsTerminatesInRange) {
  test::TestRng rng{123};
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> garbage(rng() % 64);
    for (auto& b : garbage) b = static_cast<uint8_t>(trial % 7 == 0 ? 0xFF : rng());
    RangeDecoder dec(garbage);
    BitModel m;
    for (int i = 0; i < 300; ++i) {
      const uint32_t c = rng() % kResidualClasses, b = rng() % (kResidualBuckets + 2);
      if (i % 5 == 0) {
        (void)dec.decode(m);
      } else {
        const uint32_t s = dec.decode_symbol(i % 7 == 0 ? escape_length_table() : residual_table(c, b));
        ASSERT_LT(s, SymbolTable::kSymbols);
      }
    }
    EXPECT_LE(dec.consumed(), garbage.size());
  }
}

TEST(RawBits, RoundTripFromTheEndOfAMessageAfterARangeCodedStream) {
  test::TestRng rng{5};
  std::vector<uint8_t> scratch;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::pair<uint32_t, uint32_t>> raw;  // value, bits
    std::vector<uint8_t> message = {0x12, 0x34};      // stands for a range-coded stream
    RawBitWriter writer(scratch);
    const std::size_t count = rng() % 100;
    for (std::size_t i = 0; i < count; ++i) {
      const uint32_t n = rng() % 33;
      const uint32_t v = n == 0 ? 0 : static_cast<uint32_t>(rng()) >> (32 - n);
      writer.write(v, n);
      raw.emplace_back(v, n);
    }
    uint32_t total_bits = 0;
    for (const auto& r : raw) total_bits += r.second;
    EXPECT_EQ(writer.empty(), total_bits == 0);
    writer.append_reversed(message);
    ASSERT_EQ(message.size(), 2u + (total_bits + 7) / 8);
    ASSERT_EQ(message[0], 0x12);
    RawBitReader reader(message);
    for (const auto& r : raw) ASSERT_EQ(reader.read(r.second), r.first) << "trial " << trial;
    EXPECT_EQ(reader.bytes_read(), (total_bits + 7) / 8);
  }
}

TEST(RawBits, ReadingPastTheMessageStartGivesZerosAndCountsThem) {
  const std::vector<uint8_t> message = {0xAB};
  RawBitReader reader(message);
  EXPECT_EQ(reader.read(8), 0xABu);
  EXPECT_EQ(reader.read(32), 0u);
  EXPECT_EQ(reader.consumed_bytes(), 1u);
  EXPECT_GT(reader.overrun(), 0u);
  RawBitReader empty(std::span<const uint8_t>{});
  EXPECT_EQ(empty.read(17), 0u);
  EXPECT_EQ(empty.consumed_bytes(), 0u);
}

TEST(BitIo, RoundTripsFixedWidthAndExpGolomb) {
  test::TestRng rng{3};
  std::vector<uint8_t> bytes;
  std::vector<std::pair<uint64_t, uint32_t>> fixed, golomb;
  BitWriter w(bytes);
  for (int i = 0; i < 1000; ++i) {
    const uint32_t n = rng() % 33;
    const uint32_t v = n == 0 ? 0 : (n == 32 ? static_cast<uint32_t>(rng()) : static_cast<uint32_t>(rng()) & ((1u << n) - 1));
    w.write(v, n);
    fixed.emplace_back(v, n);
    const uint32_t k = rng() % 8;
    const uint64_t g = (uint64_t{rng()} << 6) >> (rng() % 38);
    w.write_exp_golomb(g, k);
    golomb.emplace_back(g, k);
  }
  BitReader r(bytes);
  for (std::size_t i = 0; i < fixed.size(); ++i) {
    ASSERT_EQ(r.read(fixed[i].second), fixed[i].first);
    ASSERT_EQ(r.read_exp_golomb(golomb[i].second), golomb[i].first);
  }
  EXPECT_FALSE(r.failed());
  EXPECT_EQ(r.bytes_consumed(), bytes.size());
}

TEST(BitIo, ReadingPastTheEndFailsAndReturnsZeros) {
  const std::vector<uint8_t> bytes = {0xFF};
  BitReader r(bytes);
  EXPECT_EQ(r.read(8), 0xFFu);
  EXPECT_FALSE(r.failed());
  EXPECT_EQ(r.read(4), 0u);
  EXPECT_TRUE(r.failed());
  const std::vector<uint8_t> zeros(20, 0);
  BitReader z(zeros);
  EXPECT_EQ(z.read_exp_golomb(0), 0u);  // 160 leading zeros: longer than any valid code
  EXPECT_TRUE(z.failed());
}

}  // namespace
}  // namespace posecast::protocol
