#include "reports/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace lic::reports {

void remove_stale_temporaries(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const std::string prefix = path.filename().string() + ".tmp.";
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.size() > 10 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(std::stoll(pid)), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove_all(e.path(), ignored);
  }
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path_.has_parent_path()) fs::create_directories(path_.parent_path(), ec);
  if (ec) {
    error_ = "cannot create " + path_.parent_path().string() + ": " + ec.message();
    return;
  }
  remove_stale_temporaries(path_);
  tmp_ = path_.string() + ".tmp." + std::to_string(getpid());
#ifdef O_TMPFILE
  // A file with no name until commit() links it: a writer killed before that leaves nothing.
  const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  // Only where /proc is mounted: commit() names it through /proc/self/fd (the other way,
  // AT_EMPTY_PATH, needs a capability a user rarely has), and a file that cannot be named at
  // commit is lost, so without /proc the named temporary is the safe choice.
  if (::access("/proc/self/fd", X_OK) == 0) fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  unnamed_ = fd_ >= 0;
#endif
  // Where the file system has no O_TMPFILE: the named temporary, removed by the next writer.
  if (fd_ < 0) fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) error_ = "cannot write " + tmp_.string() + ": " + std::strerror(errno);
  buf_.reserve(kChunkBytes + kChunkBytes / 4);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) {
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
}

void AtomicFileWriter::write_out(std::string_view bytes) {
  std::uint64_t h = fnv_;
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  fnv_ = h;
  bytes_ += bytes.size();
  while (error_.empty() && !bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "cannot write " + tmp_.string() + ": " + std::strerror(n < 0 ? errno : EIO);
      return;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AtomicFileWriter::flush() {
  write_out(buf_);
  buf_.clear();
}

void AtomicFileWriter::write(std::string_view text) {
  if (text.size() >= kChunkBytes) {
    flush();
    write_out(text);
    return;
  }
  buf_ += text;
  flush_if_full();
}

std::string AtomicFileWriter::commit() { return commit(path_); }

std::string AtomicFileWriter::commit(const std::filesystem::path& into) {
  flush();
  if (error_.empty() && ::fsync(fd_) != 0) error_ = "cannot write " + tmp_.string() + ": " + std::strerror(errno);
  if (error_.empty() && unnamed_) link_temporary();
  if (fd_ >= 0 && ::close(fd_) != 0 && error_.empty())
    error_ = "cannot write " + tmp_.string() + ": " + std::strerror(errno);
  fd_ = -1;
  if (!error_.empty()) return error_;
  std::error_code ec;
  std::filesystem::rename(tmp_, into, ec);
  if (ec) return error_ = "cannot rename into " + into.string() + ": " + ec.message();
  committed_ = true;
  return {};
}

void AtomicFileWriter::link_temporary() {
  // The unnamed file gets the temporary's name, then is renamed into place as a named one is.
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
  const std::string self = "/proc/self/fd/" + std::to_string(fd_);
  if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp_.c_str(), AT_SYMLINK_FOLLOW) == 0) return;
  const int err = errno;
  if (::linkat(fd_, "", AT_FDCWD, tmp_.c_str(), AT_EMPTY_PATH) == 0) return;  // no /proc: needs CAP_DAC_READ_SEARCH
  error_ = "cannot write " + tmp_.string() + ": " + std::strerror(err);
}

std::string write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  AtomicFileWriter w(path);
  if (!w.error().empty()) return w.error();
  w.write(content);
  return w.commit();
}

}  // namespace lic::reports
