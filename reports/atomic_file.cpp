#include "reports/atomic_file.hpp"

#define XXH_INLINE_ALL  // header only: nothing to link, for letitcrash or a project that links it
#include <xxhash.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <thread>
#include <system_error>
#include <utility>
#include <vector>

namespace lic::reports {

namespace {

std::string xxh3_128_hex(XXH128_hash_t h) {
  // Canonical order, as xxhsum prints it: the high 64 bits first.
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return out;
}

}  // namespace

std::string hash_file_xxh3_128(const std::filesystem::path& file, std::uint64_t& bytes) {
  std::ifstream in(file, std::ios::binary);
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  bytes = 0;
  std::vector<char> buf(std::size_t{1} << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    XXH3_128bits_update(&state, buf.data(), n);
    bytes += n;
  }
  return xxh3_128_hex(XXH3_128bits_digest(&state));
}

struct AtomicFileWriter::Hash {
  XXH3_state_t state;
};

void AtomicFileWriter::FreeHash::operator()(Hash* h) const { delete h; }

std::string AtomicFileWriter::xxh3_128() const { return xxh3_128_hex(XXH3_128bits_digest(&hash_->state)); }


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

/// The chunks waiting for the writing thread, and the emptied ones it hands back for reuse.
struct AtomicFileWriter::Behind {
  std::mutex mutex;
  std::condition_variable changed;  // a chunk queued or taken, or the end
  std::deque<std::string> queue;
  std::vector<std::string> spare;
  bool done = false;
  std::thread thread;
};

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path, bool behind) : path_(std::move(path)), hash_(new Hash) {
  namespace fs = std::filesystem;
  XXH3_128bits_reset(&hash_->state);
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
  if (behind && fd_ >= 0) chunk_ = kBehindChunkBytes;
  buf_.reserve(chunk_ + chunk_ / 4);
  if (behind && fd_ >= 0) {
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0 && ::fcntl(fd_, F_SETFL, flags | O_DIRECT) == 0) {
      stage_.reset(static_cast<char*>(std::aligned_alloc(kBlock, kStageBytes)));
      direct_ = stage_ != nullptr;
      if (!direct_) ::fcntl(fd_, F_SETFL, flags);
    }
    behind_ = std::make_unique<Behind>();
    try {
      behind_->thread = std::thread([this] { write_behind(); });
    } catch (const std::system_error&) {  // no thread to be had: write in this one, through the cache
      behind_.reset();
      if (direct_ && flags >= 0) ::fcntl(fd_, F_SETFL, flags);
      direct_ = false;
    }
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  stop_behind();
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) {
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
}

void AtomicFileWriter::FreeStage::operator()(char* p) const { std::free(p); }

void AtomicFileWriter::write_out(std::string_view bytes) {
  bytes_ += bytes.size();
  // XXH3 reads 16 bytes and more at a time: about 0.05 cycles a byte, where FNV-1a's multiply
  // a byte was the writer thread's longest wait (issue 37).
  XXH3_128bits_update(&hash_->state, bytes.data(), bytes.size());
  while (!bytes.empty()) {
    if (!direct_) return write_all(bytes);  // from the start, or since a write was refused
    const std::size_t n = std::min(bytes.size(), kStageBytes - staged_);
    std::memcpy(stage_.get() + staged_, bytes.data(), n);
    staged_ += n;
    bytes.remove_prefix(n);
    if (staged_ == kStageBytes) write_staged(false);
  }
}

void AtomicFileWriter::write_staged(bool last) {
  std::size_t done = 0;
  const std::size_t whole = staged_ & ~(kBlock - 1);
  if (direct_ && whole > 0 && error_.empty()) {
    ssize_t n = 0;
    do n = ::write(fd_, stage_.get(), whole);
    while (n < 0 && errno == EINTR);
    done = n > 0 ? static_cast<std::size_t>(n) : 0;
    // Refused or short (a file system that takes O_DIRECT only in part, a full disk): the rest
    // goes through the page cache, which reports a real failure with its own error as before.
    if (done != whole) last = true;
  }
  if (last && direct_) {
    direct_ = false;
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT);
  }
  if (!direct_) {
    write_all(std::string_view(stage_.get() + done, staged_ - done));
    done = staged_;
  }
  std::memmove(stage_.get(), stage_.get() + done, staged_ - done);
  staged_ -= done;
}

void AtomicFileWriter::write_all(std::string_view bytes) {
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

void AtomicFileWriter::write_behind() {
  Behind& b = *behind_;
  while (true) {
    std::string chunk;
    {
      std::unique_lock lock(b.mutex);
      b.changed.wait(lock, [&b] { return !b.queue.empty() || b.done; });
      if (b.queue.empty()) break;  // done, and every chunk handed over
      chunk = std::move(b.queue.front());
      b.queue.pop_front();
    }
    b.changed.notify_all();
    // hash_, bytes_ and error_ are this thread's until stop_behind() joins it. An exception here
    // (out of memory) must not end the program: it is the writer's error, and the queue is still
    // drained so the caller never waits for room that does not come.
    try {
      if (error_.empty()) write_out(chunk);
      chunk.clear();
      std::lock_guard lock(b.mutex);
      b.spare.push_back(std::move(chunk));
    } catch (const std::exception&) {
      if (error_.empty()) error_ = "cannot write " + tmp_.string() + ": out of memory";
    }
  }
  try {
    if (stage_ && error_.empty()) write_staged(true);  // the last partial block, through the cache
  } catch (const std::exception&) {
    if (error_.empty()) error_ = "cannot write " + tmp_.string() + ": out of memory";
  }
}

void AtomicFileWriter::hand_over() {
  Behind& b = *behind_;
  std::string next;
  {
    std::unique_lock lock(b.mutex);
    b.changed.wait(lock, [&b] { return b.queue.size() < kQueued; });
    b.queue.push_back(std::move(buf_));
    if (!b.spare.empty()) {
      next = std::move(b.spare.back());
      b.spare.pop_back();
    }
  }
  b.changed.notify_all();
  if (next.capacity() == 0) next.reserve(chunk_ + chunk_ / 4);
  buf_ = std::move(next);
}

void AtomicFileWriter::stop_behind() {
  if (!behind_ || !behind_->thread.joinable()) return;
  {
    std::lock_guard lock(behind_->mutex);
    behind_->done = true;
  }
  behind_->changed.notify_all();
  behind_->thread.join();
}

void AtomicFileWriter::flush() {
  if (behind_ && behind_->thread.joinable()) {
    if (!buf_.empty()) hand_over();
    return;
  }
  write_out(buf_);
  buf_.clear();
}

void AtomicFileWriter::write(std::string_view text) {
  if (behind_ && behind_->thread.joinable()) {  // every byte goes through the queue, in order
    buf_ += text;
    flush_if_full();
    return;
  }
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
  stop_behind();  // every chunk written: hash_, bytes_ and error_ are final
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
