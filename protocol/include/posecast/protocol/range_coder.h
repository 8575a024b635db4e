#pragma once
// Adaptive binary range coder (the LZMA design: 32-bit range, carry propagation through a
// cached byte, 12-bit probabilities), used by the pose codec for its residuals.
//
// Two additions for short messages (one entity's pose is often under 100 bytes):
//  - the always-zero first byte of an LZMA stream is not written;
//  - finish() picks the value in the final interval with the most trailing zero bits and
//    drops trailing zero bytes: the decoder reads zeros past the end of its input.
// Together they save 2-4 bytes per stream.
//
// Equiprobable bits in bulk (a residual's low bits) can go to a side stream instead
// (RawBitWriter/RawBitReader): stored after the range-coded bytes, byte-reversed, so the
// decoder reads it from the end of the message while the range decoder reads from the start,
// and neither needs to know where the other ends. Reading raw bits is then a shift and a mask,
// off the range decoder's serial dependency chain (its direct bits need a division). The range
// stream is then flushed with finish(/*bytes_follow=*/true): any bytes may follow it.
//
// Besides adaptive binary decisions, the coder takes symbols from static multi-symbol tables
// (SymbolTable: 16 symbols, frequencies in 1/4096, fixed at build time and known to both
// sides): one coder step per symbol and no model update, where adaptive binarisation needs a
// step, a model update and a hard-to-predict branch per binary decision.
//
// The decoders are safe on any input: reads past the end yield zero bytes (counted, so the
// caller can reject a stream that needed more than it had), and every decision terminates.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace posecast::protocol {

// Probability that the next bit is 0, in 1/4096. Adapts by 1/2^shift of the error per bit.
struct BitModel {
  static constexpr uint32_t kBits = 12;
  static constexpr uint32_t kOne = 1u << kBits;
  uint16_t p0 = kOne / 2;

  BitModel() = default;
  explicit constexpr BitModel(uint16_t initial_p0) : p0(initial_p0) {}
};

// Adaptation speed: 4 learns within a few dozen symbols, which is what one pose offers.
inline constexpr uint32_t kBitModelShift = 4;

// A static distribution over 16 symbols, frequencies summing to 4096 (each >= 1, so every
// symbol stays codable). Built by make_symbol_table(); integers only, so both sides code
// bit-identically on every machine.
struct SymbolTable {
  static constexpr uint32_t kSymbols = 16;
  static constexpr uint32_t kBits = 12;
  static constexpr uint32_t kTotal = 1u << kBits;
  static constexpr uint32_t kLutShift = 4;  // the decoder's lookup: one entry per 16 slots
  uint16_t start[kSymbols + 1] = {};        // cumulative frequency; start[kSymbols] == kTotal
  uint16_t freq[kSymbols] = {};
  // lut[v >> kLutShift] describes the symbol whose interval holds slot v & ~15, packed so the
  // decoder needs one load on its serial chain: symbol (bits 0-3), its start (bits 4-15) and
  // its frequency (bits 16-28). When v lies past that interval the decoder steps upwards
  // through start[] (only symbols that start inside those 16 slots: rare ones).
  uint32_t lut[kTotal >> kLutShift] = {};
};

// The table of `freq` (kSymbols entries), or an all-zero table (start[kSymbols] == 0) when the
// frequencies do not sum to kTotal or one is 0. constexpr: tables are built at compile time.
constexpr SymbolTable make_symbol_table(const uint16_t* freq) {
  SymbolTable t;
  uint32_t sum = 0;
  for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s) {
    if (freq[s] == 0) return SymbolTable{};
    t.freq[s] = freq[s];
    t.start[s] = static_cast<uint16_t>(sum);
    sum += freq[s];
    if (sum > SymbolTable::kTotal) return SymbolTable{};
  }
  if (sum != SymbolTable::kTotal) return SymbolTable{};
  t.start[SymbolTable::kSymbols] = static_cast<uint16_t>(sum);
  uint32_t s = 0;
  for (uint32_t slot = 0; slot < SymbolTable::kTotal; slot += 1u << SymbolTable::kLutShift) {
    while (slot >= t.start[s + 1]) ++s;
    t.lut[slot >> SymbolTable::kLutShift] =
        s | (uint32_t{t.start[s]} << 4) | (uint32_t{t.freq[s]} << 16);
  }
  return t;
}

// Where a writer that grew its vector goes on writing: the next byte and the end of the
// vector's size (RangeEncoder::grow, RawBitWriter::grow).
struct WriteRoom {
  uint8_t* next;
  uint8_t* end;
};

class RangeEncoder {
 public:
  // Appends to `out` (not cleared), which must outlive the encoder and must not be touched
  // until finish() returns: the encoder writes through a raw pointer into `out`, grown ahead
  // in chunks (no push_back per byte), and finish() trims it to the bytes written. An encoder
  // dropped without finish() leaves unspecified bytes after the old end: resize `out` back.
  explicit RangeEncoder(std::vector<uint8_t>& out) : RangeEncoder(out, out) {}

  // The same stream, written into `scratch` first (its contents are overwritten; it must
  // outlive the encoder) and appended to `out` by finish(); `scratch` may also be `out`
  // itself, which is the constructor above. A scratch kept from one stream to the next is not
  // grown (zero-filled) again: for many short streams, such as the pose codec's records,
  // growing `out` by a chunk each time costs about 1 % of an encode (perf). With a
  // separate scratch, an encoder dropped without finish() leaves `out` as it was.
  RangeEncoder(std::vector<uint8_t>& out, std::vector<uint8_t>& scratch)
      : out_(scratch), stream_start_(&scratch == &out ? out.size() : 0), destination_(&out) {
    if (out_.size() < stream_start_ + kChunk) out_.resize(stream_start_ + kChunk);
    next_ = out_.data() + stream_start_;
    end_ = out_.data() + out_.size();
  }

  // Written without data-dependent branches (the bit is as good as random to the branch
  // predictor); compilers turn the selects into conditional moves.
  [[gnu::always_inline]] void encode(BitModel& model, uint32_t bit) {
    const uint32_t p0 = model.p0;
    const uint32_t bound = (range_ >> BitModel::kBits) * p0;
    const uint32_t up = p0 + ((BitModel::kOne - p0) >> kBitModelShift);
    const uint32_t down = p0 - (p0 >> kBitModelShift);
    low_ += bit ? bound : 0u;
    range_ = bit ? range_ - bound : bound;
    model.p0 = static_cast<uint16_t>(bit ? down : up);
    normalize();
  }

  // Symbol `symbol` (< SymbolTable::kSymbols) of a static table: one step, no branch but the
  // renormalisation's.
  [[gnu::always_inline]] void encode_symbol(const SymbolTable& table, uint32_t symbol) {
    const uint32_t r = range_ >> SymbolTable::kBits;
    low_ += static_cast<uint64_t>(r) * table.start[symbol];
    range_ = r * table.freq[symbol];
    normalize();
  }

  // `count` (0..32) equiprobable bits of `value`, most significant first, up to 16 per step.
  [[gnu::always_inline]] void encode_direct(uint32_t value, uint32_t count) {
    if (count <= 16) {  // the common case: one step (count 0 changes nothing)
      range_ >>= count;
      low_ += static_cast<uint64_t>(range_) * value;
      normalize();
      return;
    }
    while (count > 0) {
      const uint32_t take = count > 16 ? 16 : count;
      count -= take;
      range_ >>= take;
      low_ += static_cast<uint64_t>(range_) * ((value >> count) & ((1u << take) - 1u));
      normalize();
    }
  }

  // Flushes the final interval. The encoder must not be used afterwards. With `bytes_follow`
  // false, the decoder must read zeros past the stream's end (trailing zero bytes are
  // dropped); with true, it decodes the same symbols whatever bytes follow the stream (a
  // RawBitWriter's, say): about one bit more.
  void finish(bool bytes_follow = false);

 private:
  [[gnu::always_inline]] void normalize() {
    while (range_ < (1u << 24)) {
      range_ <<= 8;
      shift_low();
    }
  }
  [[gnu::always_inline]] void shift_low() {
    // Bits 24..31 of low_ become the next byte unless a carry may still reach them
    // (0xFF bytes wait in cache_size_ until the carry is known).
    if (static_cast<uint32_t>(low_) < 0xFF000000u || (low_ >> 32) != 0) {
      const auto carry = static_cast<uint8_t>(low_ >> 32);
      uint8_t byte = cache_;
      do {
        if (!skip_first_byte_) put(static_cast<uint8_t>(byte + carry));
        skip_first_byte_ = false;  // an LZMA-style stream's first byte is always 0: implied
        byte = 0xFF;
      } while (--cache_size_ != 0);
      cache_ = static_cast<uint8_t>(low_ >> 24);
    }
    ++cache_size_;
    low_ = (low_ & 0x00FFFFFFu) << 8;
  }

  [[gnu::always_inline]] void put(uint8_t byte) {
    if (next_ == end_) [[unlikely]] {
      const WriteRoom room = grow(out_, stream_start_, next_);
      next_ = room.next;
      end_ = room.end;
    }
    *next_++ = byte;
  }
  // Doubles the room of this stream in `out` (`next` the next byte to write in it), rare:
  // records are usually < kChunk bytes. Static, taking and returning values: a member
  // function would take the encoder's address, and a local copy of the encoder (the body
  // loops') could then no longer live in registers.
  static WriteRoom grow(std::vector<uint8_t>& out, std::size_t stream_start, uint8_t* next);

  static constexpr std::size_t kChunk = 256;
  std::vector<uint8_t>& out_;  // what the encoder writes into: the destination or a scratch
  std::size_t stream_start_;   // where this stream began in out_
  std::vector<uint8_t>* destination_;  // out_ itself, or where finish() appends the stream
  uint8_t* next_ = nullptr;    // next byte to write, in out_
  uint8_t* end_ = nullptr;     // end of out_'s current size
  uint64_t low_ = 0;
  uint32_t range_ = 0xFFFFFFFFu;
  uint8_t cache_ = 0;
  uint64_t cache_size_ = 1;
  bool skip_first_byte_ = true;
};

class RangeDecoder {
 public:
  // `in` must outlive the decoder.
  explicit RangeDecoder(std::span<const uint8_t> in) : in_(in) {
    for (int i = 0; i < 4; ++i) code_ = (code_ << 8) | next_byte();
  }

  [[gnu::always_inline]] uint32_t decode(BitModel& model) {
    const uint32_t p0 = model.p0;
    const uint32_t bound = (range_ >> BitModel::kBits) * p0;
    const uint32_t up = p0 + ((BitModel::kOne - p0) >> kBitModelShift);
    const uint32_t down = p0 - (p0 >> kBitModelShift);
    const uint32_t bit = code_ >= bound ? 1u : 0u;
    code_ -= bit ? bound : 0u;
    range_ = bit ? range_ - bound : bound;
    model.p0 = static_cast<uint16_t>(bit ? down : up);
    normalize();
    return bit;
  }

  // A symbol of a static table (encode_symbol). On a corrupt stream the slot is clamped to the
  // table (the symbol is garbage, never out of range).
  [[gnu::always_inline]] uint32_t decode_symbol(const SymbolTable& table) {
    const uint32_t r = range_ >> SymbolTable::kBits;
    // Symbol 0 holds [0, r * freq[0]): when it is the likely one (the "expect zero" contexts:
    // a third or more of a record's residuals), a multiply and a compare decide it without the
    // division. Same result as the general path below.
    const uint32_t freq0 = table.freq[0];
    if (freq0 >= kLikelyFirstSymbol && code_ < r * freq0) {
      range_ = r * freq0;
      normalize();
      return 0;
    }
    uint32_t v = code_ / r;
    if (v >= SymbolTable::kTotal) v = SymbolTable::kTotal - 1;
    const uint32_t entry = table.lut[v >> SymbolTable::kLutShift];
    uint32_t symbol = entry & 15u;
    uint32_t start = (entry >> 4) & 0xFFFu;
    uint32_t freq = entry >> 16;
    if (v >= start + freq) {  // past the guessed interval: a rare symbol starts in this entry
      do {
        ++symbol;
      } while (v >= table.start[symbol + 1]);  // start[kSymbols] == kTotal > v: stops
      start = table.start[symbol];
      freq = table.freq[symbol];
    }
    code_ -= r * start;
    range_ = r * freq;
    normalize();
    return symbol;
  }

  // One equiprobable bit: a compare instead of decode_direct's division (same result).
  [[gnu::always_inline]] uint32_t decode_direct_bit() {
    range_ >>= 1;
    const uint32_t bit = code_ >= range_ ? 1u : 0u;
    code_ -= bit ? range_ : 0u;
    normalize();
    return bit;
  }

  [[gnu::always_inline]] uint32_t decode_direct(uint32_t count) {
    if (count == 1) return decode_direct_bit();
    uint32_t value = 0;
    while (count > 0) {
      const uint32_t take = count > 16 ? 16 : count;
      count -= take;
      range_ >>= take;
      // A well-formed stream has code_ < range_ << take here; a corrupt one may not, so the
      // digit is clamped (the result is garbage, never undefined).
      uint32_t digit = code_ / range_;
      const uint32_t max_digit = (1u << take) - 1u;
      if (digit > max_digit) digit = max_digit;
      code_ -= digit * range_;
      value = (value << take) | digit;
      normalize();
    }
    return value;
  }

  // decode_symbol() tests symbol 0 first when its frequency is at least this (p >= 3/4).
  static constexpr uint32_t kLikelyFirstSymbol = 3 * SymbolTable::kTotal / 4;

  // Bytes read past the end of the input (zeros supplied). A stream from RangeEncoder never
  // needs more than the zero bytes finish() dropped; callers bound this.
  std::size_t overrun() const { return overrun_; }
  // Input bytes consumed so far (including the 4-byte look-ahead).
  std::size_t consumed() const { return pos_; }

 private:
  uint32_t next_byte() {
    if (pos_ < in_.size()) return in_[pos_++];
    ++overrun_;
    return 0;
  }
  [[gnu::always_inline]] void normalize() {
    while (range_ < (1u << 24)) {
      range_ <<= 8;
      code_ = (code_ << 8) | next_byte();
    }
  }

  std::span<const uint8_t> in_;
  std::size_t pos_ = 0;
  std::size_t overrun_ = 0;
  uint32_t code_ = 0;
  uint32_t range_ = 0xFFFFFFFFu;
};

// The side stream of equiprobable bits (see the top of this file). Bits go MSB first into
// bytes b0, b1, ...; append_reversed() stores them as ..., b1, b0 at the end of a message.
class RawBitWriter {
 public:
  // `scratch` holds the bytes until append_reversed() (its contents are overwritten; reuse it
  // to avoid allocation). Bytes go through a raw pointer into it, grown when full.
  explicit RawBitWriter(std::vector<uint8_t>& scratch) : bytes_(scratch) {
    if (bytes_.size() < kChunk) bytes_.resize(kChunk);
    next_ = bytes_.data();
    end_ = bytes_.data() + bytes_.size();
  }

  // The low `count` (0..32) bits of `value` (higher bits must be zero), most significant first.
  // Whole 32-bit words are stored at once (one branch per about four residuals instead of a
  // loop per write); append_reversed() stores the rest.
  [[gnu::always_inline]] void write(uint32_t value, uint32_t count) {
    buffer_ = (buffer_ << count) | value;  // at most 31 + 32 bits pending: fits
    nonzero_ |= value;
    pending_ += count;
    if (pending_ >= 32) {
      pending_ -= 32;
      const auto word = static_cast<uint32_t>(buffer_ >> pending_);
      make_room(4);
      next_[0] = static_cast<uint8_t>(word >> 24);
      next_[1] = static_cast<uint8_t>(word >> 16);
      next_[2] = static_cast<uint8_t>(word >> 8);
      next_[3] = static_cast<uint8_t>(word);
      next_ += 4;
    }
  }
  bool empty() const { return next_ == bytes_.data() && pending_ == 0; }
  // True when every bit written so far is zero (or none was written).
  bool all_zero() const { return nonzero_ == 0; }

  // Pads the last byte with zero bits and appends the bytes to `out` in reverse order.
  void append_reversed(std::vector<uint8_t>& out);

 private:
  // Grows bytes_ when fewer than `bytes` bytes are left after next_.
  [[gnu::always_inline]] void make_room(std::ptrdiff_t bytes) {
    if (end_ - next_ < bytes) [[unlikely]] {
      const WriteRoom room = grow(bytes_, next_);
      next_ = room.next;
      end_ = room.end;
    }
  }
  // Doubles `bytes` (rare; `next` the next byte to write in it). Static, as
  // RangeEncoder::grow, so that a local copy of the writer can live in registers.
  static WriteRoom grow(std::vector<uint8_t>& bytes, uint8_t* next);

  static constexpr std::size_t kChunk = 256;
  std::vector<uint8_t>& bytes_;
  uint8_t* next_ = nullptr;  // next byte to write, in bytes_
  uint8_t* end_ = nullptr;   // end of bytes_
  uint64_t buffer_ = 0;    // the last `pending_` bits written are its low bits
  uint32_t pending_ = 0;   // 0..31 between writes
  uint32_t nonzero_ = 0;   // OR of every value written
};

// Reads a RawBitWriter's bits from the end of `message` backwards; zeros past its start
// (counted in overrun()).
class RawBitReader {
 public:
  // `message` must outlive the reader.
  explicit RawBitReader(std::span<const uint8_t> message)
      : begin_(message.data()), next_(message.data() + message.size()) {}

  // `count` 0..32 bits, most significant first.
  [[gnu::always_inline]] uint32_t read(uint32_t count) {
    if (available_ < count) refill();
    available_ -= count;
    return static_cast<uint32_t>((buffer_ >> available_) & ((uint64_t{1} << count) - 1));
  }

  // Bytes that hold the bits read() returned so far, zeros past the start included (the
  // reader buffers up to 8 bytes ahead of them).
  std::size_t bytes_read() const {
    return ((consumed_ + overrun_) * 8 - available_ + 7) / 8;
  }
  // Bytes taken from the message so far, buffered ones included.
  std::size_t consumed_bytes() const { return consumed_; }
  // Bytes supplied as zeros past the message's start.
  std::size_t overrun() const { return overrun_; }

 private:
  void refill() {
    if (next_ - begin_ >= 8) {
      // Whole bytes up to 57..64 available bits in one 8-byte load: the bytes before next_, in
      // stream order (next_[-1] first), are the load's bytes from the most significant down.
      uint64_t word;
      std::memcpy(&word, next_ - 8, sizeof word);
      if constexpr (std::endian::native == std::endian::big) word = byte_reversed(word);
      const uint32_t take = (64 - available_) >> 3;  // 1..8 bytes
      buffer_ = take == 8 ? word : (buffer_ << (8 * take)) | (word >> (64 - 8 * take));
      next_ -= take;
      consumed_ += take;
      available_ += 8 * take;
      return;
    }
    while (available_ <= 56) {
      uint64_t byte = 0;
      if (next_ != begin_) {
        byte = *--next_;
        ++consumed_;
      } else {
        ++overrun_;
      }
      buffer_ = (buffer_ << 8) | byte;
      available_ += 8;
    }
  }
  static uint64_t byte_reversed(uint64_t v) {
    uint64_t r = 0;
    for (int i = 0; i < 8; ++i) r = (r << 8) | ((v >> (8 * i)) & 0xFFu);
    return r;
  }

  const uint8_t* begin_;
  const uint8_t* next_;    // one past the next byte to read (moves towards begin_)
  uint64_t buffer_ = 0;    // the low `available_` bits are unread, most significant first
  uint32_t available_ = 0;
  std::size_t consumed_ = 0;
  std::size_t overrun_ = 0;
};

}  // namespace posecast::protocol
