//===- wire.h - Bounds-checked little-endian encoding -----------*- C++ -*-===//
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace ompdpu::protocol {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the wire format is little-endian, as are x86_64 and aarch64");

/// Appends fixed-size integers and length-prefixed strings to a buffer.
class Writer {
public:
  /// Append an integer in little-endian order.
  template <typename T> void put(T V) {
    static_assert(std::is_integral_v<T>, "integers only");
    std::memcpy(grow(sizeof(T)), &V, sizeof(T));
  }
  /// Append a string as a u32 length and its bytes.
  void putString(const std::string &S) { putBytes(S.data(), S.size()); }
  /// Append a byte array as a u32 length and its bytes.
  void putBytes(const void *P, size_t N) {
    put<uint32_t>(static_cast<uint32_t>(N));
    if (N)
      std::memcpy(grow(N), P, N);
  }
  /// The bytes written so far.
  std::vector<uint8_t> &bytes() {
    Buf.resize(Len);
    return Buf;
  }
  /// Write into Reused instead; its bytes are overwritten, its storage is
  /// kept, so a buffer used message after message neither allocates nor
  /// resizes. Swap back with bytes() when done.
  void reuse(std::vector<uint8_t> &Reused) {
    Buf.swap(Reused);
    Len = 0;
  }

private:
  /// Room for N more bytes. Buf is sized ahead of Len (frames are built
  /// on the launch path: a resize per field cost more than the rest).
  uint8_t *grow(size_t N) {
    size_t Off = Len;
    Len += N;
    if (Len > Buf.size())
      Buf.resize(std::max({Len, 2 * Buf.size(), size_t(64)}));
    return Buf.data() + Off;
  }
  std::vector<uint8_t> Buf;
  size_t Len = 0; ///< bytes written; Buf.size() may be more
};

/// Reads what a Writer wrote; every read checks the remaining length, and a
/// failed read poisons the reader so that callers can check once at the end.
class Reader {
public:
  Reader() = default;
  Reader(const uint8_t *P, size_t N) : Cur(P), End(P + N) {}
  /// Read an integer; false (and a poisoned reader) if too few bytes remain.
  template <typename T> bool get(T &V) {
    static_assert(std::is_integral_v<T>, "integers only");
    if (!take(sizeof(T)))
      return false;
    std::memcpy(&V, Cur - sizeof(T), sizeof(T));
    return true;
  }
  /// Read a length-prefixed string of at most MaxLen bytes.
  bool getString(std::string &S, size_t MaxLen = 1 << 20) {
    uint32_t N = 0;
    if (!get(N) || N > MaxLen || !take(N))
      return fail();
    S.assign(reinterpret_cast<const char *>(Cur - N), N);
    return true;
  }
  /// Read a length-prefixed byte array of at most MaxLen bytes.
  bool getBytes(std::vector<uint8_t> &B, size_t MaxLen = 1 << 20) {
    uint32_t N = 0;
    if (!get(N) || N > MaxLen || !take(N))
      return fail();
    B.assign(Cur - N, Cur);
    return true;
  }
  /// Skip N bytes, returning where they start (null, and a poisoned
  /// reader, if fewer remain): for arrays read in place.
  const uint8_t *view(size_t N) { return take(N) ? Cur - N : nullptr; }
  /// True when every read so far succeeded.
  bool ok() const { return !Failed; }
  /// True when every read succeeded and no byte is left over.
  bool finishedCleanly() const { return !Failed && Cur == End; }
  /// Bytes not read yet.
  size_t remaining() const { return Failed ? 0 : End - Cur; }

private:
  bool take(size_t N) {
    if (Failed || static_cast<size_t>(End - Cur) < N)
      return fail();
    Cur += N;
    return true;
  }
  bool fail() {
    Failed = true;
    return false;
  }
  const uint8_t *Cur = nullptr;
  const uint8_t *End = nullptr;
  bool Failed = false;
};

} // namespace ompdpu::protocol
