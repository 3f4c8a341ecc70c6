// Structured values drawn from fuzz bytes (what FuzzedDataProvider does, without needing clang's
// header): harnesses that search better over structures than over text build them from this.
// Exhausted input reads as zeros, so every byte string decodes to something.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pipeworks::fuzz {

class ByteSource {
 public:
  ByteSource(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : std::uint8_t{0}; }
  bool flag() { return (byte() & 1) != 0; }
  // A value in [lo, hi] (lo <= hi) from as many bytes as the span needs.
  std::int64_t in_range(std::int64_t lo, std::int64_t hi) {
    const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    std::uint64_t raw = 0;
    for (std::uint64_t left = span; left != 0; left >>= 8) raw = (raw << 8) | byte();
    const std::uint64_t offset = span == UINT64_MAX ? raw : raw % (span + 1);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + offset);
  }
  int small(int lo, int hi) { return static_cast<int>(in_range(lo, hi)); }
  // An index into a container of `size` elements (size >= 1).
  std::size_t index(std::size_t size) {
    return static_cast<std::size_t>(in_range(0, static_cast<std::int64_t>(size) - 1));
  }
  // The unread bytes as text.
  std::string_view rest() const {
    return pos_ < size_ ? std::string_view(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_)
                        : std::string_view{};
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace pipeworks::fuzz
