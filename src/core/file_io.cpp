#include "core/file_io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kvbench {
namespace {

std::string reason(int err) { return std::strerror(err); }

// New files get the permissions the user's umask gives (mode 0666 & ~umask), as a plain
// open() would: read once, before any thread can create files.
const mode_t kNewFileMode = [] {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}();

// The temporaries now open, for a signal handler to remove: fixed slots, no allocation.
// state 0 free, 1 claimed (path being set), 2 live (path set, the handler may unlink it).
constexpr int kTempSlots = 256;
constexpr size_t kTempPathMax = 4096;
struct TempSlot {
  std::atomic<int> state{0};
  char path[kTempPathMax];
};
TempSlot temp_slots[kTempSlots];
std::atomic<uint64_t> temp_counter{0};

// A slot holding `path`, or -1 when none is free or the path is too long (the file is then
// not removed by a signal, which is all that is lost).
int register_temp(const std::string& path) {
  if (path.size() >= kTempPathMax) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!temp_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(temp_slots[i].path, path.c_str(), path.size() + 1);
    temp_slots[i].state.store(2, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0) temp_slots[slot].state.store(0, std::memory_order_release);
}

// fsync of a folder makes a rename in it durable; some file systems refuse it (EINVAL),
// which loses nothing that is not already lost.
void sync_folder(const std::string& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

const char* file_kind(unsigned mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

RegularFile::RegularFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    const int err = errno;
    throw FileError(path + ": cannot open: " + reason(err), reason(err));
  }
  struct stat st {};
  std::string problem;
  if (::fstat(fd_, &st) != 0)
    problem = "cannot stat: " + reason(errno);
  else if (!S_ISREG(st.st_mode))
    problem = std::string("not a regular file (") + file_kind(st.st_mode) + ")";
  if (!problem.empty()) {
    ::close(fd_);
    fd_ = -1;
    throw FileError(path + ": " + problem, problem);
  }
  size_ = static_cast<uint64_t>(st.st_size);
  modified_ns_ = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read_at(uint64_t offset, std::span<uint8_t> bytes) const {
  if (offset > size_ || bytes.size() > size_ - offset)
    throw FileError(path_ + ": truncated: " + std::to_string(bytes.size()) + " bytes at offset " +
                    std::to_string(offset) + " lie past the end of the file (" + std::to_string(size_) +
                    " bytes)");
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n =
        ::pread(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      throw FileError(path_ + ": read error: " + reason(err), reason(err));
    }
    if (n == 0) throw FileError(path_ + ": truncated while reading (the file shrank)");
    done += static_cast<size_t>(n);
  }
}

void RegularFile::scan(uint64_t offset, uint64_t size,
                       const std::function<void(std::span<const uint8_t>)>& take) const {
  if (offset > size_ || size > size_ - offset)
    throw FileError(path_ + ": truncated: " + std::to_string(size) + " bytes at offset " +
                    std::to_string(offset) + " lie past the end of the file (" + std::to_string(size_) +
                    " bytes)");
  constexpr uint64_t kWindow = uint64_t{64} << 20;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<uint8_t> buffer;  // only where mapping fails
  for (uint64_t at = offset, end = offset + size; at < end;) {
    const uint64_t n = std::min(kWindow, end - at), base = at / page * page, span = at - base + n;
    void* map = ::mmap(nullptr, span, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, static_cast<off_t>(base));
    if (map != MAP_FAILED) {
      take(std::span(static_cast<const uint8_t*>(map) + (at - base), n));
      ::munmap(map, span);
    } else {
      buffer.resize(n);
      read_at(at, buffer);
      take(buffer);
    }
    at += n;
  }
}

std::string RegularFile::read_all(uint64_t max_bytes) const {
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::pread(fd_, buf, sizeof buf, static_cast<off_t>(text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      throw FileError(path_ + ": read error: " + reason(err), reason(err));
    }
    if (n == 0) return text;
    if (text.size() + static_cast<size_t>(n) > max_bytes)
      throw FileError(path_ + ": more than " + std::to_string(max_bytes) + " bytes",
                      "more than " + std::to_string(max_bytes) + " bytes");
    text.append(buf, static_cast<size_t>(n));
  }
}

std::string read_text_file(const std::string& path, uint64_t max_bytes) {
  RegularFile f(path);
  if (f.size() > max_bytes)
    throw FileError(path + ": " + std::to_string(f.size()) + " bytes, more than the limit of " +
                    std::to_string(max_bytes));
  std::string text(f.size(), '\0');
  f.read_at(0, std::span(reinterpret_cast<uint8_t*>(text.data()), text.size()));
  return text;
}

// ---- AtomicFile ----------------------------------------------------------------------

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  namespace fs = std::filesystem;
  // A link is followed: the file it names is the one replaced, and the link stays.
  std::error_code ec;
  if (fs::is_symlink(path, ec)) {
    const fs::path target = fs::weakly_canonical(path, ec);
    if (!ec) path_ = target.string();
  }
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw FileError("cannot write " + path + ": not a regular file (" + file_kind(st.st_mode) + ")");
  for (int attempt = 0; fd_ < 0; ++attempt) {
    tmp_ = path_ + "." + std::to_string(::getpid()) + "-" + std::to_string(temp_counter++) + ".tmp";
    slot_ = register_temp(tmp_);  // before the file exists, so a signal can never miss it
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kNewFileMode);
    if (fd_ >= 0) break;
    const int err = errno;
    unregister_temp(slot_);
    slot_ = -1;
    if (err != EEXIST || attempt > 100)
      throw FileError("cannot write " + path + ": " + reason(err), reason(err));
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
  unregister_temp(slot_);
}

void AtomicFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  throw FileError("cannot write " + path_ + ": " + what + reason(err), reason(err));
}

void AtomicFile::write(std::span<const uint8_t> bytes) {
  if (fd_ < 0) throw std::logic_error("AtomicFile::write after sync: " + path_);
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("", errno);
    if (n == 0) fail("", EIO);
    done += static_cast<size_t>(n);
  }
}

void AtomicFile::write(std::string_view text) {
  write(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

void AtomicFile::sync() {
  if (fd_ < 0) return;
  // A full disk may only show at fsync or close; the file is renamed only after both.
  if (::fsync(fd_) != 0) fail("", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("", errno);
}

void AtomicFile::commit() {
  sync();
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename failed: ", errno);
  committed_ = true;
  unregister_temp(slot_);
  slot_ = -1;
  sync_folder(std::filesystem::path(path_).parent_path().string());
}

void check_output_target(const std::string& path) { AtomicFile probe(path); }

void write_file_atomically(const std::string& path, const std::vector<std::span<const uint8_t>>& parts) {
  AtomicFile f(path);
  for (const auto& part : parts) f.write(part);
  f.commit();
}

void write_file_atomically(const std::string& path, std::string_view text) {
  write_file_atomically(path, {std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())});
}

void remove_temporary_files_now() {
  for (auto& slot : temp_slots)
    if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.path);
}

}  // namespace kvbench
