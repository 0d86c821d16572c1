#pragma once
// File access for everything kvbench reads from others (case files, golden and actual
// files, reports) and everything it writes (reports, goldens, saved outputs).
//
// Reading: only regular files are opened (a FIFO or device would block or never end), reads
// are bounded and positioned, and every failure names the path and the system's reason.
//
// Writing: one policy for every output file (specs/report-format.md "How files are
// written"). A file is written to a uniquely named temporary file in the target's folder,
// fsync'ed, and renamed over the target, so the target is always either the old file or the
// whole new one: a full disk, a crash or a signal never leaves a partial file under its name,
// and two processes writing one target never share a temporary. A target that exists and is
// not a regular file (a FIFO, a device, a folder) is refused before anything is written.
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

// A file that cannot be used; the message names the path and what is wrong, `reason()` is
// the system's words alone where there are some ("Permission denied").
class FileError : public std::runtime_error {
 public:
  explicit FileError(const std::string& message, std::string reason = "")
      : std::runtime_error(message), reason_(std::move(reason)) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// A regular file opened for reading. Throws FileError for anything else (missing,
// unreadable, a folder, a FIFO, a device, a symbolic link loop).
class RegularFile {
 public:
  explicit RegularFile(const std::string& path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // The last modification time in nanoseconds (to notice a file rewritten between two reads).
  int64_t modified_ns() const { return modified_ns_; }
  // Exactly `bytes.size()` bytes at `offset`; a short file is a FileError.
  void read_at(uint64_t offset, std::span<uint8_t> bytes) const;
  // Exactly `size` bytes at `offset`, handed to `take` in pieces in order, without a copy
  // where the file can be mapped (64 MiB windows): for checksums over whole tensors.
  void scan(uint64_t offset, uint64_t size, const std::function<void(std::span<const uint8_t>)>& take) const;
  // Up to `max_bytes` from the start, stopping at the end of the file: for files whose
  // size the system does not know (/proc). More than `max_bytes` is a FileError.
  std::string read_all(uint64_t max_bytes) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  int64_t modified_ns_ = 0;
};

// The whole of a regular file of at most `max_bytes` (a larger one is a FileError).
std::string read_text_file(const std::string& path, uint64_t max_bytes);

// "a FIFO", "a folder", "a device", ... for a mode that is not a regular file's.
const char* file_kind(unsigned mode);

// A file being written through a temporary beside its target (above). The constructor
// refuses a target that exists and is not a regular file, and creates the temporary
// `<target>.<pid>-<n>.tmp` (O_EXCL: never another process's); a symbolic link as the target
// is followed, so the file it points to is replaced. Destroyed before commit(), the
// temporary is removed and the target is untouched.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Each throws FileError naming the target and the reason (ENOSPC, EFBIG, EIO).
  void write(std::span<const uint8_t> bytes);
  void write(std::string_view text);
  // Every byte on disk: fsync and close (a full disk shows here at the latest).
  void sync();
  // sync() if not yet, then rename over the target and fsync its folder.
  void commit();
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  std::string path_, tmp_;
  int fd_ = -1;
  int slot_ = -1;  // in the registry of temporaries a signal handler removes
  bool committed_ = false;
};

// Whether `path` can take a file written through an AtomicFile: a temporary made and removed
// beside it. Throws the FileError the write would (not a regular file, no folder, read-only).
void check_output_target(const std::string& path);

// `parts` one after another, or `text`, written to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, const std::vector<std::span<const uint8_t>>& parts);
void write_file_atomically(const std::string& path, std::string_view text);

// Async-signal-safe: removes every temporary file an AtomicFile of this process has open.
// For a signal handler that ends the process (src/runner/interrupt.cpp).
void remove_temporary_files_now();

}  // namespace kvbench
