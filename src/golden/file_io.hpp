#pragma once
// File access for golden and actual files, which come from other backends unvetted:
// only regular files are opened (a FIFO or device would block or never end), reads are
// bounded and positioned, and writes go to a temporary name that replaces the target
// only once every byte is on disk.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

// A file that cannot be used; the message names the path and what is wrong.
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A regular file opened for reading. Throws FileError for anything else (missing,
// unreadable, a folder, a FIFO, a device).
class RegularFile {
 public:
  explicit RegularFile(const std::string& path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Exactly `bytes.size()` bytes at `offset`; a short file is a FileError.
  void read_at(uint64_t offset, std::span<uint8_t> bytes) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The whole of a regular file of at most `max_bytes` (a larger one is a FileError).
std::string read_text_file(const std::string& path, uint64_t max_bytes);

// Writes `parts` one after another to `path`: to `path`.tmp first, flushed to disk, then
// renamed over `path`. On any failure (ENOSPC, EFBIG, EIO) the temporary file is removed,
// `path` is left as it was, and a FileError names the path and the reason.
void write_file_atomically(const std::string& path, const std::vector<std::span<const uint8_t>>& parts);
void write_file_atomically(const std::string& path, std::string_view text);

}  // namespace kvbench
