#pragma once
// Outputs are written atomically: to a temporary file in the same directory, then renamed, so a
// reader never sees half a report and an interrupted run leaves the old file intact.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace lic::reports {

/// A file written atomically piece by piece, never held whole in memory: text appended to
/// buffer() goes out to `<path>.tmp.<pid>` in chunks (flush_if_full()), and commit() writes the
/// rest, syncs and renames it into place. Destroyed without a successful commit(), it removes
/// the temporary. Where the file system has O_TMPFILE (Linux: ext4, xfs, btrfs, tmpfs) the
/// temporary has no name until commit() links it as `<path>.tmp.<pid>` just before the rename,
/// so a writer killed by a signal (a long streamed run's trace.jsonl) leaves nothing behind;
/// elsewhere the named temporary is removed by the next writer of that path.
///
/// Written behind (`behind`): a second thread hashes and writes each full chunk while the caller
/// fills the next (at most kQueued chunks wait; the caller blocks beyond that). The bytes, their
/// order and their hash are the same; only the caller's thread fills chunks, so nothing in the
/// file depends on timing. A failed write is still reported by commit(); error() tells it only
/// before the first chunk goes out and after commit(). Where the file system allows it, that
/// thread writes around the page cache (O_DIRECT, kStageBytes at a time, the last partial block
/// through the cache): copying gigabytes of trace into the page cache cost more CPU than making
/// them; anything refused goes through the cache as before, and reports its error as before.
class AtomicFileWriter {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
  static constexpr std::size_t kBehindChunkBytes = std::size_t{128} << 10;  // stays in a core's cache
  static constexpr std::size_t kQueued = 16;
  static constexpr std::size_t kStageBytes = std::size_t{4} << 20;  // one write around the cache
  static constexpr std::size_t kBlock = 4096;                        // its alignment

  /// Creates parent directories and opens the temporary (after removing a killed writer's).
  explicit AtomicFileWriter(std::filesystem::path path, bool behind = false);
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  /// Not empty: the file could not be opened or written (commit() returns it too).
  const std::string& error() const { return error_; }
  /// Where the next bytes go; call flush_if_full() after appending.
  std::string& buffer() { return buf_; }
  void flush_if_full() {
    if (buf_.size() >= chunk_) flush();
  }
  /// Appends `text` (written straight through when it is larger than a chunk).
  void write(std::string_view text);
  /// Writes what is buffered, syncs, closes and renames into place. Returns an error message,
  /// empty on success.
  std::string commit();
  /// The same, renamed to `into` instead (in the same file system) rather than its path.
  std::string commit(const std::filesystem::path& into);
  /// The bytes written so far and their XXH3-128 (32 hex digits, as file_fingerprint reads it
  /// back): folded in as they go out, so the file need not be read again. After commit().
  std::uint64_t bytes_written() const { return bytes_; }
  std::string xxh3_128() const;

 private:
  struct Behind;
  void flush();
  void write_out(std::string_view bytes);
  void link_temporary();
  void write_all(std::string_view bytes);
  void write_staged(bool last);
  void hand_over();
  void write_behind();
  void stop_behind();

  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::string buf_;
  std::size_t chunk_ = kChunkBytes;  // kBehindChunkBytes when written behind
  std::string error_;
  int fd_ = -1;
  bool committed_ = false;
  bool unnamed_ = false;  ///< opened with O_TMPFILE: no name until commit()
  std::uint64_t bytes_ = 0;
  struct Hash;  // XXH3's streaming state (xxhash.h stays out of this header)
  struct FreeHash {
    void operator()(Hash* h) const;
  };
  std::unique_ptr<Hash, FreeHash> hash_;
  std::unique_ptr<Behind> behind_;  // the writing thread and its queue, when written behind
  struct FreeStage {
    void operator()(char* p) const;
  };
  std::unique_ptr<char, FreeStage> stage_;  // aligned, for O_DIRECT (the writing thread's)
  std::size_t staged_ = 0;
  bool direct_ = false;
};

/// The XXH3-128 of a file's bytes (32 hex digits, high half first, as xxhsum -H2 prints it),
/// and its size in `bytes`: what AtomicFileWriter::xxh3_128() folded in as it wrote.
std::string hash_file_xxh3_128(const std::filesystem::path& file, std::uint64_t& bytes);

/// Writes `content` to `path` atomically; creates parent directories. A `<path>.tmp.<pid>` left
/// beside it by a writer that was killed (its process is gone) is removed first. Returns an
/// error message, empty on success.
std::string write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Removes what a killed writer left beside `path`: each `<name>.tmp.<pid>` (a file or a
/// staging folder) whose process is gone. A live writer's (kill(pid, 0) finds it) is left alone.
void remove_stale_temporaries(const std::filesystem::path& path);

}  // namespace lic::reports
