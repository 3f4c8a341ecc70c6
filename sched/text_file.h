// Whole files in and out, for every reader and writer of the project: errors name the path and
// say why (a directory, a missing file, a full disk), a file over the caller's size limit is
// refused before it is read, and a failed write leaves an existing file as it was.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "sched/result.h"

namespace pipeworks::sched {

// The file's bytes; errors read "PATH: reason".
Result<std::string> read_text_file(const std::string& path, std::size_t max_bytes);

// Hands the writer pieces of the output; false when writing failed (the producer may stop).
using ChunkSink = std::function<bool(std::string_view)>;

// Writes what `produce` hands the sink to `path`. A regular file (or a new one) is written
// beside the target and renamed over it once complete, so a failure leaves the old file whole;
// an existing non-regular file (a device, a pipe) is written in place. Every write, the flush
// and the close are checked; errors read "PATH: reason".
Status write_file_in_chunks(const std::string& path, const std::function<bool(const ChunkSink&)>& produce);

Status write_text_file(const std::string& path, std::string_view text);

// Whether `path` can be written, checked before a long job rather than after it: an existing
// writable file or device, or a new name in a writable directory.
Status check_output_path(const std::string& path);

}  // namespace pipeworks::sched
