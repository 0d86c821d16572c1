#include "golden/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kvbench {
namespace {

std::string reason(int err) { return std::strerror(err); }

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

}  // namespace

RegularFile::RegularFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw FileError(path + ": cannot open: " + reason(errno));
  struct stat st {};
  std::string problem;
  if (::fstat(fd_, &st) != 0) problem = "cannot stat: " + reason(errno);
  else if (!S_ISREG(st.st_mode)) problem = std::string("not a regular file (") + kind_of(st.st_mode) + ")";
  if (!problem.empty()) {
    ::close(fd_);
    fd_ = -1;
    throw FileError(path + ": " + problem);
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read_at(uint64_t offset, std::span<uint8_t> bytes) const {
  if (offset > size_ || bytes.size() > size_ - offset)
    throw FileError(path_ + ": truncated: " + std::to_string(bytes.size()) + " bytes at offset " + std::to_string(offset) +
                    " lie past the end of the file (" + std::to_string(size_) + " bytes)");
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pread(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw FileError(path_ + ": read error: " + reason(errno));
    if (n == 0) throw FileError(path_ + ": truncated while reading (the file shrank)");
    done += static_cast<size_t>(n);
  }
}

std::string read_text_file(const std::string& path, uint64_t max_bytes) {
  RegularFile f(path);
  if (f.size() > max_bytes)
    throw FileError(path + ": " + std::to_string(f.size()) + " bytes, more than the limit of " + std::to_string(max_bytes));
  std::string text(f.size(), '\0');
  f.read_at(0, std::span(reinterpret_cast<uint8_t*>(text.data()), text.size()));
  return text;
}

void write_file_atomically(const std::string& path, const std::vector<std::span<const uint8_t>>& parts) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw FileError("cannot write " + path + ": " + reason(errno));
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw FileError("cannot write " + path + ": " + reason(err));
  };
  for (const auto& part : parts) {
    size_t done = 0;
    while (done < part.size()) {
      const ssize_t n = ::write(fd, part.data() + done, part.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(errno);
      if (n == 0) fail(EIO);
      done += static_cast<size_t>(n);
    }
  }
  // A full disk may only show at fsync or close; the file is renamed only after both.
  if (::fsync(fd) != 0) fail(errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw FileError("cannot write " + path + ": " + reason(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw FileError("cannot write " + path + ": rename failed: " + reason(err));
  }
}

void write_file_atomically(const std::string& path, std::string_view text) {
  write_file_atomically(path, {std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())});
}

}  // namespace kvbench
