// Checking a torch zip archive's compressed records before LibTorch inflates them (see
// torch_archive.h).
#include "hw/model/torch_archive.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <vector>

#include <fmt/format.h>

namespace pipeworks::hw {
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kZip64End = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint16_t kStored = 0;
constexpr std::uint16_t kZip64Extra = 0x0001;
constexpr std::size_t kEndSize = 22;
constexpr std::size_t kMaxComment = 0xFFFF;
constexpr std::size_t kEntrySize = 46;
constexpr std::uint64_t kMaxDirectoryBytes = std::uint64_t{64} << 20;

std::uint64_t little(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::optional<std::vector<unsigned char>> read_at(std::ifstream& in, std::uint64_t offset, std::uint64_t size) {
  std::vector<unsigned char> bytes(size);
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) return std::nullopt;
  return bytes;
}

struct Directory {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// The central directory's place, from the end record (or its zip64 twin); nothing when the file
// is not a zip archive.
std::optional<Directory> find_directory(std::ifstream& in, std::uint64_t file_size) {
  if (file_size < kEndSize) return std::nullopt;
  const std::uint64_t tail_size = std::min<std::uint64_t>(file_size, kEndSize + kMaxComment);
  auto tail = read_at(in, file_size - tail_size, tail_size);
  if (!tail) return std::nullopt;
  for (std::size_t at = tail_size - kEndSize + 1; at-- > 0;) {
    const unsigned char* end = tail->data() + at;
    if (little(end, 4) != kEndOfDirectory) continue;
    Directory d{little(end + 16, 4), little(end + 12, 4)};
    const std::uint64_t end_offset = file_size - tail_size + at;
    if ((d.offset == 0xFFFFFFFF || d.size == 0xFFFFFFFF) && end_offset >= 20) {
      auto locator = read_at(in, end_offset - 20, 20);
      if (locator && little(locator->data(), 4) == kZip64Locator) {
        auto end64 = read_at(in, little(locator->data() + 8, 8), 56);
        if (!end64 || little(end64->data(), 4) != kZip64End) return std::nullopt;
        d = {little(end64->data() + 48, 8), little(end64->data() + 40, 8)};
      }
    }
    return d;
  }
  return std::nullopt;
}

// The entry's uncompressed size, from its zip64 extra field when the 32-bit one overflowed.
std::uint64_t uncompressed_size(const unsigned char* entry, const unsigned char* extra, std::size_t extra_size) {
  const std::uint64_t size32 = little(entry + 24, 4);
  if (size32 != 0xFFFFFFFF) return size32;
  for (std::size_t at = 0; at + 4 <= extra_size;) {
    const std::uint64_t id = little(extra + at, 2);
    const std::uint64_t length = little(extra + at + 2, 2);
    if (id == kZip64Extra && length >= 8 && at + 4 + 8 <= extra_size) return little(extra + at + 4, 8);
    at += 4 + length;
  }
  return size32;
}

}  // namespace

sched::Status check_torch_archive(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return sched::Ok{};  // the loader's own error names an unreadable file
  const auto file_size = static_cast<std::uint64_t>(in.tellg());
  const auto directory = find_directory(in, file_size);
  if (!directory || directory->size > kMaxDirectoryBytes || directory->offset + directory->size > file_size) {
    return sched::Ok{};  // not a zip archive (or not one we can read): LibTorch says what it is
  }
  auto entries = read_at(in, directory->offset, directory->size);
  if (!entries) return sched::Ok{};
  std::uint64_t inflated = 0;
  for (std::size_t at = 0; at + kEntrySize <= entries->size();) {
    const unsigned char* entry = entries->data() + at;
    if (little(entry, 4) != kDirectoryEntry) break;
    const std::size_t name_size = little(entry + 28, 2);
    const std::size_t extra_size = little(entry + 30, 2);
    const std::size_t comment_size = little(entry + 32, 2);
    if (at + kEntrySize + name_size + extra_size > entries->size()) break;
    const std::string name(reinterpret_cast<const char*>(entry + kEntrySize), name_size);
    if (little(entry + 10, 2) != kStored) {
      inflated += uncompressed_size(entry, entry + kEntrySize + name_size, extra_size);
      if (inflated > kMaxInflatedArchiveBytes) {
        return sched::Error{fmt::format(
            "'{}': its compressed records inflate to more than {} MiB (at record '{}'); torch stores tensor data "
            "uncompressed and compresses only code and pickles, so this is not a {} torch wrote (a zip bomb?)",
            path, kMaxInflatedArchiveBytes >> 20, name, what)};
      }
    }
    at += kEntrySize + name_size + extra_size + comment_size;
  }
  return sched::Ok{};
}

}  // namespace pipeworks::hw
