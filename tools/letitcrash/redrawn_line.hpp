#pragma once
// A progress line on stderr for the long commands (shrink, explore): on a terminal one line
// redrawn in place, at most ten times a second; in a log, the caller decides when a plain line is
// worth printing (a CI log stays short).

#include <chrono>
#include <cstdio>
#include <string>

namespace lic::tools {

class RedrawnLine {
 public:
  /// `prefix` starts every line ("shrink: ").
  RedrawnLine(bool tty, std::string prefix) : tty_(tty), prefix_(std::move(prefix)) {}

  bool tty() const { return tty_; }

  /// On a terminal: redraws the line with `what`, unless it was drawn less than 100 ms ago and
  /// `now` is false. In a log: prints it as a line of its own.
  void draw(const std::string& what, bool now = false) {
    if (!tty_) {
      std::fputs((prefix_ + what + "\n").c_str(), stderr);
      return;
    }
    const Clock::time_point t = Clock::now();
    if (!now && t - drawn_ < std::chrono::milliseconds(100)) return;
    drawn_ = t;
    std::string line = "\r" + prefix_ + what;
    const std::size_t width = line.size();
    if (width < width_) line += std::string(width_ - width, ' ');  // wipe the longer line before
    width_ = width;
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  }

  /// Ends the redrawn line, so that what follows starts on a line of its own.
  void end() const {
    if (tty_ && width_ > 0) std::fputs("\n", stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool tty_;
  std::string prefix_;
  Clock::time_point drawn_{};
  std::size_t width_ = 0;
};

}  // namespace lic::tools
