// The zip archive torch.jit.save and torch.save write, checked before LibTorch reads it: LibTorch
// inflates every record in full, so a small file whose compressed record inflates to gigabytes
// (a zip bomb) would exhaust memory before any model check could run. torch stores tensor data
// uncompressed (aligned, so it can be mapped) and compresses only code and pickles, which stay
// small; an archive whose compressed records inflate past kMaxInflatedArchiveBytes is refused,
// naming the record. A file that is not a zip archive passes (LibTorch's own error names it).
// LibTorch-free.
//
//   [local header + data]...  [central directory: one entry per record]  [zip64 EOCD] [EOCD]
//   read from the end: EOCD -> (zip64 locator -> zip64 EOCD) -> every central entry's method,
//   compressed and uncompressed size (zip64 extra field where 32 bits do not hold them)
#pragma once

#include <cstdint>
#include <string>

#include "sched/result.h"

namespace pipeworks::hw {

inline constexpr std::uint64_t kMaxInflatedArchiveBytes = std::uint64_t{256} << 20;

// `what` names the file's role in the error ("TorchScript module", "data file").
sched::Status check_torch_archive(const std::string& path, const std::string& what);

}  // namespace pipeworks::hw
