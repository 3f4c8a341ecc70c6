// The zip directory check before LibTorch inflates an archive (hw/model/torch_archive.h), on
// archives built byte by byte: compressed records past the limit (with 32-bit and zip64 sizes)
// are refused naming the record, stored ones pass whatever their size, and malformed
// directories (out of range, truncated, not a zip at all) pass to LibTorch's own error without
// being read past their end.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hw/model/torch_archive.h"
#include "temp_path.h"

namespace pipeworks::hw {
namespace {

using Bytes = std::vector<unsigned char>;

void put(Bytes& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<unsigned char>(value >> (8 * i)));
}

struct Record {
  std::string name;
  std::uint16_t method = 8;  // deflated
  std::uint64_t uncompressed = 0;
  bool zip64 = false;  // the size in a zip64 extra field, 0xFFFFFFFF in the entry
};

// Just a central directory and its end record: the check reads nothing else.
Bytes archive(const std::vector<Record>& records, std::uint32_t offset_shift = 0) {
  Bytes out(16, 0);  // stands for the local headers and data
  const std::uint64_t directory_offset = out.size();
  for (const Record& r : records) {
    put(out, 0x02014b50, 4);
    put(out, 20, 2);
    put(out, 20, 2);
    put(out, 0, 2);
    put(out, r.method, 2);
    put(out, 0, 4);  // time, date
    put(out, 0, 4);  // crc
    put(out, 10, 4);  // compressed size
    put(out, r.zip64 ? 0xFFFFFFFF : r.uncompressed, 4);
    put(out, r.name.size(), 2);
    put(out, r.zip64 ? 12 : 0, 2);
    put(out, 0, 2);  // comment
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, 0, 4);
    put(out, 0, 4);  // local header offset
    out.insert(out.end(), r.name.begin(), r.name.end());
    if (r.zip64) {
      put(out, 0x0001, 2);
      put(out, 8, 2);
      put(out, r.uncompressed, 8);
    }
  }
  const std::uint64_t directory_size = out.size() - directory_offset;
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, records.size(), 2);
  put(out, records.size(), 2);
  put(out, directory_size, 4);
  put(out, directory_offset + offset_shift, 4);
  put(out, 0, 2);
  return out;
}

sched::Status check(const Bytes& bytes) {
  const std::string path = test::temp_path("torch_archive_test", ".pt").string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  sched::Status status = check_torch_archive(path, "TorchScript module");
  std::filesystem::remove(path);
  return status;
}

constexpr std::uint64_t kMiB = 1 << 20;

TEST_CASE("torch archive: compressed records past the limit are refused naming the record, stored ones pass") {
  CHECK(check(archive({{"m/code/a.py", 8, 1 * kMiB}, {"m/data/0", 0, 4000 * kMiB}})).ok());
  const sched::Status bomb = check(archive({{"m/code/a.py", 8, 200 * kMiB}, {"m/data/9", 8, 100 * kMiB}}));
  REQUIRE_FALSE(bomb);
  CHECK_THAT(bomb.error().message, Catch::Contains("inflate to more than 256 MiB (at record 'm/data/9')") &&
                                       Catch::Contains("not a TorchScript module torch wrote"));
  const sched::Status zip64 = check(archive({{"m/data/9", 8, 8192 * kMiB, true}}));
  REQUIRE_FALSE(zip64);
  CHECK_THAT(zip64.error().message, Catch::Contains("'m/data/9'"));
}

TEST_CASE("torch archive: malformed directories are left to LibTorch's error, never read past their end") {
  CHECK(check({}).ok());
  CHECK(check(Bytes(100, 'x')).ok());                                       // not a zip archive
  CHECK(check(archive({{"m/data/9", 8, 8192 * kMiB}}, 1'000'000)).ok());   // directory beyond the file
  Bytes truncated = archive({{"a-long-record-name", 8, 8192 * kMiB}});
  truncated.erase(truncated.begin() + 16 + 46, truncated.begin() + 16 + 46 + 10);  // name cut short
  CHECK_NOTHROW(check(truncated));
  CHECK(check_torch_archive("/nonexistent/pipeworks.pt", "TorchScript module").ok());
}

}  // namespace
}  // namespace pipeworks::hw
